package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

func day2Rename() Stage {
	return &renameStage{info{id: "day2_rename", title: "Rename", headline: true,
		reqs: []string{"GAUNT-DAY2-RENAME-01"}, needs: []engine.Capability{engine.MovedBlocks}, after: []string{"migrate"}}}
}

type renameStage struct{ info }

const movedFile = "gauntlet_moved.tf"

// Run renames a resource with a moved block (its references following):
// zero churn on both sides, the move recorded at the new address.
func (s *renameStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	rn := r.Spec.Rename
	if rn == nil {
		return fmt.Errorf("the estate has no rename section")
	}
	moved := fmt.Sprintf("# Written by gauntlet's rename stage.\nmoved {\n  from = %s\n  to   = %s\n}\n", rn.From, rn.To)
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		for _, e := range rn.Edits {
			if err := sd.Root.Edit(e); err != nil {
				return fmt.Errorf("rename edit: %w", err)
			}
		}
		return sd.Root.WriteFile(movedFile, moved)
	}); err != nil {
		return err
	}
	assert := func(p *engine.Plan) error {
		if err := empty(p); err != nil {
			return fmt.Errorf("churn: %w", err)
		}
		c, ok := p.Find(rn.To)
		if !ok || c.PreviousAddress != rn.From {
			return fmt.Errorf("the plan records no move %s -> %s", rn.From, rn.To)
		}
		return nil
	}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("zero churn", assert(subj), subj.Counts.String()) {
		return nil
	}
	rec.Check("same as the oracle", assert(orc), "stock's plan for the same moved block is zero churn too")
	refs := 0
	for _, e := range rn.Edits[1:] {
		refs += max(e.Count, 1)
	}
	rec.Say("moved block %s -> %s, with its %d references following: no add, no change, no destroy (%s) on both sides, the instance moved in state only, as stock's plan for the same moved block on the oracle cluster",
		rn.From, rn.To, refs, subj.Counts)

	if err := rec.Break("rename_object", "renames the object's own metadata.name instead, a real identity change", func() (error, error) {
		before, err := r.Subject.Root.Snapshot()
		if err != nil {
			return nil, err
		}
		for _, e := range rn.Break {
			if err := r.Subject.Root.Edit(e); err != nil {
				r.Subject.Root.Restore(before)
				return nil, err
			}
		}
		p, err := r.Subject.plan(ctx, planDefaults())
		if rerr := r.Subject.Root.Restore(before); err == nil {
			err = rerr
		}
		if err != nil {
			return nil, err
		}
		return assert(p), nil
	}); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	for i := range r.Objects {
		if r.Objects[i].Address == rn.From {
			r.Objects[i].Address = rn.To
		}
	}
	err = r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.planEmpty(ctx) })
	rec.Check("next plan empty", err, "after applying the move")
	return nil
}
