package stage

import (
	"context"
	"errors"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func day2Count() Stage {
	return &countStage{Described{Info{ID: "day2_count", Title: "Change count", Headline: true, Requirements: []string{"GAUNT-DAY2-COUNT-01"}, After: []string{"migrate"}}}}
}

type countStage struct{ Described }

const countFileName = "gauntlet_count.tf"

// Run adds a two-instance count beside the estate, scales it to one (the
// higher index must go, the lower stay untouched) and back to two.
func (s *countStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	setCount := func(n int) error {
		return r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.WriteFile(countFileName, countFile(r, n)) })
	}
	if err := setCount(2); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	s0, s1 := shardObject(r, 0), shardObject(r, 1)
	if err := setCount(1); err != nil {
		return err
	}
	const (
		down     = "2 -> 1 destroys exactly the higher index"
		downSame = "2 -> 1 same as the oracle"
		higher   = "the higher index is gone"
		lower    = "the lower index is untouched: same uid and resourceVersion"
		up       = "1 -> 2 creates exactly the higher index"
		upSame   = "1 -> 2 same as the oracle"
		next     = "next plan empty"
	)
	wantDown := map[string]string{s1.Address: "delete"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	rec.Check(down, sides(down, exactly(subj, wantDown), exactly(orc, wantDown)), subj.Counts.String())
	rec.Check(downSame, onSubject(sameShape(subj, orc)), "")
	// With the higher index unbound, 2 -> 1 has nothing to destroy.
	r.breakBoth(ctx, rec, Breaking{Name: "unbind_higher", Corruption: "removes " + s1.Address + " from the state before the 2 -> 1 plan",
		Victim: s1.Address, Covers: []string{down, downSame}, Predict: []result.Prediction{planPredict(s1.Address, nothing)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.unbound(ctx, s1.Address, func() (Measured, error) {
			p, err := sd.plan(ctx, planDefaults())
			if err != nil {
				return nil, err
			}
			return Measured{down: exactly(p, wantDown), downSame: sameShape(p, plans[otherSide(sd)])}, nil
		})
	})
	var mu sync.Mutex
	lowBefore := map[string]objVersions{}
	higherCopy := map[string]*unstructured.Unstructured{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		v, err := versions(ctx, sd, []Object{s0})
		u, gerr := sd.Get(ctx, s1.Ref)
		mu.Lock()
		lowBefore[sd.Name], higherCopy[sd.Name] = v, u
		mu.Unlock()
		return errors.Join(err, gerr)
	}); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	isGone := func(ctx context.Context, sd *Side) error {
		u, err := sd.Get(ctx, s1.Ref)
		if err != nil {
			return err
		}
		if exists(u) {
			return &result.Finding{Address: s1.Address, Object: s1.Ref.String(), Field: fieldExists, Want: absent, Got: present}
		}
		return nil
	}
	untouched := func(ctx context.Context, sd *Side) error {
		v, err := versions(ctx, sd, []Object{s0})
		if err != nil {
			return err
		}
		return sameVersions(lowBefore[sd.Name], v)
	}
	rec.Check(higher, r.both(ctx, isGone), s1.Ref.String())
	rec.Check(lower, r.both(ctx, untouched), s0.Ref.String())
	r.breakBoth(ctx, rec, Breaking{Name: "recreate_higher", Corruption: "creates " + s1.Ref.String() + " again out of band",
		Victim: s1.Ref.String(), Covers: []string{higher}, Predict: []result.Prediction{existsPredict(s1, present)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := corrupt(ctx, func() error { return sd.Recreate(ctx, s1.Ref, higherCopy[sd.Name]) }); err != nil {
			return nil, err
		}
		return undoing(one(higher, isGone(ctx, sd)), nil, func() error { return sd.Delete(ctx, s1.Ref) })
	})
	r.breakBoth(ctx, rec, Breaking{Name: "touch_lower", Corruption: "labels " + s0.Ref.String() + " out of band",
		Victim: s0.Ref.String(), Covers: []string{lower}, Predict: []result.Prediction{versionPredict(s0)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, s0.Ref, func() (Measured, error) { return one(lower, untouched(ctx, sd)), nil })
	})
	if err := setCount(2); err != nil {
		return err
	}
	wantUp := map[string]string{s1.Address: "create"}
	subj2, orc2, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans2 := map[string]*engine.Plan{"subject": subj2, "oracle": orc2}
	rec.Check(up, sides(up, exactly(subj2, wantUp), exactly(orc2, wantUp)), subj2.Counts.String())
	rec.Check(upSame, onSubject(sameShape(subj2, orc2)), "")
	// With the lower index unbound, 1 -> 2 must create it too.
	r.breakBoth(ctx, rec, Breaking{Name: "unbind_lower", Corruption: "removes " + s0.Address + " from the state before the 1 -> 2 plan",
		Victim: s0.Address, Covers: []string{up, upSame}, Predict: []result.Prediction{planPredict(s0.Address, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.unbound(ctx, s0.Address, func() (Measured, error) {
			p, err := sd.plan(ctx, planDefaults())
			if err != nil {
				return nil, err
			}
			return Measured{up: exactly(p, wantUp), upSame: sameShape(p, plans2[otherSide(sd)])}, nil
		})
	})
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	r.Objects = append(r.Objects, s0, s1)
	r.CheckPlanEmpty(ctx, rec, next, s1)
	rec.Say("a two-instance count ConfigMap added in %s beside the estate (gauntlet's own file)", r.Spec.Namespace)
	rec.Claim([]string{down, downSame, higher, lower}, "scaling 2 to 1 destroyed exactly %s (%s) with %s untouched (same uid and resourceVersion), as stock's plan on the oracle cluster", s1.Ref.Name, subj.Counts, s0.Ref.Name)
	rec.Claim([]string{up, upSame, next}, "back to 2 created exactly %s under the same name (%s), as stock's plan did, and the next plan is empty", s1.Address, subj2.Counts)
	return nil
}
