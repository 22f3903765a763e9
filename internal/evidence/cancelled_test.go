package evidence_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// cancelledRun is smallRun interrupted during its first stage.
func cancelledRun() *result.Run {
	r := smallRun()
	r.Cancelled = &result.Cancellation{Stage: "cold_deploy", Signal: "interrupt"}
	r.ExitCode = 130
	r.Stages[0].Verdict = result.Cancelled
	r.Stages[0].Breaks = nil
	r.Stages[0].Detail = "Cancelled by interrupt after 4.2s; it had recorded: nothing"
	r.Stages[1].Verdict, r.Stages[1].Reason, r.Stages[1].Detail, r.Stages[1].Duration = result.NotRun, "cancelled", "", 0
	return r
}

func TestMarkdownSaysCancelled(t *testing.T) {
	for format, rows := range map[evidence.Format][]string{
		evidence.FormatSeed: {"| Cold deploy | cancelled |", "Not run: cancelled."},
		evidence.FormatSections: {
			"| Cold deploy (cold_deploy) | cancelled | 850ms | none recorded | Cancelled by interrupt after 4.2s; it had recorded: nothing |\n",
			"| Migrate (migrate) | not run | - | - | cancelled |\n",
			"### Cold deploy\n\nStage `cold_deploy` · cancelled · 850ms\n\n",
			"- Migrate (migrate): cancelled.\n",
		},
	} {
		var b bytes.Buffer
		if err := evidence.Markdown(&b, cancelledRun(), evidence.WithFormat(format)); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range append([]string{
			"Cancelled by interrupt during stage Cold deploy (cold_deploy): not clear, and not a verdict on the engine; 1 stage did not run (cancelled).",
		}, rows...) {
			if !strings.Contains(page, want) {
				t.Errorf("%s: page lacks %q:\n%s", format, want, page)
			}
		}
		for _, bad := range []string{"Clear.", " fail", "unknown verdict"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: page of a cancelled run says %q:\n%s", format, bad, page)
			}
		}
	}

	var b bytes.Buffer
	before := cancelledRun()
	before.Cancelled.Stage = ""
	before.Stages[0].Verdict, before.Stages[0].Reason, before.Stages[0].Detail = result.NotRun, "cancelled", ""
	if err := evidence.Markdown(&b, before); err != nil {
		t.Fatal(err)
	}
	if want := "Cancelled by interrupt before the first stage: not clear, and not a verdict on the engine; 2 stages did not run (cancelled)."; !strings.Contains(b.String(), want) {
		t.Errorf("page lacks %q:\n%s", want, b.String())
	}
}

func TestJUnitCancelledIsAnError(t *testing.T) {
	var b bytes.Buffer
	if err := evidence.JUnit(&b, cancelledRun()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Errors int `xml:"errors,attr"`
		Suites []struct {
			Errors     int `xml:"errors,attr"`
			Failures   int `xml:"failures,attr"`
			Skipped    int `xml:"skipped,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name  string `xml:"name,attr"`
				Error *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"error"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if doc.Errors != 1 || s.Errors != 1 || s.Failures != 0 || s.Skipped != 1 {
		t.Errorf("counts: errors %d/%d, failures %d, skipped %d; want 1/1, 0, 1\n%s", doc.Errors, s.Errors, s.Failures, s.Skipped, b.String())
	}
	for _, c := range s.Cases {
		switch c.Name {
		case "cold_deploy":
			if c.Error == nil || c.Error.Type != "cancelled" || c.Error.Message != "cancelled by interrupt" || c.Failure != nil {
				t.Errorf("cold_deploy: %+v, want an <error type=cancelled> only", c)
			}
		case "migrate":
			if c.Skipped == nil || !strings.Contains(c.Skipped.Message, "cancelled") {
				t.Errorf("migrate: %+v, want skipped \"cancelled\"", c)
			}
		}
	}
	found := false
	for _, p := range s.Properties {
		if p.Name == "cancelled" && p.Value == "by interrupt during cold_deploy" {
			found = true
		}
	}
	if !found {
		t.Errorf("no cancelled property in %+v", s.Properties)
	}
}

func TestJSONCarriesCancellation(t *testing.T) {
	var b bytes.Buffer
	if err := evidence.JSON(&b, cancelledRun()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Clear     bool                 `json:"clear"`
		ExitCode  int                  `json:"exit_code"`
		Cancelled *result.Cancellation `json:"cancelled"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Clear || doc.ExitCode != 130 || doc.Cancelled == nil || *doc.Cancelled != (result.Cancellation{Stage: "cold_deploy", Signal: "interrupt"}) {
		t.Errorf("run.json: clear %v, exit %d, cancelled %+v", doc.Clear, doc.ExitCode, doc.Cancelled)
	}
}
