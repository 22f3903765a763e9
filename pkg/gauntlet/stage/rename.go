package stage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gauntlet-k8s/gauntlet/internal/derive"
	"github.com/gauntlet-k8s/gauntlet/internal/hclblock"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func day2Rename() Stage {
	return &renameStage{Described{Info{ID: "day2_rename", Title: "Rename", Headline: true,
		Requirements: []string{"GAUNT-DAY2-RENAME-01"}, Needs: []engine.Capability{engine.MovedBlocks}, After: []string{"migrate"}}}}
}

type renameStage struct{ Described }

const movedFile = "gauntlet_moved.tf"

// Run renames a resource with a moved block (its references following):
// zero churn on both sides, the move recorded at the new address.
func (s *renameStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	rn, err := r.renamePlan(ctx)
	if err != nil {
		return err
	}
	// A written rename is text edits with counts; a derived one rewrites
	// the block's address and every reference with the HCL writer, each
	// side reporting how many references followed.
	movedTF, err := hclblock.Moved(rn.From, rn.To)
	if err != nil {
		return err
	}
	movedTF = "# Written by gauntlet's rename stage.\n" + movedTF
	followed := map[string]int{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		n := 0
		if len(rn.Edits) == 0 {
			var err error
			// The block is renamed; the moved block names the instance.
			if n, err = sd.Root.RenameResource(estate.BlockOf(rn.From), estate.BlockOf(rn.To)); err != nil {
				return fmt.Errorf("rename: %w", err)
			}
		}
		for _, e := range rn.Edits {
			if err := sd.Root.Edit(e); err != nil {
				return fmt.Errorf("rename edit: %w", err)
			}
		}
		r.mu.Lock()
		followed[sd.Name] = n
		r.mu.Unlock()
		return sd.Root.WriteFile(movedFile, movedTF)
	}); err != nil {
		return err
	}
	if followed["subject"] != followed["oracle"] {
		return fmt.Errorf("rename: the HCL writer rewrote %d references on the subject's root and %d on the oracle's", followed["subject"], followed["oracle"])
	}
	assert := func(p *engine.Plan) error {
		churn := empty(p)
		if c, ok := p.Find(rn.To); !ok || c.PreviousAddress != rn.From {
			got := nothing
			if ok && c.PreviousAddress != "" {
				got = c.PreviousAddress
			}
			return errors.Join(churn, &result.Finding{Address: rn.To, Field: "moved from", Want: rn.From, Got: got})
		}
		return churn
	}
	const (
		zero      = "zero churn"
		oracleZ   = "the oracle's plan is zero churn too"
		untouched = "the apply moved it in state only: nothing acted on, same uid and resourceVersion"
		moved     = "the state holds the object at the new address only"
		next      = "next plan empty"
	)
	var obj Object
	for _, o := range r.Objects {
		if o.Address == rn.From {
			obj = o
		}
	}
	if obj.Address == "" {
		return fmt.Errorf("rename: %s is not among the estate's objects", rn.From)
	}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	rec.Check(zero, assert(subj), subj.Counts.String())
	rec.Check(oracleZ, assert(orc), orc.Counts.String())
	refs := followed["subject"]
	if len(rn.Edits) > 0 {
		for _, e := range rn.Edits[1:] {
			refs += max(e.Count, 1)
		}
	}
	rec.Claim([]string{zero, oracleZ}, "moved block %s -> %s, with its %d references following: no add, no change, no destroy (%s) on both sides, as stock's plan for the same moved block on the oracle cluster",
		rn.From, rn.To, refs, subj.Counts)
	r.breakBoth(ctx, rec, Breaking{Name: "rename_object", Corruption: "renames the object's own metadata.name instead, a real identity change",
		Victim: rn.To, Covers: []string{zero}, OracleCovers: []string{oracleZ},
		// A new metadata.name replaces the object, in either order.
		Predict: []result.Prediction{planPredict(rn.To, "delete+create"), planPredict(rn.To, "create+delete")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		before, err := sd.Root.Save()
		if err != nil {
			return nil, err
		}
		restore := func() error { return sd.Root.Put(before) }
		if len(rn.Break) == 0 {
			if err := corrupt(ctx, func() error { return sd.Root.SuffixName(rn.To, derive.IdentitySuffix) }); err != nil {
				return undoing(nil, err, restore)
			}
		}
		for _, e := range rn.Break {
			if err := corrupt(ctx, func() error { return sd.Root.Edit(e) }); err != nil {
				return undoing(nil, err, restore)
			}
		}
		p, err := sd.plan(ctx, planDefaults())
		var m Measured
		if err == nil {
			m = Measured{zero: assert(p), oracleZ: assert(p)}
		}
		return undoing(m, err, restore)
	})

	before, err := r.versionsBoth(ctx, []Object{obj})
	if err != nil {
		return err
	}
	a, o, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	applied := map[string]engine.Applied{"subject": a, "oracle": o}
	stateOnly := func(ctx context.Context, sd *Side) error {
		after, err := versions(ctx, sd, []Object{obj})
		if err != nil {
			return err
		}
		return errors.Join(appliedNothing(applied[sd.Name]), sameVersions(before[sd.Name], after))
	}
	rec.Check(untouched, r.both(ctx, stateOnly), obj.Ref.String()+" on both clusters")
	atNew := func(ctx context.Context, sd *Side) error {
		l, err := sd.Engine.StateList(ctx)
		if err != nil {
			return measure(sd, "state list", err)
		}
		var fs []*result.Finding
		if !slices.Contains(l, rn.To) {
			fs = append(fs, &result.Finding{Address: rn.To, Object: obj.Ref.String(), Field: fieldState, Want: present, Got: absent})
		}
		if slices.Contains(l, rn.From) {
			fs = append(fs, &result.Finding{Address: rn.From, Object: obj.Ref.String(), Field: fieldState, Want: absent, Got: present})
		}
		return result.Findings(fs...)
	}
	rec.Check(moved, r.both(ctx, atNew), "state list on both sides")
	for i := range r.Objects {
		if r.Objects[i].Address == rn.From {
			r.Objects[i].Address = rn.To
		}
	}
	r.breakBoth(ctx, rec, Breaking{Name: "stray_label", Corruption: "labels " + obj.Ref.String() + " out of band",
		Victim: obj.Ref.String(), Covers: []string{untouched}, Predict: []result.Prediction{versionPredict(obj)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, obj.Ref, func() (Measured, error) { return one(untouched, stateOnly(ctx, sd)), nil })
	})
	r.breakBoth(ctx, rec, Breaking{Name: "state_rm", Corruption: "removes " + rn.To + " from the state",
		Victim: rn.To, Covers: []string{moved}, Predict: []result.Prediction{{Address: rn.To, Field: fieldState, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.unbound(ctx, rn.To, func() (Measured, error) { return one(moved, atNew(ctx, sd)), nil })
	})
	r.CheckPlanEmpty(ctx, rec, next, r.victim())
	rec.Claim([]string{untouched, moved, next}, "the apply moved %s in state only (%s): %s keeps its uid and resourceVersion, the state holds it at %s alone, and the next plan is empty", rn.From, a, obj.Ref, rn.To)
	return nil
}
