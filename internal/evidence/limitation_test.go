package evidence_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A limitation stock shares is said in words on the page, in its own
// section naming stock, never as a fail of the engine's; JUnit skips it.
func TestLimitationInWords(t *testing.T) {
	r := withStage(1, func(s *result.Stage) {
		s.Verdict = result.Limitation
		s.Checks = []result.Check{{Name: "the tamper is planned", Verdict: result.Limitation,
			Detail: "subject: kubernetes_manifest.a plan: want update, got no change; oracle: the same"}}
	})
	r.Oracle.Display = "Terraform v1.15.8"
	var md bytes.Buffer
	if err := evidence.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	page := md.String()
	for _, want := range []string{
		"fails the same way on stock (Terraform v1.15.8)",
		"a limitation of the estate or its provider, not the engine's fail",
		"### Limitations stock shares",
		"the tamper is planned: subject: kubernetes_manifest.a plan",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "headline stages fails") || strings.Contains(page, "headline stages fail:") {
		t.Errorf("the page counts the limitation as a fail:\n%s", page)
	}
	var x bytes.Buffer
	if err := evidence.JUnit(&x, r); err != nil {
		t.Fatal(err)
	}
	if s := x.String(); strings.Contains(s, "<failure") || !strings.Contains(s, "limitation: stock fails it the same way") {
		t.Errorf("JUnit:\n%s", s)
	}
}

// A promise stock alone breaks is the oracle's finding: its own section
// names stock and the finding, the run stays clear, JUnit passes it.
func TestOracleFindingInWords(t *testing.T) {
	r := withStage(1, func(s *result.Stage) {
		s.Verdict = result.Pass
		s.Checks = []result.Check{{Name: "exits 0 on every repeat", Verdict: result.OracleFinding, ProvedBy: []string{"delete_before_refresh"},
			Detail:   "oracle: exit codes: want 0 on every repeat, got 2 on 5 of 5 repeats",
			Findings: []result.Finding{{Side: "oracle", Object: "plan -refresh-only -detailed-exitcode", Field: "exit codes", Want: "0 on every repeat", Got: "2 on 5 of 5 repeats"}}}}
	})
	r.Oracle.Name, r.Oracle.Version = "terraform", "1.11.4"
	var md bytes.Buffer
	if err := evidence.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	page := md.String()
	for _, want := range []string{
		"### The oracle's findings",
		"terraform 1.11.4 breaks these promises on its own cluster",
		"broke one promise the engine under test kept - the oracle's finding, not the engine's: migrate: exits 0 on every repeat.",
		"got 2 on 5 of 5 repeats",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q:\n%s", want, page)
		}
	}
	if !r.Clear() || strings.Contains(page, "Limitations stock shares") {
		t.Errorf("an oracle's finding costs the clear or reads as a limitation:\n%s", page)
	}
	var x bytes.Buffer
	if err := evidence.JUnit(&x, r); err != nil {
		t.Fatal(err)
	}
	if s := x.String(); strings.Contains(s, "<failure") || strings.Contains(s, "<skipped") || !strings.Contains(s, "stock alone breaks this promise") {
		t.Errorf("JUnit:\n%s", s)
	}
}
