package evidence

import (
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestWhyFirst: the page's first reason names the first headline stage
// keeping the run from clear, its class and whose it is; a stage blocked
// behind another is never first, nor a not-applicable one.
func TestWhyFirst(t *testing.T) {
	pass := result.Stage{ID: "cold_deploy", Title: "Cold deploy", Headline: true, Verdict: result.Pass}
	for name, tc := range map[string]struct {
		stage     result.Stage
		class     string
		who       string
		reasonHas string
	}{
		"not derived": {result.Stage{Verdict: result.NotRun, Cause: result.CauseNotDerived, Reason: "no drift derived"}, "not derived", whoEstate, "no drift derived"},
		"limitation":  {result.Stage{Verdict: result.Limitation}, "limitation", whoStock, ""},
		"engine finding": {result.Stage{Verdict: result.Fail, Checks: []result.Check{{Name: "c", Verdict: result.Fail,
			Findings: []result.Finding{{Side: "subject", Address: "a", Field: "plan", Want: "0", Got: "1"}}}}}, "engine finding", whoEngine, ""},
		"a BREAK could not run":  {result.Stage{Verdict: result.Fail, Breaks: []result.Break{{Name: "b", Outcome: result.CouldNotRun}}}, "a BREAK could not run", whoHarness, ""},
		"a BREAK could not undo": {result.Stage{Verdict: result.Fail, Breaks: []result.Break{{Name: "b", Outcome: result.CouldNotUndo}}}, "a BREAK could not undo its corruption", whoHarness, ""},
		"the engine's call": {result.Stage{Verdict: result.Fail, Aborted: "subject: tofu plan: exit status 1 (log: x):\nError: Call to unknown function\n"},
			"the engine's own call failed", whoEngine, "Error: Call to unknown function"},
		"stock's call":     {result.Stage{Verdict: result.Fail, Aborted: "oracle: read timed out"}, "the stage could not finish", whoUnknown, ""},
		"unproven":         {result.Stage{Verdict: result.Fail, Checks: []result.Check{{Name: "c", Verdict: result.Unproven}}}, "unproven: a check passed that no BREAK made fail", whoHarness, ""},
		"not load-bearing": {result.Stage{Verdict: result.Fail, Breaks: []result.Break{{Name: "b", Outcome: result.Held}}}, "a BREAK did not make its check fail (the check is not load-bearing)", whoHarness, ""},
	} {
		t.Run(name, func(t *testing.T) {
			s := tc.stage
			s.ID, s.Title, s.Headline = "migrate", "Migrate", true
			blocked := result.Stage{ID: "test_plan", Title: "Replan", Headline: true, Verdict: result.NotRun, Cause: result.CauseBlocked}
			na := result.Stage{ID: "day2_remove", Title: "Remove", Headline: true, Verdict: result.NotApplicable}
			r := &result.Run{Stages: []result.Stage{pass, na, s, blocked}}
			w, ok := firstWhy(r)
			if !ok || w.stage != "Migrate" || w.class != tc.class || w.who != tc.who || !strings.Contains(w.reason, tc.reasonHas) {
				t.Errorf("got %+v (%v), want Migrate, %q, %q, reason with %q", w, ok, tc.class, tc.who, tc.reasonHas)
			}
		})
	}
	if _, ok := firstWhy(&result.Run{Stages: []result.Stage{pass}}); ok {
		t.Error("a clear run has a why")
	}
}
