package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func testPlan() Stage {
	return &testPlanStage{Described{Info{ID: "test_plan", Title: "Replan from nothing", Headline: true,
		Requirements: []string{"GAUNT-REPLAN-01"}, Needs: []engine.Capability{engine.ImportBlocks}, After: []string{"migrate"}}}}
}

type testPlanStage struct{ Described }

const importsFile = "gauntlet_imports.tf"

// Run deletes the state and has each engine rebuild it from one import
// block per live object: the plan must import every object and create or
// destroy nothing. Updates an import leaves behind (attributes a stock
// import cannot read back) are findings, recorded, not hidden.
func (s *testPlanStage) Run(ctx context.Context, r *Run, rec *Recorder) (err error) {
	// Each side imports its own objects: a name the server generated is
	// another on the oracle's cluster (the addresses are the same).
	importsOn := map[string][]engine.Import{}
	for _, sd := range r.Sides() {
		for _, o := range r.onSide(sd, r.Objects) {
			importsOn[sd.Name] = append(importsOn[sd.Name], engine.Import{To: o.Address, ID: importID(o)})
		}
	}
	imports := importsOn["subject"]
	// Whatever way the stage ends before the import apply rebuilt the
	// state - an error, a cancelled context, a panic - each side gets
	// the state it set aside back, or the stages after it and the
	// teardown would find none.
	aside := &statesAside{}
	defer func() { err = errors.Join(err, aside.putBack(ctx)) }()
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := aside.set(ctx, sd); err != nil {
			return fmt.Errorf("set state aside: %w", err)
		}
		return sd.Engine.WriteImports(importsFile, importsOn[sd.Name])
	}); err != nil {
		return err
	}
	// The whole plan (show -json): the residue below reads its values.
	subj, orc, err := r.planBoth(ctx, engine.PlanOptions{})
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	n := len(r.Objects)
	const (
		imported = "every object imported, none created or destroyed"
		same     = "same as the oracle"
		rebuilt  = "the import apply bound every object in the state"
		next     = "next plan empty"
	)
	assert := func(p *engine.Plan) error { return importsAll(p, imports) }
	rec.Check(imported, sides(imported, assert(subj), assert(orc)), fmt.Sprintf("%d to import on each side", n))
	rec.Check(same, onSubject(sameShape(subj, orc)), "stock's plan from the same position has the same shape")
	rec.Claim([]string{imported, same}, "with no state file and one import block per live object (%d), %s planned %s, stock %s on the oracle cluster the same",
		n, r.Subject.Engine.Engine.Profile.Name, subj.Counts, orc.Counts)
	if others := freshOthers(subj); len(others) > 0 {
		rec.Say("%d of the planned adds are resources of other providers, which hold no cluster object and cannot be imported, created afresh: %s",
			len(others), strings.Join(others, ", "))
	}
	if f := residue(subj); f != "" {
		rec.Say("the in-place updates are import residue, attributes no import can read back: %s", f)
	}

	dropped := imports[len(imports)-1]
	r.breakBoth(ctx, rec, Breaking{Name: "drop_import", Corruption: "drops the import block for " + dropped.To,
		Victim: dropped.To, Covers: []string{imported, same}, Predict: []result.Prediction{planPredict(dropped.To, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		own := importsOn[sd.Name]
		if err := corrupt(ctx, func() error { return sd.Engine.WriteImports(importsFile, own[:len(own)-1]) }); err != nil {
			return nil, err
		}
		p, err := sd.plan(ctx, planDefaults())
		var m Measured
		if err == nil {
			m = Measured{imported: assert(p), same: sameShape(p, plans[otherSide(sd)])}
		}
		return undoing(m, err, func() error { return sd.Engine.WriteImports(importsFile, own) })
	})

	// Rebuild the state for the stages that follow: apply the imports.
	a, o, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	aside.rebuilt()
	bound := func(ctx context.Context, sd *Side, applied engine.Applied) error {
		l, err := sd.Engine.StateList(ctx)
		if err != nil {
			return measure(sd, "state list", err)
		}
		var want []string
		for _, im := range imports {
			want = append(want, im.To)
		}
		return errors.Join(importedAll(applied, n), missingFrom(kubernetesOnly(l), want))
	}
	applied := map[string]engine.Applied{"subject": a, "oracle": o}
	rec.Check(rebuilt, r.both(ctx, func(ctx context.Context, sd *Side) error { return bound(ctx, sd, applied[sd.Name]) }), a.String()+" on each side")
	r.breakBoth(ctx, rec, Breaking{Name: "state_rm", Corruption: "removes " + dropped.To + " from the rebuilt state",
		Victim: dropped.To, Covers: []string{rebuilt}, Predict: []result.Prediction{{Address: dropped.To, Field: fieldState, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.unbound(ctx, dropped.To, func() (Measured, error) { return one(rebuilt, bound(ctx, sd, applied[sd.Name])), nil })
	})
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Engine.WriteImports(importsFile, nil) }); err != nil {
		return err
	}
	r.CheckPlanEmpty(ctx, rec, next, r.victim())
	rec.Claim([]string{rebuilt, next}, "applying the imports rebuilt the state (%s) and the next plan is empty", a)
	return nil
}

// importsAll asserts a plan imports every address of imports and creates
// or destroys nothing, naming each address that breaks it.
func importsAll(p *engine.Plan, imports []engine.Import) error {
	var fs []*result.Finding
	wanted := map[string]bool{}
	for _, im := range imports {
		wanted[im.To] = true
		c, ok := p.Find(im.To)
		switch {
		case !ok:
			fs = append(fs, planFinding(im.To, "import", ""))
		case !c.Importing:
			fs = append(fs, planFinding(im.To, "import", strings.Join(c.Actions, "+")))
		}
	}
	// Resources of other providers (a null_resource) cannot be imported
	// and hold no cluster object: they are created afresh, and only they.
	fresh := 0
	for _, c := range p.Actionable() {
		if !isKubernetes(c.Address) && len(c.Actions) == 1 && c.Actions[0] == "create" {
			fresh++
			continue
		}
		if !wanted[c.Address] && (slices.Contains(c.Actions, "create") || slices.Contains(c.Actions, "delete")) {
			fs = append(fs, planFinding(c.Address, "", strings.Join(c.Actions, "+")))
		}
	}
	if len(fs) == 0 && (p.Counts.Add != fresh || p.Counts.Destroy != 0) {
		fs = append(fs, &result.Finding{Address: "(the plan)", Field: fieldPlanCounts, Got: p.Counts.String(),
			Want: fmt.Sprintf("%d to import, %d to add (other providers), none to destroy", len(imports), fresh)})
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// freshOthers lists the creates of other providers' resources in a plan.
func freshOthers(p *engine.Plan) []string {
	var out []string
	for _, c := range p.Actionable() {
		if !isKubernetes(c.Address) && len(c.Actions) == 1 && c.Actions[0] == "create" {
			out = append(out, c.Address)
		}
	}
	slices.Sort(out)
	return out
}

func importedAll(a engine.Applied, n int) error {
	_, other := splitActed(a.Acted())
	if a.Imported != n || a.Added != len(other) || a.Destroyed != 0 {
		return &result.Finding{Address: "(the apply)", Field: "apply counts", Got: a.String(),
			Want: fmt.Sprintf("%d imported, %d added (other providers), none destroyed", n, len(other))}
	}
	return nil
}

// residue names the attributes each in-place update of an import plan
// would change.
func residue(p *engine.Plan) string {
	var parts []string
	for _, rc := range p.Raw.ResourceChanges {
		if rc.Change == nil || len(rc.Change.Actions) != 1 || string(rc.Change.Actions[0]) != "update" {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		var keys []string
		for k, v := range after {
			if fmt.Sprint(before[k]) != fmt.Sprint(v) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		parts = append(parts, rc.Address+" ("+strings.Join(keys, ", ")+")")
	}
	return strings.Join(parts, "; ")
}

// statesAside are the states the stage set aside, by side, until the
// import apply rebuilds them.
type statesAside struct {
	mu      sync.Mutex
	restore map[*Side]func(context.Context) error
	// done says the import apply rebuilt every side's state: from then
	// on the rebuilt state is the one the stages after this one use.
	done bool
}

// set sets sd's state aside and keeps the way back.
func (a *statesAside) set(ctx context.Context, sd *Side) error {
	restore, err := setStateAside(ctx, sd)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.restore == nil {
		a.restore = map[*Side]func(context.Context) error{}
	}
	a.restore[sd] = restore
	return nil
}

// rebuilt says the import apply rebuilt the state on both sides.
func (a *statesAside) rebuilt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
}

// putBack takes the import blocks away (an aborted stage leaves them
// behind otherwise) and, unless the state was rebuilt, gives each side
// the state it set aside. It works on after ctx is cancelled: the stage
// is aborting, and the state must come back all the same.
func (a *statesAside) putBack(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for sd, restore := range a.restore {
		if err := sd.Engine.WriteImports(importsFile, nil); err != nil {
			errs = append(errs, fmt.Errorf("%s: take the import blocks away: %w", sd.Name, err))
		}
		if a.done {
			continue
		}
		if err := restore(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: put the state set aside back: %w", sd.Name, err))
		}
	}
	a.restore = nil
	return errors.Join(errs...)
}

// setStateAside leaves the acted root with no state: its local file
// renamed, or - for records in the cluster - the record emptied in place
// (same lineage, next serial), as a state with nothing in it. It returns
// the way back: the file renamed back over whatever state a later call
// wrote, or the record's original bytes.
func setStateAside(ctx context.Context, sd *Side) (restore func(context.Context) error, err error) {
	if !sd.live() || sd.Records == nil {
		path := filepath.Join(sd.Root.Dir, "terraform.tfstate")
		aside := path + ".before-replan"
		if err := os.Rename(path, aside); err != nil {
			return nil, err
		}
		return func(context.Context) error { return os.Rename(aside, path) }, nil
	}
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	return recordstore.Rewrite(ctx, cs, storeOf(sd.Records), func(st map[string]any) error {
		serial, _ := st["serial"].(float64)
		st["serial"] = serial + 1
		st["resources"] = []any{}
		st["outputs"] = map[string]any{}
		return nil
	})
}
