package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/inventory"
)

func greenfield() Stage {
	return &greenfieldStage{info{id: "greenfield", title: "Greenfield apply", headline: true, reqs: []string{"GAUNT-GREEN-01"}, after: []string{"day2_teardown"}}}
}

type greenfieldStage struct{ info }

// Run applies the estate's original root fresh with the engine under test
// on its now empty cluster, with no state: the objects it creates must
// match, object by object, what stock's cold deploy created on the oracle
// cluster.
func (s *greenfieldStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	want := r.coldInventory()
	if want == nil {
		return fmt.Errorf("no cold-deploy inventory of the oracle to compare with")
	}
	root, err := r.Fresh(r.Subject, "greenfield")
	if err != nil {
		return err
	}
	ws, err := r.Subject.Workspace(root.Dir)
	if err != nil {
		return err
	}
	if _, err := ws.Init(ctx); err != nil {
		return err
	}
	a, err := ws.Apply(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	// Whatever the verdict, the fresh estate leaves with the stage.
	defer func() {
		if _, err := ws.Apply(context.WithoutCancel(ctx), engine.ApplyOptions{Destroy: true}); err != nil {
			rec.Say("cleanup destroy failed: %v", err)
		}
	}()
	n := len(want.Objects) + len(want.Missing)
	rec.Check("created every object", func() error {
		if a.Added != n || a.Changed != 0 || a.Destroyed != 0 {
			return fmt.Errorf("applied %s, want %d added", a, n)
		}
		return nil
	}(), a.String())
	var refs []inventory.Ref
	for _, u := range want.Objects {
		refs = append(refs, inventory.RefOf(u))
	}
	got, err := inventory.Read(ctx, r.Subject.Cluster.RESTConfig(), inventory.Selection{Refs: refs})
	if err != nil {
		return err
	}
	match := func(want inventory.Inventory) error {
		rep := inventory.Compare(want, got)
		if !rep.Equal() {
			return fmt.Errorf("%s", rep)
		}
		return nil
	}
	if !rec.Check("matches stock's cold deploy object by object", match(*want), fmt.Sprintf("%d objects", len(want.Objects))) {
		return nil
	}
	p, err := ws.Plan(ctx, planDefaults())
	if err != nil {
		return err
	}
	rec.Check("replanned empty", empty(p), p.Counts.String())
	rec.Say("the estate's original root applied fresh by %s with no state on its emptied cluster (%s); every object - %s - matches stock's cold deploy on the oracle cluster object by object, labels and annotations included, server-set fields and defaults aside; replanned empty",
		r.Subject.Engine.Engine.Profile, a, describe(r.coldObjects))

	return rec.Break("drop_expected", "drops "+refs[len(refs)-1].String()+" from the expected inventory", func() (error, error) {
		short := *want
		short.Objects = short.Objects[:len(short.Objects)-1]
		return match(short), nil
	})
}
