package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

func day2Count() Stage {
	return &countStage{info{id: "day2_count", title: "Change count", headline: true, reqs: []string{"GAUNT-DAY2-COUNT-01"}, after: []string{"migrate"}}}
}

type countStage struct{ info }

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
	first, err := r.Subject.Get(ctx, s0.Ref)
	if err != nil || first == nil {
		return fmt.Errorf("%s after the first apply: %v", s0.Ref, err)
	}
	if err := setCount(1); err != nil {
		return err
	}
	down := map[string]string{s1.Address: "delete"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("2 -> 1 destroys exactly the higher index", exactly(subj, down), subj.Counts.String()) {
		return nil
	}
	rec.Check("2 -> 1 same as the oracle", sameShape(subj, orc), "")
	if err := rec.Break("lower_index", "expects the lower index to be destroyed instead", func() (error, error) {
		return exactly(subj, map[string]string{s0.Address: "delete"}), nil
	}); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	err = r.both(ctx, func(ctx context.Context, sd *Side) error {
		if u, err := sd.Get(ctx, s1.Ref); err != nil || u != nil {
			return fmt.Errorf("%s survived scaling down (%v)", s1.Ref, err)
		}
		u, err := sd.Get(ctx, s0.Ref)
		if err != nil || u == nil {
			return fmt.Errorf("%s is gone (%v)", s0.Ref, err)
		}
		if sd.Name == "subject" && u.GetUID() != first.GetUID() {
			return fmt.Errorf("%s was recreated (uid %s -> %s)", s0.Ref, first.GetUID(), u.GetUID())
		}
		return nil
	})
	if !rec.Check("higher index gone, lower untouched", err, "read on both clusters") {
		return nil
	}
	if err := setCount(2); err != nil {
		return err
	}
	up := map[string]string{s1.Address: "create"}
	subj2, orc2, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("1 -> 2 creates exactly the higher index", exactly(subj2, up), subj2.Counts.String()) {
		return nil
	}
	rec.Check("1 -> 2 same as the oracle", sameShape(subj2, orc2), "")
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	err = r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.planEmpty(ctx) })
	rec.Check("next plan empty", err, "")
	r.Objects = append(r.Objects, s0, s1)
	rec.Say("a two-instance count ConfigMap added in %s beside the estate (gauntlet's own file): scaling 2 to 1 destroyed exactly %s (%s) with %s untouched (same uid); back to 2 created exactly %s under the same name (%s); the next plan is empty; stock's plans on the oracle cluster have the identical shape",
		r.Spec.Namespace, s1.Ref.Name, subj.Counts, s0.Ref.Name, s1.Address, subj2.Counts)
	return nil
}
