package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

func testApply() Stage {
	return &testApplyStage{info{id: "test_apply", title: "No-op apply", headline: true, reqs: []string{"GAUNT-NOOP-01"}, after: []string{"test_plan"}}}
}

type testApplyStage struct{ info }

// Run applies with nothing to do: 0 added, 0 changed, 0 destroyed, and
// the objects counted on the cluster (not in state) unchanged.
func (s *testApplyStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	assert := func(a engine.Applied) error {
		if a.Added != 0 || a.Changed != 0 || a.Destroyed != 0 || a.Imported != 0 {
			return fmt.Errorf("applied %s, want nothing", a)
		}
		return nil
	}
	subj, orc, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	if !rec.Check("no-op apply", assert(subj), subj.String()) {
		return nil
	}
	rec.Check("oracle no-op apply", assert(orc), orc.String())
	count := 0
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		live, err := sd.Present(ctx, r.Objects)
		if err != nil {
			return err
		}
		if len(live) != len(r.Objects) {
			return fmt.Errorf("%d of %d objects live", len(live), len(r.Objects))
		}
		if sd.Name == "subject" {
			count = len(live)
		}
		return nil
	}); err != nil {
		rec.Check("objects unchanged on the cluster", err, "")
		return nil
	}
	rec.Check("objects unchanged on the cluster", nil, fmt.Sprintf("%d live", count))
	rec.Say("no-op apply (%s) on both sides; the estate's objects counted on the cluster are unchanged at %d", subj, count)

	victim := r.Objects[len(r.Objects)-1]
	return rec.Break("delete", "deletes "+victim.Ref.String()+" out of band before the apply", func() (error, error) {
		if err := r.Subject.Delete(ctx, victim.Ref); err != nil {
			return nil, err
		}
		// This apply both measures and repairs: it recreates the object.
		a, err := r.Subject.Engine.Apply(ctx, engine.ApplyOptions{})
		if err != nil {
			return nil, err
		}
		return assert(a), nil
	})
}
