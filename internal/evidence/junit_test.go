package evidence_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The test's own reading of JUnit, independent of the package's writer.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name       string  `xml:"name,attr"`
	Tests      int     `xml:"tests,attr"`
	Failures   int     `xml:"failures,attr"`
	Errors     int     `xml:"errors,attr"`
	Skipped    int     `xml:"skipped,attr"`
	Time       string  `xml:"time,attr"`
	Properties []xProp `xml:"properties>property"`
	Cases      []xCase `xml:"testcase"`
}

type xProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xCase struct {
	Classname string `xml:"classname,attr"`
	Name      string `xml:"name,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
}

func parseJUnit(t *testing.T, r *result.Run) xSuites {
	t.Helper()
	var b bytes.Buffer
	if err := evidence.JUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), xml.Header) {
		t.Errorf("junit does not start with the XML header")
	}
	var doc xSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("junit does not parse back: %v\n%s", err, b.String())
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	return doc
}

// outcome is how a parsed case reads: pass, failure or skipped.
func outcome(c xCase) string {
	switch {
	case c.Failure != nil && c.Skipped != nil:
		return "failure+skipped"
	case c.Failure != nil:
		return "failure"
	case c.Skipped != nil:
		return "skipped"
	}
	return "pass"
}

// TestJUnit proves the XML parses back, every stage, check and BREAK is a
// case with the right name and outcome (a skip never a pass, a break that
// did not fail a failure), and the counts on both container elements
// agree with the cases.
func TestJUnit(t *testing.T) {
	mixed := func() *result.Run {
		r := smallRun()
		r.Stages[0].Verdict = result.Fail
		r.Stages[0].Detail = "first line of the failure\nsecond line"
		r.Stages[0].Breaks[0].Failed, r.Stages[0].Breaks[0].Outcome = false, result.Held
		r.Stages[1].Checks = []result.Check{
			{Name: "labels", Verdict: result.Pass},
			{Name: "api", Verdict: result.NotRun, Detail: "no kubelet"},
			{Name: "count", Verdict: result.Fail, Detail: "2 != 1"},
		}
		r.Stages = append(r.Stages,
			result.Stage{ID: "greenfield", Headline: true, Verdict: result.NotRun, Reason: "no live mode"},
			result.Stage{ID: "odd", Verdict: "flaky"})
		return r
	}
	tests := []struct {
		name                     string
		run                      *result.Run
		tests, failures, skipped int
		outcomes                 map[string]string
		messages                 map[string]string
	}{
		{
			name: "clear run", run: smallRun(), tests: 3,
			outcomes: map[string]string{"cold_deploy": "pass", "migrate": "pass", "cold_deploy/BREAK delete": "pass"},
		},
		{
			name: "mixed run", run: mixed(), tests: 8, failures: 4, skipped: 2,
			outcomes: map[string]string{
				"cold_deploy":              "failure",
				"cold_deploy/BREAK delete": "failure",
				"migrate":                  "pass",
				"migrate/labels":           "pass",
				"migrate/api":              "skipped",
				"migrate/count":            "failure",
				"greenfield":               "skipped",
				"odd":                      "failure",
			},
			messages: map[string]string{
				"cold_deploy":              "first line of the failure",
				"cold_deploy/BREAK delete": "BREAK held",
				"migrate/api":              "no kubelet",
				"greenfield":               "no live mode",
				"odd":                      `unknown verdict "flaky"`,
			},
		},
		{
			// 15 stages + 2 checks + 13 breaks; strict, plan_no_local_state
			// and cold_deploy's aggregated-API check are skipped.
			name: "metrics-server", run: metricsServerRun(), tests: 30, skipped: 3,
			outcomes: map[string]string{
				"strict":                             "skipped",
				"plan_no_local_state":                "skipped",
				"cold_deploy/aggregated API answers": "skipped",
				"day2_crash/BREAK expect-nothing":    "pass",
			},
			messages: map[string]string{"plan_no_local_state": "engine tofu 1.12.6 has no live mode"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := parseJUnit(t, tc.run)
			s := doc.Suites[0]
			if s.Name != tc.run.Estate.Name {
				t.Errorf("suite name %q, want %q", s.Name, tc.run.Estate.Name)
			}
			if s.Tests != tc.tests || s.Failures != tc.failures || s.Skipped != tc.skipped || s.Errors != 0 {
				t.Errorf("suite counts tests=%d failures=%d skipped=%d errors=%d, want %d %d %d 0",
					s.Tests, s.Failures, s.Skipped, s.Errors, tc.tests, tc.failures, tc.skipped)
			}
			if doc.Tests != s.Tests || doc.Failures != s.Failures || doc.Skipped != s.Skipped {
				t.Errorf("testsuites counts %d/%d/%d disagree with the suite's", doc.Tests, doc.Failures, doc.Skipped)
			}
			// The counts must also agree with the cases actually there.
			var n, f, sk int
			got := map[string]xCase{}
			for _, c := range s.Cases {
				n++
				switch outcome(c) {
				case "failure":
					f++
				case "skipped":
					sk++
				case "failure+skipped":
					t.Errorf("case %s is both failed and skipped", c.Name)
				}
				if c.Classname != "gauntlet."+tc.run.Estate.Name {
					t.Errorf("case %s classname %q", c.Name, c.Classname)
				}
				got[c.Name] = c
			}
			if n != s.Tests || f != s.Failures || sk != s.Skipped {
				t.Errorf("cases count %d/%d/%d, attributes say %d/%d/%d", n, f, sk, s.Tests, s.Failures, s.Skipped)
			}
			for name, want := range tc.outcomes {
				c, ok := got[name]
				if !ok {
					t.Errorf("no case %q", name)
					continue
				}
				if o := outcome(c); o != want {
					t.Errorf("case %q is %s, want %s", name, o, want)
				}
			}
			for name, want := range tc.messages {
				c := got[name]
				var msg string
				if c.Failure != nil {
					msg = c.Failure.Message
				} else if c.Skipped != nil {
					msg = c.Skipped.Message
				}
				if msg != want {
					t.Errorf("case %q message %q, want %q", name, msg, want)
				}
			}
		})
	}
}

// TestJUnitStageTime proves a stage's time is its duration in seconds and
// the suite carries the run's properties.
func TestJUnitStageTime(t *testing.T) {
	doc := parseJUnit(t, smallRun())
	s := doc.Suites[0]
	if s.Cases[0].Name != "cold_deploy" || s.Cases[0].Time != "0.850" {
		t.Errorf("first case %s time %s, want cold_deploy 0.850", s.Cases[0].Name, s.Cases[0].Time)
	}
	if s.Time != "95.000" {
		t.Errorf("suite time %s, want 95.000", s.Time)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	for k, v := range map[string]string{"engine": "tofu 1.12.6", "oracle": "terraform 1.15.8", "clear": "true", "substrate": "local"} {
		if props[k] != v {
			t.Errorf("property %s = %q, want %q", k, props[k], v)
		}
	}
}

// TestJUnitReadsAssess: an oracle-side BREAK that did not prove is the
// oracle telling a weak check from an engine finding; result.Assess does
// not count it against a clear run, so JUnit reports no failure for it.
func TestJUnitReadsAssess(t *testing.T) {
	r := withStage(0, func(s *result.Stage) {
		s.Breaks = append(s.Breaks, result.Break{Name: "delete", Side: "oracle", Corruption: "deletes the ConfigMap", Outcome: result.Held, Detail: "still passed"})
	})
	if !r.Clear() {
		t.Fatalf("fixture is not clear: %+v", r.Assess())
	}
	doc := parseJUnit(t, r)
	if doc.Failures != 0 {
		t.Errorf("a clear run's JUnit has %d failures", doc.Failures)
	}
	aborted := withStage(1, func(s *result.Stage) { s.Verdict, s.Aborted = result.Fail, "plan: exit 1" })
	if a := aborted.Assess(); len(a.Aborted) != 1 || a.Aborted[0].Stage != "migrate" {
		t.Errorf("an aborted stage is not counted: %+v", a.Aborted)
	}
	var b bytes.Buffer
	if err := evidence.Markdown(&b, aborted); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "every check after the abort did not run: migrate after 0 checks (plan: exit 1)") {
		t.Errorf("the page does not count the aborted stage's checks:\n%s", b.String())
	}
}
