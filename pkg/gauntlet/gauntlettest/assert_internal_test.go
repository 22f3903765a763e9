package gauntlettest

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestANotApplicableStageIsASkip: a stage the estate's shape cannot carry
// skips its test, never fails it.
func TestANotApplicableStageIsASkip(t *testing.T) {
	s := result.Stage{ID: "day2_remove", Verdict: result.NotApplicable, Reason: "the root has one kubernetes object"}
	var inner *testing.T
	t.Run(s.ID, func(t *testing.T) {
		inner = t
		assertStage(t, &estate.Spec{}, s, nil)
	})
	if inner == nil || !inner.Skipped() || inner.Failed() {
		t.Errorf("a not_applicable stage: skipped %v, failed %v", inner != nil && inner.Skipped(), inner != nil && inner.Failed())
	}
}

// TestNotDerived: a stage not run for want of a derived plan skips only
// where estate.yaml says so; unlisted it fails (a derivation lost, or a
// new gap), and a listed stage that runs fails too (the entry is stale).
func TestNotDerived(t *testing.T) {
	gap := result.Stage{ID: "drift_reconverge", Verdict: result.NotRun, Cause: result.CauseNotDerived, Reason: "no drift derived"}
	listed := &estate.Spec{NotDerived: map[string]string{"drift_reconverge": "labels come from var.labels"}}
	passed := result.Stage{ID: "drift_reconverge", Verdict: result.Pass}
	blocked := result.Stage{ID: "drift_reconverge", Verdict: result.NotRun, Cause: result.CauseBlocked, BlockedBy: "migrate"}
	for _, c := range []struct {
		name       string
		spec       *estate.Spec
		s          result.Stage
		skip, fail bool
	}{
		{"listed gap", listed, gap, true, false},
		{"unlisted gap", &estate.Spec{}, gap, false, true},
		{"listed, but it passed", listed, passed, false, true},
		{"listed, blocked by another stage: judged as any other", listed, blocked, false, false},
		{"unlisted pass", &estate.Spec{}, passed, false, false},
	} {
		skip, fail := notDerived(c.spec, c.s)
		if (skip != "") != c.skip || (fail != "") != c.fail {
			t.Errorf("%s: skip %q, fail %q; want skip %v, fail %v", c.name, skip, fail, c.skip, c.fail)
		}
	}
}
