package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func testApply() Stage {
	return &testApplyStage{Described{Info{ID: "test_apply", Title: "No-op apply", Headline: true, Requirements: []string{"GAUNT-NOOP-01"}, After: []string{"test_plan"}}}}
}

type testApplyStage struct{ Described }

// Run applies with nothing to do: 0 added, 0 changed, 0 destroyed, nothing
// acted on by name, and every object on the cluster untouched - the same
// uid and resourceVersion as before the apply.
func (s *testApplyStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	const (
		noop      = "no-op apply"
		oracleNop = "the oracle's no-op apply"
		untouched = "objects untouched on the cluster (uid and resourceVersion)"
	)
	assert := appliedNothing
	before, err := r.versionsBoth(ctx, r.Objects)
	if err != nil {
		return err
	}
	mark := map[string]int{"subject": len(r.Subject.Proxy.Log()), "oracle": len(r.Oracle.Proxy.Log())}
	subj, orc, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	if r.RecordsLive() {
		r.checkLockOnWire(ctx, rec, mark)
	}
	rec.Check(noop, assert(subj), subj.String())
	rec.Check(oracleNop, assert(orc), orc.String())
	same := func(ctx context.Context, sd *Side) error {
		after, err := versions(ctx, sd, r.onSide(sd, r.Objects))
		if err != nil {
			return err
		}
		return sameVersions(before[sd.Name], after)
	}
	rec.Check(untouched, r.both(ctx, same), fmt.Sprintf("%d objects read on each side", len(r.Objects)))
	rec.Claim([]string{noop, oracleNop, untouched}, "no-op apply (%s) on both sides, nothing acted on by name; all %d of the estate's objects keep their uid and resourceVersion on both clusters", subj, len(r.Objects))

	victim := r.victim()
	r.breakBoth(ctx, rec, Breaking{Name: "delete", Corruption: "deletes " + victim.Ref.String() + " out of band before the apply",
		Victim: victim.Address, Covers: []string{noop}, OracleCovers: []string{oracleNop},
		Predict: []result.Prediction{appliedPredict(victim.Address, "creation")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, victim.Ref, func() (Measured, error) {
			// This apply measures and, on an engine that sees the
			// deletion, repairs; deleted puts the copy back otherwise.
			a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{})
			if err != nil {
				return nil, err
			}
			if sd.Name == "subject" {
				return Measured{noop: assert(a)}, nil
			}
			return Measured{noop: assert(a), oracleNop: assert(a)}, nil
		})
	})
	// The delete BREAK recreated the victim: read the versions anew.
	if before, err = r.versionsBoth(ctx, r.Objects); err != nil {
		return err
	}
	r.breakBoth(ctx, rec, Breaking{Name: "stray_label", Corruption: "labels " + victim.Ref.String() + " out of band",
		Victim: victim.Ref.String(), Covers: []string{untouched}, Predict: []result.Prediction{versionPredict(victim)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, victim.Ref, func() (Measured, error) { return one(untouched, same(ctx, sd)), nil })
	})
	return nil
}
