package evidence

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The JUnit shape CI servers read: testsuites > testsuite > testcase, a
// case failing with <failure> or skipped with <skipped>, counts on both
// container elements.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Error     *junitError   `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitError is a case that could not finish: a cancelled stage.
type junitError struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

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
	suite := junitSuite{
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
	for _, c := range suite.Cases {
		suite.Tests++
		if c.Failure != nil {
			suite.Failures++
		}
		if c.Skipped != nil {
			suite.Skipped++
		}
		if c.Error != nil {
			suite.Errors++
		}
	}
	doc := junitSuites{
		Name:     "gauntlet",
		Tests:    suite.Tests,
		Failures: suite.Failures,
		Errors:   suite.Errors,
		Skipped:  suite.Skipped,
		Time:     suite.Time,
		Suites:   []junitSuite{suite},
	}

	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("evidence: junit %s: encode: %w", r.Estate.Name, err)
	}
	b.WriteString("\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("evidence: junit %s: write: %w", r.Estate.Name, err)
	}
	return nil
}

// verdictCase is a stage's or a check's testcase, time 0.
func verdictCase(class, name string, v result.Verdict, detail, reason string) junitCase {
	c := junitCase{Classname: class, Name: name, Time: seconds(0)}
	switch v {
	case result.Pass:
		c.SystemOut = detail
	case result.NotRun:
		c.Skipped = &junitSkipped{Message: reasonText(reason)}
	case result.NotApplicable:
		// The estate's shape cannot carry it: not a pass, not a fail.
		c.Skipped = &junitSkipped{Message: "not applicable to this estate: " + reasonText(reason)}
	case result.Limitation:
		// Stock fails it the same way: not the engine's fail, not a pass.
		c.Skipped = &junitSkipped{Message: "limitation: stock fails it the same way: " + orDefault(oneline.First(detail, 200), "no detail recorded")}
	case result.Fail:
		c.Failure = &junitFailure{
			Message: orDefault(oneline.First(detail, 200), "failed, no detail recorded"),
			Type:    "fail",
			Text:    detail,
		}
	default:
		c.Failure = &junitFailure{
			Message: verdictWord(v),
			Type:    "unknown_verdict",
			Text:    detail,
		}
	}
	return c
}

func breakCase(class, stageID string, br result.Break) junitCase {
	c := junitCase{Classname: class, Name: stageID + "/" + breakLabel(br.Name), Time: seconds(0)}
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
	c.Failure = &junitFailure{Message: msg, Type: "break_not_failed", Text: text}
	return c
}

func junitProperties(r *result.Run) []junitProperty {
	props := []junitProperty{
		{"engine", engineLabel(r.Subject)},
		{"engine.pinned", r.Subject.Pinned},
		{"oracle", engineLabel(r.Oracle)},
		{"oracle.pinned", r.Oracle.Pinned},
		{"substrate", r.Substrate},
		{"commit", r.Commit},
		{"exit_code", fmt.Sprint(r.ExitCode)},
		{"clear", fmt.Sprint(r.Clear())},
		{"reproduce", r.Reproduce},
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
