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
