package evidence_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

const oneObject = "the root has one kubernetes object: a removal needs another one kept through it"

// withRemoval is smallRun with a headline removal the estate's shape
// cannot carry.
func withRemoval() *result.Run {
	r := smallRun()
	r.Stages = append(r.Stages, result.Stage{ID: "day2_remove", Title: "Remove a block", Headline: true,
		Requirements: []string{"GAUNT-DAY2-REMOVE-01"}, Verdict: result.NotApplicable, Reason: oneObject, Duration: 20 * time.Millisecond})
	return r
}

// A headline stage the estate's shape cannot carry is said in words, with
// its reason, on a clear run: never "did not run", never a fail; JUnit
// skips it with the reason; run.json keeps the run clear.
func TestNotApplicableInWords(t *testing.T) {
	r := withRemoval()
	want := "Clear - one stage not applicable to this estate: Remove a block (" + oneObject + "). Every other headline stage passes."
	if got := evidence.Headline(r); got != want {
		t.Errorf("headline\n got %q\nwant %q", got, want)
	}
	for _, format := range evidence.Formats() {
		var md bytes.Buffer
		if err := evidence.Markdown(&md, r, evidence.WithFormat(format)); err != nil {
			t.Fatal(err)
		}
		page := md.String()
		wants := map[evidence.Format][]string{
			evidence.FormatSections: {
				"| Remove a block (day2_remove) | not applicable | 20ms | - | not applicable to this estate: " + oneObject + " |\n",
				"### Stages not applicable to this estate\n",
				"- Remove a block (day2_remove): " + oneObject + ". Requirements: GAUNT-DAY2-REMOVE-01.\n",
			},
			evidence.FormatSeed: {"| Remove a block | not applicable | 20ms | Not applicable to this estate: " + oneObject + ". Requirements: GAUNT-DAY2-REMOVE-01. |\n"},
		}[format]
		for _, w := range append(wants, want) {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page does not say %q:\n%s", format, w, page)
			}
		}
		for _, never := range []string{"did not run", "Stages that did not run", "### Remove a block", "unknown verdict"} {
			if strings.Contains(page, never) {
				t.Errorf("%s: the page says %q:\n%s", format, never, page)
			}
		}
	}
	doc := parseJUnit(t, r)
	s := doc.Suites[0]
	var found bool
	for _, c := range s.Cases {
		if c.Name == "day2_remove" {
			found = true
			if outcome(c) != "skipped" || c.Skipped.Message != "not applicable to this estate: "+oneObject {
				t.Errorf("JUnit case %s: %s %+v", c.Name, outcome(c), c.Skipped)
			}
		}
	}
	if !found || s.Failures != 0 || s.Skipped != 1 {
		t.Errorf("JUnit: found %v, %d failures, %d skipped", found, s.Failures, s.Skipped)
	}
	for _, p := range s.Properties {
		if p.Name == "clear" && p.Value != "true" {
			t.Errorf("JUnit clear property %q", p.Value)
		}
	}
	var j bytes.Buffer
	if err := evidence.JSON(&j, r); err != nil {
		t.Fatal(err)
	}
	var d evidence.Document
	if err := json.Unmarshal(j.Bytes(), &d); err != nil || !d.Clear {
		t.Errorf("run.json: clear %v (%v)", d.Clear, err)
	}
}

// Beside other shortfalls it is named in its own words: with checks a
// substrate cannot run the run is still clear; with a stage that did not
// run it is not, and the not_applicable one is said to cost nothing; a run
// where nothing applies is not clear.
func TestNotApplicableBesideOtherShortfalls(t *testing.T) {
	r := withRemoval()
	r.Stages[1].Checks = []result.Check{{Name: "aggregated API", Verdict: result.NotRun, Detail: "no kubelet"}}
	if got, want := evidence.Headline(r), "Clear - one stage not applicable to this estate: Remove a block ("+oneObject+"); one check not run on the local substrate: migrate: aggregated API. Every other headline stage passes on what this substrate can show; `--substrate kind` runs the rest."; got != want {
		t.Errorf("with a check not run\n got %q\nwant %q", got, want)
	}
	r = withRemoval()
	r.Stages[1].Verdict, r.Stages[1].Reason = result.NotRun, "not selected for this run"
	if got, want := evidence.Headline(r), "Not clear: one did not run: Migrate (not selected for this run); one stage is not applicable to this estate, which costs no clear: Remove a block ("+oneObject+")."; got != want {
		t.Errorf("with a stage not run\n got %q\nwant %q", got, want)
	}
	r = withRemoval()
	r.Stages = r.Stages[2:]
	if got := evidence.Headline(r); !strings.HasPrefix(got, "Not clear. No headline stage applies to this estate") || !strings.Contains(got, oneObject) {
		t.Errorf("nothing applies: %q", got)
	}
	// Outside the headline it is no failure.
	r = withRemoval()
	r.Stages[2].Headline = false
	if got := evidence.Headline(r); got != "Clear. Every headline stage passes." {
		t.Errorf("a non-headline stage not applicable: %q", got)
	}
}
