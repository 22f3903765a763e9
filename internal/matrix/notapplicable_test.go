package matrix

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A stage the estate's shape cannot carry is its own cell on every engine:
// never a difference, never a change between versions, said in its own
// words (not "not run") in the table, its section, JUnit and HTML.
func TestNotApplicableIsNoDifference(t *testing.T) {
	const why = "the root has one kubernetes object: a removal needs another one kept through it"
	ok := result.Check{Name: "plan imports every object", Verdict: result.Pass, ProvedBy: []string{"b"}}
	na := result.Stage{ID: "day2_remove", Title: "Remove a block", Verdict: result.NotApplicable, Reason: why}
	m := &Matrix{Estate: result.Estate{Name: "e1"}, Oracle: "terraform@1.11.4", Columns: []Column{
		{Engine: "tofu@1.8.11", Tool: "tofu-1.8.11", Run: runOf("tofu", "1.8.11", time.Minute, stageOf("cold_deploy", result.Pass, 4, ok), na)},
		{Engine: "tofu@1.9.4", Tool: "tofu-1.9.4", Run: runOf("tofu", "1.9.4", time.Minute, stageOf("cold_deploy", result.Pass, 4, ok), na)},
	}}
	tb := Parity(m)
	for _, row := range tb.Rows {
		if row.Stage != "day2_remove" {
			continue
		}
		for _, c := range row.Cells {
			if c.Verdict != result.NotApplicable || c.Why != why || len(c.Differs) > 0 {
				t.Errorf("%s: %+v, want not_applicable with the reason", c.Engine, c)
			}
		}
	}
	if len(tb.Changes) != 0 {
		t.Errorf("changes %+v: both versions' cells are the estate's shape", tb.Changes)
	}
	var md bytes.Buffer
	if err := Markdown(&md, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| not applicable: the root has one kubernetes object", "## Not applicable to this estate",
		"- **day2_remove × tofu@1.9.4**: " + why, "No stage failed on any engine."} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "**day2_remove × tofu@1.8.11**: not run") || strings.Contains(md.String(), "**not_applicable**") {
		t.Errorf("markdown takes it for a not run or a fail:\n%s", md.String())
	}
	var ju bytes.Buffer
	if err := JUnit(&ju, m); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil || doc.Failures != 0 || doc.Skipped < 2 || !strings.Contains(ju.String(), "not applicable to this estate: "+why) {
		t.Errorf("junit: %v, %d failures, %d skipped:\n%s", err, doc.Failures, doc.Skipped, ju.String())
	}
	var h bytes.Buffer
	if err := HTML(&h, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), `<td class="notapplicable" title="`+why+`">`) || strings.Contains(h.String(), "day2_remove · tofu") {
		t.Errorf("matrix.html does not colour it apart, or lists it as a difference:\n%s", h.String())
	}
}
