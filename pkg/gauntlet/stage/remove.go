package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

func day2Remove() Stage {
	return &removeStage{info{id: "day2_remove", title: "Remove a block", headline: true, reqs: []string{"GAUNT-DAY2-REMOVE-01"}, after: []string{"migrate"}}}
}

type removeStage struct{ info }

// Run deletes one resource block: exactly one destroy, the object gone,
// its neighbour untouched, the next plan empty.
func (s *removeStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	rm := r.Spec.Remove
	if rm == nil {
		return fmt.Errorf("the estate has no remove section")
	}
	before, err := r.Subject.Root.Snapshot()
	if err != nil {
		return err
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.RemoveBlock(rm.Address) }); err != nil {
		return err
	}
	want := map[string]string{rm.Address: "delete"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("exactly one destroy", exactly(subj, want), subj.Counts.String()) {
		return nil
	}
	rec.Check("same as the oracle", sameShape(subj, orc), "stock's plan for the same removal is the same")
	if err := rec.Break("keep_block", "keeps the block", func() (error, error) {
		after, err := r.Subject.Root.Snapshot()
		if err != nil {
			return nil, err
		}
		if err := r.Subject.Root.Restore(before); err != nil {
			return nil, err
		}
		p, err := r.Subject.plan(ctx, planDefaults())
		if rerr := r.Subject.Root.Restore(after); err == nil {
			err = rerr
		}
		if err != nil {
			return nil, err
		}
		return exactly(p, want), nil
	}); err != nil {
		return err
	}
	a, _, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	err = r.both(ctx, func(ctx context.Context, sd *Side) error {
		if u, err := sd.Get(ctx, rm.Object); err != nil || u != nil {
			return fmt.Errorf("%s still exists after the destroy (%v)", rm.Object, err)
		}
		if u, err := sd.Get(ctx, rm.Neighbour); err != nil || u == nil {
			return fmt.Errorf("neighbour %s is gone (%v)", rm.Neighbour, err)
		}
		return sd.planEmpty(ctx)
	})
	if !rec.Check("object gone, neighbour untouched, next plan empty", err, "") {
		return nil
	}
	var kept []Object
	for _, o := range r.Objects {
		if o.Address != rm.Address {
			kept = append(kept, o)
		}
	}
	r.Objects = kept
	rec.Say("deleting %s's block proposed exactly one destroy (%s), as stock's plan did on the oracle cluster; applied (%s), %s is gone, %s untouched, and the next plan is empty",
		rm.Address, subj.Counts, a, rm.Object, rm.Neighbour)
	return nil
}
