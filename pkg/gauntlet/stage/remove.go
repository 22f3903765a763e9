package stage

import (
	"context"
	"fmt"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func day2Remove() Stage {
	return &removeStage{Described{Info{ID: "day2_remove", Title: "Remove a block", Headline: true, Requirements: []string{"GAUNT-DAY2-REMOVE-01"}, After: []string{"migrate"}}}}
}

type removeStage struct{ Described }

// removeEdit takes address out of the root with the HCL writer: one
// instance out of its block's literal count or for_each when the address
// has an instance key, else the whole block (in the root or in the local
// module its calls lead to).
func removeEdit(root *estate.Root, address string) error {
	a, err := estate.ParseAddress(address)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if a.Key.Set {
		return root.RemoveInstance(address)
	}
	return root.RemoveResource(address)
}

// Run deletes one resource block (or one instance of it): exactly one destroy, the object gone,
// its neighbour untouched, the next plan empty.
func (s *removeStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	rm, err := r.removePlan(ctx)
	if err != nil {
		return err
	}
	saved := map[string]estate.Saved{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		s, err := sd.Root.Save()
		if err != nil {
			return err
		}
		r.mu.Lock()
		saved[sd.Name] = s
		r.mu.Unlock()
		if rm.File != "" || rm.Block != "" {
			// A block estate.yaml locates itself (in a local module).
			block := rm.Block
			if block == "" {
				block = rm.Address
			}
			if err := sd.Root.RemoveBlockIn(rm.File, block); err != nil {
				return err
			}
			// The references estate.yaml names go with the block.
			for _, e := range rm.Edits {
				if err := sd.Root.Edit(e); err != nil {
					return fmt.Errorf("remove: a reference to the removed block: %w", err)
				}
			}
			return nil
		}
		return removeEdit(sd.Root, rm.Address)
	}); err != nil {
		return err
	}
	want := map[string]string{rm.Address: "delete"}
	const (
		one1      = "exactly one destroy"
		same      = "same as the oracle"
		destroyed = "the apply destroyed exactly the removed block's object"
		gone      = "the object is gone"
		neighbour = "the neighbour is untouched: same uid and resourceVersion"
		next      = "next plan empty"
	)
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	rec.Check(one1, sides(one1, exactly(subj, want), exactly(orc, want)), subj.Counts.String())
	rec.Check(same, onSubject(sameShape(subj, orc)), "stock's plan for the same removal is the same")
	r.breakBoth(ctx, rec, Breaking{Name: "keep_block", Corruption: "keeps the block", Victim: rm.Address, Covers: []string{one1, same},
		Predict: []result.Prediction{planPredict(rm.Address, nothing)}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			after, err := sd.Root.Save()
			if err != nil {
				return nil, err
			}
			if err := corrupt(ctx, func() error { return sd.Root.Put(saved[sd.Name]) }); err != nil {
				return nil, err
			}
			p, err := sd.plan(ctx, planDefaults())
			var m Measured
			if err == nil {
				m = Measured{one1: exactly(p, want), same: sameShape(p, plans[otherSide(sd)])}
			}
			return undoing(m, err, func() error { return sd.Root.Put(after) })
		})
	destroyedOne := func(a engine.Applied) error { return actedExactly(a, map[string]string{rm.Address: "destruction"}) }
	var mu sync.Mutex
	copies := map[string]*unstructured.Unstructured{}
	nb := map[string]objVersions{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		u, err := sd.Get(ctx, rm.Object)
		if err != nil || u == nil {
			return fmt.Errorf("read %s before the apply: %v", rm.Object, cmpErr(err, "not found"))
		}
		v, err := versions(ctx, sd, []Object{{Ref: rm.Neighbour}})
		mu.Lock()
		copies[sd.Name], nb[sd.Name] = u, v
		mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	r.breakBoth(ctx, rec, Breaking{Name: "state_rm", Corruption: "removes " + rm.Address + " from the state before the apply",
		Victim: rm.Address, Covers: []string{destroyed}, Predict: []result.Prediction{appliedPredict(rm.Address, nothing)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		m, err := sd.unbound(ctx, rm.Address, func() (Measured, error) {
			a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{})
			return one(destroyed, destroyedOne(a)), err
		})
		// An apply that destroyed the object after all (the corruption
		// skipped, or an engine that ignores its state) did the stage's own
		// step: the object comes back, so the stage's apply meets the world
		// it was written for.
		return undoing(m, err, func() error {
			u, err := sd.Get(ctx, rm.Object)
			if err != nil || exists(u) {
				return err
			}
			return sd.Recreate(ctx, rm.Object, copies[sd.Name])
		})
	})
	a, o, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	rec.Check(destroyed, sides(destroyed, destroyedOne(a), destroyedOne(o)), a.String())
	isGone := func(ctx context.Context, sd *Side) error {
		u, err := sd.Get(ctx, rm.Object)
		if err != nil {
			return err
		}
		if exists(u) {
			return &result.Finding{Address: rm.Address, Object: rm.Object.String(), Field: fieldExists, Want: absent, Got: present}
		}
		return nil
	}
	rec.Check(gone, r.both(ctx, isGone), "read on both clusters")
	same2 := func(ctx context.Context, sd *Side) error {
		v, err := versions(ctx, sd, []Object{{Ref: rm.Neighbour}})
		if err != nil {
			return err
		}
		return sameVersions(nb[sd.Name], v)
	}
	rec.Check(neighbour, r.both(ctx, same2), rm.Neighbour.String())
	r.breakBoth(ctx, rec, Breaking{Name: "recreate", Corruption: "creates " + rm.Object.String() + " again out of band",
		Victim: rm.Object.String(), Covers: []string{gone}, Predict: []result.Prediction{{Object: rm.Object.String(), Field: fieldExists, Got: present}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := corrupt(ctx, func() error { return sd.Recreate(ctx, rm.Object, copies[sd.Name]) }); err != nil {
			return nil, err
		}
		m := one(gone, isGone(ctx, sd))
		return undoing(m, nil, func() error { return sd.Delete(ctx, rm.Object) })
	})
	r.breakBoth(ctx, rec, Breaking{Name: "stray_label", Corruption: "labels the neighbour " + rm.Neighbour.String() + " out of band",
		Victim: rm.Neighbour.String(), Covers: []string{neighbour},
		Predict: []result.Prediction{{Object: rm.Neighbour.String(), Field: fieldVersion, Got: moved}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, rm.Neighbour, func() (Measured, error) { return one(neighbour, same2(ctx, sd)), nil })
	})
	var kept []Object
	for _, o := range r.Objects {
		if o.Address != rm.Address {
			kept = append(kept, o)
		}
	}
	r.Objects = kept
	r.CheckPlanEmpty(ctx, rec, next, r.victim())
	rec.Claim([]string{one1, same}, "deleting %s's block proposed exactly one destroy (%s), as stock's plan did on the oracle cluster", rm.Address, subj.Counts)
	rec.Claim([]string{destroyed, gone, neighbour, next}, "the apply destroyed exactly %s (%s), %s is gone, %s keeps its uid and resourceVersion, and the next plan is empty",
		rm.Address, a, rm.Object, rm.Neighbour)
	return nil
}
