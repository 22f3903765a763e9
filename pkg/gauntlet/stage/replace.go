package stage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

func day2Replace() Stage {
	return &replaceStage{info{id: "day2_replace", title: "Replace with create_before_destroy", headline: true, reqs: []string{"GAUNT-DAY2-CBD-01"}, after: []string{"migrate"}}}
}

type replaceStage struct{ info }

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
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plannedCBD := func(p *engine.Plan) error {
		if err := exactly(p, map[string]string{hashedAddr: "create+delete"}); err != nil {
			return err
		}
		if (p.Counts != engine.Counts{Add: 1, Destroy: 1}) {
			return fmt.Errorf("planned %s, want 1 to add and 1 to destroy", p.Counts)
		}
		return nil
	}
	if !rec.Check("planned as a create-before-destroy replace", plannedCBD(subj), subj.Counts.String()) {
		return nil
	}
	rec.Check("same as the oracle", sameShape(subj, orc), "")
	order := map[string][2]int{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Parallelism: 1})
		if err != nil {
			return err
		}
		created, destroying := applyOrder(a.Call.Output)
		r.mu.Lock()
		order[sd.Name] = [2]int{created, destroying}
		r.mu.Unlock()
		return nil
	}); err != nil {
		return err
	}
	createdFirst := func(o [2]int) error {
		if o[0] <= 0 || o[1] <= 0 {
			return fmt.Errorf("apply log lacks the create (line %d) or the deposed destroy (line %d)", o[0], o[1])
		}
		if o[0] > o[1] {
			return fmt.Errorf("the deposed destroy starts at line %d, before the creation completes at line %d", o[1], o[0])
		}
		return nil
	}
	so := order["subject"]
	if !rec.Check("creation completes before the deposed destroy starts", createdFirst(so), fmt.Sprintf("lines %d then %d", so[0], so[1])) {
		return nil
	}
	rec.Check("the oracle's apply has the same order", createdFirst(order["oracle"]), "")
	if err := rec.Break("destroy_first", "expects the old object's destroy to start before the new object's creation completes", func() (error, error) {
		return createdFirst([2]int{so[1], so[0]}), nil
	}); err != nil {
		return err
	}
	err = r.both(ctx, func(ctx context.Context, sd *Side) error {
		if u, err := sd.Get(ctx, newObj.Ref); err != nil || u == nil {
			return fmt.Errorf("%s missing (%v)", newObj.Ref, err)
		}
		if u, err := sd.Get(ctx, oldObj.Ref); err != nil || u != nil {
			return fmt.Errorf("%s survived (%v)", oldObj.Ref, err)
		}
		return sd.planEmpty(ctx)
	})
	if !rec.Check("the new object alone remains, next plan empty", err, "") {
		return nil
	}
	rec.Say("a create_before_destroy ConfigMap whose content-hashed name changes (%s -> %s) planned as a replace, create then destroy (%s), as stock's did; at -parallelism=1 the apply log shows %s's creation complete (line %d) before the deposed %s's destroy starts (line %d), the same order as stock's apply on the oracle cluster; %s alone remains and the next plan is empty",
		oldObj.Ref.Name, newObj.Ref.Name, subj.Counts, newObj.Ref.Name, so[0], oldObj.Ref.Name, so[1], newObj.Ref.Name)
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

func hashedObject(r *Run, content string) Object {
	h := sha256.Sum256([]byte(content))
	return Object{Address: hashedAddr, Type: "kubernetes_config_map_v1", Ref: estate.Object{
		Version: "v1", Kind: "ConfigMap", Namespace: r.Spec.Namespace, Name: r.Spec.Prefix + "-cfg-" + hex.EncodeToString(h[:])[:8]}}
}

// applyOrder returns the 1-based lines where the replacement's creation
// completed and where the deposed object's destroy started.
func applyOrder(out string) (created, destroying int) {
	for i, line := range strings.Split(out, "\n") {
		switch {
		case created == 0 && strings.HasPrefix(line, hashedAddr+": Creation complete"):
			created = i + 1
		case destroying == 0 && strings.HasPrefix(line, hashedAddr+" (deposed object") && strings.Contains(line, "Destroying..."):
			destroying = i + 1
		}
	}
	return created, destroying
}
