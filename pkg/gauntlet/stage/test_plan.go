package stage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

func testPlan() Stage {
	return &testPlanStage{info{id: "test_plan", title: "Replan from nothing", headline: true,
		reqs: []string{"GAUNT-REPLAN-01"}, needs: []engine.Capability{engine.ImportBlocks}, after: []string{"migrate"}}}
}

type testPlanStage struct{ info }

const importsFile = "gauntlet_imports.tf"

// Run deletes the state and has each engine rebuild it from one import
// block per live object: the plan must import every object and create or
// destroy nothing. Updates an import leaves behind (attributes a stock
// import cannot read back) are findings, recorded, not hidden.
func (s *testPlanStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	var imports []engine.Import
	for _, o := range r.Objects {
		imports = append(imports, engine.Import{To: o.Address, ID: importID(o)})
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := os.Rename(filepath.Join(sd.Root.Dir, "terraform.tfstate"), filepath.Join(sd.Root.Dir, "terraform.tfstate.before-replan")); err != nil {
			return fmt.Errorf("set state aside: %w", err)
		}
		return sd.Engine.WriteImports(importsFile, imports)
	}); err != nil {
		return err
	}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	n := len(r.Objects)
	assert := func(p *engine.Plan, want int) error {
		if p.Counts.Import != want || p.Counts.Add != 0 || p.Counts.Destroy != 0 {
			return fmt.Errorf("planned %s, want %d to import and nothing created or destroyed", p.Counts, want)
		}
		return nil
	}
	if !rec.Check("every object imported, none created or destroyed", assert(subj, n), fmt.Sprintf("%d to import", n)) {
		return nil
	}
	rec.Check("same as the oracle", sameShape(subj, orc), "stock's plan from the same position has the same shape")
	rec.Say("with no state file and one import block per live object (%d), %s planned %s, stock %s on the oracle cluster the same",
		n, r.Subject.Engine.Engine.Profile.Name, subj.Counts, orc.Counts)
	if f := residue(subj); f != "" {
		rec.Say("the in-place updates are import residue, attributes no import can read back: %s", f)
	}

	dropped := imports[len(imports)-1]
	if err := rec.Break("drop_import", "drops the import block for "+dropped.To, func() (error, error) {
		if err := r.Subject.Engine.WriteImports(importsFile, imports[:len(imports)-1]); err != nil {
			return nil, err
		}
		p, err := r.Subject.plan(ctx, planDefaults())
		if werr := r.Subject.Engine.WriteImports(importsFile, imports); err == nil {
			err = werr
		}
		if err != nil {
			return nil, err
		}
		return assert(p, n), nil
	}); err != nil {
		return err
	}

	// Rebuild the state for the stages that follow: apply the imports.
	a, o, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	rec.Check("the import apply rebuilt the state", importedAll(a, n), a.String())
	rec.Check("the oracle's import apply too", importedAll(o, n), o.String())
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := sd.Engine.WriteImports(importsFile, nil); err != nil {
			return err
		}
		return sd.planEmpty(ctx)
	}); err != nil {
		rec.Check("next plan empty", err, "")
		return nil
	}
	rec.Check("next plan empty", nil, "after the import apply, on both sides")
	rec.Say("applying the imports rebuilt the state (%s) and the next plan is empty", a)
	return nil
}

func importedAll(a engine.Applied, n int) error {
	if a.Imported != n || a.Added != 0 || a.Destroyed != 0 {
		return fmt.Errorf("applied %s, want %d imported and nothing added or destroyed", a, n)
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
