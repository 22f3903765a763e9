package evidence

import (
	"fmt"
	"io"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/junit"
	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// JUnit writes r as JUnit XML: one testsuite named after the estate, and
// in it one testcase per stage (classname "gauntlet.<estate>", name the
// stage ID, time in seconds), then one per check ("<stage>/<check>",
// time 0) and one per BREAK ("<stage>/BREAK <name>", time 0) of that
// stage. A fail is a <failure> carrying the detail; a not_run is a
// <skipped> carrying the reason, since a skip is never a pass, and so is
// a not_applicable, its reason after "not applicable to this estate: ";
// a verdict this package does not know is a <failure>. A BREAK that failed its
// assertion passes; one that did not is a <failure> "assertion not
// load-bearing". A cancelled stage is an <error> of type "cancelled"
// naming what stopped it. The suite's tests, failures, errors and skipped
// count the cases. The suite carries the run's engine, oracle, substrate,
// commit, exit code, clear, cancellation and reproduce command as
// properties.
func JUnit(w io.Writer, r *result.Run) error {
	if r == nil {
		return fmt.Errorf("evidence: junit: %w", errNilRun)
	}
	// Defensive: findings about secret data show digests even in a run
	// that did not come from gauntlet.Run (which hides them already).
	r = r.SecretDataHidden()
	suite := junit.Suite{
		Name:       r.Estate.Name,
		Time:       seconds(r.Duration),
		Properties: junitProperties(r),
	}
	if !r.StartedAt.IsZero() {
		suite.Timestamp = r.StartedAt.UTC().Format(time.RFC3339)
	}
	class := "gauntlet." + r.Estate.Name
	for _, s := range r.Stages {
		c := verdictCase(class, s.ID, s.Verdict, s.Detail, s.Reason)
		if k := s.Known; k != nil && k.Difference && c.Failure != nil {
			// Still a difference from stock, so still a failure, typed
			// as what it is.
			c.Failure.Type, c.Failure.Message = "engine_difference", oneline.First(knownLine(k), 200)
		}
		if s.Verdict == result.Cancelled {
			c = cancelledCase(c, r, s.Detail)
		}
		c.Time = seconds(s.Duration)
		suite.Cases = append(suite.Cases, c)
		for _, ch := range s.Checks {
			// A check's own detail is its reason when it did not run.
			suite.Cases = append(suite.Cases, verdictCase(class, s.ID+"/"+ch.Name, ch.Verdict, ch.Detail, ch.Detail))
		}
		for _, br := range s.Breaks {
			suite.Cases = append(suite.Cases, breakCase(class, s.ID, br))
		}
	}
	doc := junit.Suites{Name: "gauntlet", Time: suite.Time, Suites: []junit.Suite{suite}}
	if err := junit.Write(w, doc); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	return nil
}

// verdictCase is a stage's or a check's testcase, time 0.
func verdictCase(class, name string, v result.Verdict, detail, reason string) junit.Case {
	c := junit.Case{Classname: class, Name: name, Time: seconds(0)}
	switch v {
	case result.Pass:
		c.SystemOut = detail
	case result.OracleFinding:
		// The engine kept the promise; stock broke it: a pass of the
		// engine's, with stock's finding said beside it.
		c.SystemOut = "the oracle's finding (stock alone breaks this promise): " + detail
	case result.NotRun:
		c.Skipped = &junit.Skipped{Message: reasonText(reason)}
	case result.NotApplicable:
		// The estate's shape cannot carry it: not a pass, not a fail.
		c.Skipped = &junit.Skipped{Message: "not applicable to this estate: " + reasonText(reason)}
	case result.Limitation:
		// Stock fails it the same way: not the engine's fail, not a pass.
		c.Skipped = &junit.Skipped{Message: "limitation: stock fails it the same way: " + orDefault(oneline.First(detail, 200), "no detail recorded")}
	case result.Fail:
		c.Failure = &junit.Failure{
			Message: orDefault(oneline.First(detail, 200), "failed, no detail recorded"),
			Type:    "fail",
			Text:    detail,
		}
	default:
		c.Failure = &junit.Failure{
			Message: verdictWord(v),
			Type:    "unknown_verdict",
			Text:    detail,
		}
	}
	return c
}

func breakCase(class, stageID string, br result.Break) junit.Case {
	c := junit.Case{Classname: class, Name: stageID + "/" + breakLabel(br.Name), Time: seconds(0)}
	text := "corruption: " + orDefault(br.Corruption, "not recorded") + "\nassertion said: " + orDefault(br.Detail, "nothing recorded")
	if br.Failed {
		c.SystemOut = text
		return c
	}
	if br.Side == "oracle" {
		// The oracle's replay tells an engine finding from a weak check;
		// result.Assess never counts it against the run, so neither does
		// JUnit: what it shows is on the subject's BREAK.
		c.SystemOut = "oracle side, not a verdict: BREAK " + string(br.Outcome) + "\n" + text
		return c
	}
	msg := "BREAK " + string(br.Outcome)
	if br.EngineFinding {
		msg = "engine finding: the subject missed a corruption stock notices"
	}
	c.Failure = &junit.Failure{Message: msg, Type: "break_not_failed", Text: text}
	return c
}

func junitProperties(r *result.Run) []junit.Property {
	props := []junit.Property{
		{Name: "engine", Value: engineLabel(r.Subject)},
		{Name: "engine.pinned", Value: r.Subject.Pinned},
		{Name: "oracle", Value: engineLabel(r.Oracle)},
		{Name: "oracle.pinned", Value: r.Oracle.Pinned},
		{Name: "substrate", Value: r.Substrate},
		{Name: "commit", Value: r.Commit},
		{Name: "exit_code", Value: fmt.Sprint(r.ExitCode)},
		{Name: "clear", Value: fmt.Sprint(r.Clear())},
		{Name: "reproduce", Value: r.Reproduce},
	}
	props = append(props, cancelledProperty(r)...)
	out := props[:0]
	for _, p := range props {
		if p.Value != "" {
			out = append(out, p)
		}
	}
	return out
}
