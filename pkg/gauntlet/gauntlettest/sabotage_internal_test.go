package gauntlettest

import (
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestSabotageErrors: the sabotaged pass accepts only BREAKs that held, on
// both sides; a BREAK whose corruption was not skipped (it proved), one
// whose check fails in an untouched world (off_target), one whose
// measurement broke and one that never ran are each reported.
func TestSabotageErrors(t *testing.T) {
	run := func(outcomes map[string]result.BreakOutcome) *result.Run {
		s := result.Stage{ID: "drift"}
		for _, side := range []string{"subject", "oracle"} {
			for name, o := range outcomes {
				s.Breaks = append(s.Breaks, result.Break{Name: name, Side: side, Outcome: o})
			}
		}
		return &result.Run{Sabotaged: true, Stages: []result.Stage{s}}
	}
	proved := map[string]bool{"drift/tamper@subject": true, "drift/tamper@oracle": true}
	errs, counts := sabotageErrors(run(map[string]result.BreakOutcome{"tamper": result.Held}), proved)
	if len(errs) != 0 {
		t.Errorf("every BREAK held, yet: %v", errs)
	}
	if counts["subject held"] != 1 || counts["oracle held"] != 1 {
		t.Errorf("counts %v", counts)
	}
	for _, tc := range []struct {
		outcome result.BreakOutcome
		want    string
	}{
		{result.Proved, "tautological"},
		{result.OffTarget, "is off_target with its corruption skipped"},
		{result.CouldNotRun, "is could_not_run with its corruption skipped"},
	} {
		errs, _ := sabotageErrors(run(map[string]result.BreakOutcome{"tamper": tc.outcome}), proved)
		// Both sides are looked at: the oracle's BREAK is reported too.
		if len(errs) != 2 || !strings.Contains(errs[0], tc.want) || !strings.Contains(errs[1], "@oracle") {
			t.Errorf("%s: %v, want two errors saying %q, one of them the oracle's", tc.outcome, errs, tc.want)
		}
	}
	errs, _ = sabotageErrors(run(map[string]result.BreakOutcome{"other": result.Held}), proved)
	if len(errs) != 2 || !strings.Contains(errs[0], "did not run") {
		t.Errorf("a proved BREAK missing from the sabotaged run: %v", errs)
	}
	unmarked := run(map[string]result.BreakOutcome{"tamper": result.Held})
	unmarked.Sabotaged = false
	if errs, _ := sabotageErrors(unmarked, proved); len(errs) != 1 {
		t.Errorf("a run not marked sabotaged: %v", errs)
	}
}
