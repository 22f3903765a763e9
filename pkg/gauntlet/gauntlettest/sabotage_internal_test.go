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

// A check stock breaks in an untouched world (the oracle's finding) cannot
// hold on the oracle's side: that side's BREAK is not judged, and said so
// in the counts; the subject's side of the same BREAK still must hold, and
// an oracle BREAK on a check that is not stock's finding still must too.
func TestSabotageStocksOwnFinding(t *testing.T) {
	const quiet = "plan -refresh-only -detailed-exitcode exits 0"
	run := func(verdict result.Verdict, subject, oracle result.BreakOutcome) *result.Run {
		c := result.Check{Name: quiet, Verdict: verdict}
		if verdict != result.Pass {
			// Stock alone broke it: a sabotaged run shows the oracle's
			// finding unproven, its findings kept.
			c.Findings = []result.Finding{{Check: quiet, Side: "oracle", Field: "exit codes", Want: "0 on every repeat", Got: "2 on 1 of 1 repeats"}}
		}
		s := result.Stage{ID: "refresh_only", Checks: []result.Check{c},
			Breaks: []result.Break{{Name: "delete_before_refresh", Side: "subject", Covers: []string{quiet}, Outcome: subject},
				{Name: "delete_before_refresh", Side: "oracle", Covers: []string{quiet}, Outcome: oracle}}}
		return &result.Run{Sabotaged: true, Stages: []result.Stage{s}}
	}
	proved := map[string]bool{"refresh_only/delete_before_refresh@subject": true}
	errs, counts := sabotageErrors(run(result.Unproven, result.Held, result.Proved), proved)
	if len(errs) != 0 || counts["oracle on stock's finding"] != 1 || counts["subject held"] != 1 {
		t.Errorf("stock's finding: %v %v", errs, counts)
	}
	if errs, _ := sabotageErrors(run(result.Unproven, result.Proved, result.Proved), proved); len(errs) != 1 || !strings.Contains(errs[0], "@subject") {
		t.Errorf("the subject's tautological BREAK beside stock's finding: %v", errs)
	}
	if errs, _ := sabotageErrors(run(result.Pass, result.Held, result.Proved), proved); len(errs) != 1 || !strings.Contains(errs[0], "@oracle") {
		t.Errorf("an oracle BREAK proving on a passing check: %v", errs)
	}
}
