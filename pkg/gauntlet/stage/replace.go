package stage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func day2Replace() Stage {
	return &replaceStage{Described{Info{ID: "day2_replace", Title: "Replace with create_before_destroy", Headline: true, Requirements: []string{"GAUNT-DAY2-CBD-01"}, After: []string{"migrate"}}}}
}

type replaceStage struct{ Described }

const replaceFileName = "gauntlet_replace.tf"
const hashedAddr = "kubernetes_config_map_v1.hashed"

// Run changes the content of a create_before_destroy ConfigMap whose name
// is a hash of its content: a replace whose new object must be created
// before the old one is destroyed, read from the apply log at
// -parallelism=1.
func (s *replaceStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	write := func(content string) error {
		return r.both(ctx, func(ctx context.Context, sd *Side) error {
			return sd.Root.WriteFile(replaceFileName, replaceFile(r, content))
		})
	}
	if err := write("a"); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	if err := write("b"); err != nil {
		return err
	}
	oldObj, newObj := hashedObject(r, "a"), hashedObject(r, "b")
	const (
		planned     = "planned as a create-before-destroy replace"
		same        = "same as the oracle"
		order       = "creation completes before the deposed destroy starts"
		oracleOrder = "the oracle's apply has the same order"
		alone       = "the new object alone remains"
		next        = "next plan empty"
	)
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	plannedCBD := func(p *engine.Plan) error { return replacedAs(p, hashedAddr, "create+delete") }
	rec.Check(planned, sides(planned, plannedCBD(subj), plannedCBD(orc)), subj.Counts.String())
	rec.Check(same, onSubject(sameShape(subj, orc)), "")
	orderOf := func(ctx context.Context, sd *Side) ([2]int, error) {
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Parallelism: 1})
		if err != nil {
			return [2]int{}, err
		}
		created, destroying := applyOrder(a.Call.Output)
		return [2]int{created, destroying}, nil
	}
	orders := map[string][2]int{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		o, err := orderOf(ctx, sd)
		r.mu.Lock()
		orders[sd.Name] = o
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	so := orders["subject"]
	rec.Check(order, createdFirst(so), fmt.Sprintf("lines %d then %d", so[0], so[1]))
	rec.Check(oracleOrder, createdFirst(orders["oracle"]), "")
	if err := r.checkReplaced(ctx, rec, alone, oldObj, newObj); err != nil {
		return err
	}
	r.CheckPlanEmpty(ctx, rec, next, newObj)
	rec.Claim([]string{planned, same}, "a create_before_destroy ConfigMap whose content-hashed name changes (%s -> %s) planned as a replace, create then destroy (%s), as stock's did",
		oldObj.Ref.Name, newObj.Ref.Name, subj.Counts)
	rec.Claim([]string{order, oracleOrder, alone, next}, "at -parallelism=1 the apply log shows %s's creation complete (line %d) before the deposed %s's destroy starts (line %d), the same order as stock's apply on the oracle cluster; %s alone remains and the next plan is empty",
		newObj.Ref.Name, so[0], oldObj.Ref.Name, so[1], newObj.Ref.Name)

	// The same change without create_before_destroy: a plain replace,
	// destroy first, which every check above must catch.
	r.breakBoth(ctx, rec, Breaking{Name: "no_create_before_destroy", Corruption: "makes the next content change without create_before_destroy",
		Victim: hashedAddr, Covers: []string{planned, same, order}, OracleCovers: []string{oracleOrder},
		Predict: []result.Prediction{planPredict(hashedAddr, "delete+create"), {Address: hashedAddr, Field: fieldOrder, Got: destroyFirst}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		tf := replaceFile(r, "c")
		_ = corrupt(ctx, func() error {
			tf = strings.Replace(tf, "create_before_destroy = true", "create_before_destroy = false", 1)
			return nil
		})
		if err := sd.Root.WriteFile(replaceFileName, tf); err != nil {
			return nil, err
		}
		p, err := sd.plan(ctx, planDefaults())
		if err != nil {
			return nil, err
		}
		o, err := orderOf(ctx, sd)
		if err != nil {
			return nil, err
		}
		return Measured{planned: plannedCBD(p), same: sameShape(p, plans[otherSide(sd)]), order: createdFirst(o), oracleOrder: createdFirst(o)}, nil
	})
	// The addition leaves with its block.
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.RemoveFile(replaceFileName) }); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	rec.Say("the block is removed from both roots afterwards")
	return nil
}

// createdFirst asserts the replacement's creation completed before the
// old object's destroy started, from the 1-based lines of the apply log.
func createdFirst(o [2]int) error {
	lines := fmt.Sprintf("creation complete at line %d, destroy starts at line %d", o[0], o[1])
	switch {
	case o[0] <= 0 || o[1] <= 0:
		return &result.Finding{Address: hashedAddr, Field: fieldOrder, Want: createFirst, Got: "not both in the apply log", Detail: lines}
	case o[0] > o[1]:
		return &result.Finding{Address: hashedAddr, Field: fieldOrder, Want: createFirst, Got: destroyFirst, Detail: lines}
	}
	return nil
}

// fieldOrder is the order of a replacement's create and destroy in the
// apply log.
const (
	fieldOrder   = "apply order"
	createFirst  = "creation completes before the destroy starts"
	destroyFirst = "the destroy starts first"
)

func hashedObject(r *Run, content string) Object {
	return hashedObjectOf(r, hashedAddr, "cfg", content)
}

// hashedObjectOf is the ConfigMap hashedFile writes at addr.
func hashedObjectOf(r *Run, addr, part, content string) Object {
	h := sha256.Sum256([]byte(content))
	return Object{Address: addr, Type: "kubernetes_config_map_v1", Ref: estate.Object{
		Version: "v1", Kind: "ConfigMap", Namespace: r.Spec.Namespace, Name: r.Spec.Prefix + "-" + part + "-" + hex.EncodeToString(h[:])[:8]}}
}

// applyOrder returns the 1-based lines where the replacement's creation
// completed and where the old object's destroy (deposed, under
// create_before_destroy) started.
func applyOrder(out string) (created, destroying int) {
	for i, line := range strings.Split(out, "\n") {
		switch {
		case created == 0 && strings.HasPrefix(line, hashedAddr+": Creation complete"):
			created = i + 1
		case destroying == 0 && strings.HasPrefix(line, hashedAddr) && strings.Contains(line, "Destroying..."):
			destroying = i + 1
		}
	}
	return created, destroying
}

// replacedAs checks that a plan replaces addr alone, in the order actions
// names ("create+delete" or "delete+create"), and counts it as one add and
// one destroy.
func replacedAs(p *engine.Plan, addr, actions string) error {
	if err := exactly(p, map[string]string{addr: actions}); err != nil {
		return err
	}
	if (p.Counts != engine.Counts{Add: 1, Destroy: 1}) {
		return &result.Finding{Address: addr, Field: fieldPlanCounts, Want: "1 to add, 1 to destroy", Got: p.Counts.String()}
	}
	return nil
}
