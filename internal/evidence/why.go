package evidence

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Whose a non-pass is: the page says it in words before anything else, so
// a reader knows in ten seconds whom to ask.
const (
	whoEngine  = "the engine under test"
	whoStock   = "stock and the engine alike (a limitation of the estate or its provider)"
	whoHarness = "gauntlet's own (the harness could not do its part; the engine is not blamed)"
	whoEstate  = "the estate's (gauntlet has no plan for this stage on this root yet)"
	whoUnknown = "not settled: the stage stopped before any check could say"
	whoDesign  = "neither's: the engines differ by design, and document it"
)

// why is the first headline stage keeping a run from clear, what kind of
// trouble it is, whose it is, and its reason; empty for a clear run.
type why struct {
	stage, class, who, reason string
}

// firstWhy walks the stages in run order and names the first that keeps
// the run from clear; a stage blocked behind another is never first (the
// one it waited on is).
func firstWhy(r *result.Run) (why, bool) {
	for _, s := range inRunOrder(r) {
		if !s.Headline || s.Verdict == result.Pass && len(result.Contradictions(s)) == 0 {
			continue
		}
		w := why{stage: stageName(s), reason: summaryReason(s)}
		if e := errorLine(s.Aborted); e != "" {
			w.reason = e
		}
		switch {
		case s.Verdict == result.NotApplicable:
			continue
		case s.Verdict == result.NotRun && s.Cause == result.CauseBlocked:
			continue
		case s.Verdict == result.NotRun && (s.Cause == result.CauseNotDerived || s.Cause == result.CauseSkipped || s.Cause == result.CauseUndeclared):
			w.class, w.who = "not derived", whoEstate
		case s.Verdict == result.NotRun || s.Verdict == result.Cancelled:
			w.class, w.who = "did not run", whoUnknown
		case s.Verdict == result.Limitation:
			w.class, w.who = "limitation", whoStock
		case s.Known != nil && s.Known.Difference:
			w.class, w.who = "engine difference", whoDesign
		default:
			w.class, w.who = stageTrouble(s)
		}
		return w, true
	}
	return why{}, false
}

// stageTrouble classes a stage that ran and did not pass: a check that
// found the engine wrong, a BREAK the harness could not run or undo, a
// check no BREAK proved, or a stage that stopped before its checks.
func stageTrouble(s result.Stage) (class, who string) {
	for _, c := range s.Checks {
		if c.Verdict == result.Fail && len(c.Findings) > 0 {
			return "engine finding", whoEngine
		}
	}
	for _, br := range s.Breaks {
		if br.EngineFinding {
			return "engine finding: a BREAK stock notices held on the engine", whoEngine
		}
	}
	for _, br := range s.Breaks {
		switch br.Outcome {
		case result.CouldNotRun:
			return "a BREAK could not run", whoHarness
		case result.CouldNotUndo:
			return "a BREAK could not undo its corruption", whoHarness
		}
	}
	for _, c := range s.Checks {
		if c.Verdict == result.Fail && len(c.MeasurementErrors) > 0 {
			return "a check could not measure", whoHarness
		}
	}
	if s.Aborted != "" {
		// An engine call of the subject's that exited non-zero is the
		// engine's; anything else (a read, a timeout) is not settled.
		if !strings.HasPrefix(s.Aborted, "oracle:") && strings.Contains(s.Aborted, "exit status") {
			return "the engine's own call failed", whoEngine
		}
		return "the stage could not finish", whoUnknown
	}
	for _, c := range s.Checks {
		if c.Verdict == result.Unproven {
			return "unproven: a check passed that no BREAK made fail", whoHarness
		}
	}
	for _, br := range s.Breaks {
		if br.Side != "oracle" && !br.Failed {
			return "a BREAK did not make its check fail (the check is not load-bearing)", whoHarness
		}
	}
	return "check failed", whoEngine
}

// whySentence is the page's second line on a run that is not clear.
func whySentence(r *result.Run) string {
	w, ok := firstWhy(r)
	if !ok {
		return ""
	}
	return fmt.Sprintf("**Why, first:** %s - %s; whose: %s. %s", w.stage, w.class, w.who, w.reason)
}

// errorLine is the first "Error: ..." line of a stage's abort, the
// engine's own words, or empty.
func errorLine(aborted string) string {
	for _, l := range strings.Split(aborted, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Error: ") {
			return l
		}
	}
	return ""
}
