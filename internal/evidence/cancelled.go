package evidence

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/junit"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The renderers' words for a cancelled run, kept apart from the rest so
// the page, run.json and JUnit say the same: a run stopped before its end
// is not clear, and it is not a verdict on the engine either.

// cancelledSentence is the page's answer for a cancelled run: what
// stopped it, during which stage, and how many stages it kept from
// running. Empty for a run that was not cancelled.
func cancelledSentence(r *result.Run) string {
	c := r.Cancelled
	if c == nil {
		return ""
	}
	notRun := 0
	for _, s := range r.Stages {
		// (A run recorded before causes says it in its reason only.)
		if s.Verdict == result.NotRun && (s.Cause == result.CauseCancelled || s.Reason == "cancelled") {
			notRun++
		}
	}
	where := "before the first stage"
	if c.Stage != "" {
		where = "during stage " + cancelledStage(r, c.Stage)
	}
	rest := fmt.Sprintf("%d stages did not run", notRun)
	if notRun == 1 {
		rest = "1 stage did not run"
	}
	return fmt.Sprintf("Cancelled by %s %s: not clear, and not a verdict on the engine; %s (cancelled). Run it again to its end for a verdict.",
		cancelledBy(c), where, rest)
}

func cancelledBy(c *result.Cancellation) string {
	if strings.TrimSpace(c.Signal) == "" {
		return "an unrecorded cause"
	}
	return c.Signal
}

// cancelledStage is "Title (id)", or the ID when the run lacks the stage.
func cancelledStage(r *result.Run, id string) string {
	for _, s := range r.Stages {
		if s.ID == id && strings.TrimSpace(s.Title) != "" {
			return s.Title + " (" + id + ")"
		}
	}
	return id
}

// cancelledCase turns a cancelled stage's testcase into an <error>: the
// stage neither passed nor found the engine wanting.
func cancelledCase(c junit.Case, r *result.Run, detail string) junit.Case {
	msg := "cancelled"
	if r.Cancelled != nil {
		msg = "cancelled by " + cancelledBy(r.Cancelled)
	}
	c.Failure, c.Skipped, c.SystemOut = nil, nil, ""
	c.Error = &junit.Error{Message: msg, Type: "cancelled", Text: detail}
	return c
}

// cancelledProperty is the suite property naming the cancellation.
func cancelledProperty(r *result.Run) []junit.Property {
	if r.Cancelled == nil {
		return nil
	}
	v := "by " + cancelledBy(r.Cancelled)
	if r.Cancelled.Stage != "" {
		v += " during " + r.Cancelled.Stage
	}
	return []junit.Property{{Name: "cancelled", Value: v}}
}
