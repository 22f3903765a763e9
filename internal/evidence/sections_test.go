package evidence_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// runOutOfOrder is smallRun with the stages in display order but run in
// another (strict before migrate), greenfield not run with the zero
// figures a stage that never started leaves, and strict, outside the
// headline, run with figures of its own.
func runOutOfOrder() *result.Run {
	r := smallRun()
	r.Stages[0].Figures = map[string]int{"subject.plans": 2}
	r.Stages[0].Calls = map[string]map[string]result.CallTally{
		"subject": {"show": {N: 2, MS: 800}, "plan": {N: 2, MS: 2600}},
		"oracle":  {"plan": {N: 2, MS: 2400}},
	}
	r.Stages = append(r.Stages,
		result.Stage{ID: "greenfield", Title: "Greenfield apply", Headline: true, Verdict: result.NotRun,
			Reason: "needs live mode. The engine declares none", Requirements: []string{"GAUNT-GREEN-01"},
			Figures: map[string]int{"subject.plans": 0, "oracle.api_requests": 0}},
		result.Stage{ID: "strict", Title: "Strict profile", Verdict: result.Pass, Duration: 13 * time.Second,
			Detail: "every toggle on", Figures: map[string]int{"subject.api_requests": 7}})
	r.RunOrder = []string{"cold_deploy", "strict", "migrate", "greenfield"}
	return r
}

// The default page lists the stages in the order they ran, in the summary
// table and in the sections; a stage that did not run has a row and a
// line with its whole reason, and no section and no figures.
func TestSectionsFollowRunOrder(t *testing.T) {
	r := runOutOfOrder()
	var b bytes.Buffer
	if err := evidence.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	assertInOrder(t, page,
		"| Cold deploy (cold_deploy) | pass | 850ms |",
		"| Strict profile (strict, not a headline stage) | pass | 13s |",
		"| Migrate (migrate) | pass | 3s |",
		"| Greenfield apply (greenfield) | not run | - | - | needs live mode. |",
		"### Cold deploy\n",
		"Figures: subject.plans=2.\n",
		"Engine calls: subject plan 2 (2.6s), show 2 (0.8s); oracle plan 2 (2.4s).\n",
		"### Strict profile\n",
		"Figures: subject.api_requests=7.\n",
		"### Migrate\n",
		"### Stages that did not run\n\n- Greenfield apply (greenfield): needs live mode. The engine declares none. Requirements: GAUNT-GREEN-01.\n",
	)
	for _, never := range []string{"### Greenfield apply", "=0", "Stages ran in this order"} {
		if strings.Contains(page, never) {
			t.Errorf("the page has %q:\n%s", never, page)
		}
	}
	assertSummary(t, page, r)

	// The seed layout keeps display order, says the run order in a line,
	// and shows every stage's figures in its cell.
	b.Reset()
	if err := evidence.Markdown(&b, r, evidence.WithFormat(evidence.FormatSeed)); err != nil {
		t.Fatal(err)
	}
	seed := b.String()
	assertInOrder(t, seed, "| Cold deploy |", "| Migrate |", "| Greenfield apply |", "| Strict profile (not a headline stage) |",
		"Stages ran in this order: cold_deploy, strict, migrate, greenfield.")
	if !strings.Contains(seed, "oracle.api_requests=0") {
		t.Errorf("the seed layout changed: it no longer shows a not-run stage's figures:\n%s", seed)
	}
}

// A run recorded before the run order was (no RunOrder), or whose run
// order misses a stage, still shows every stage once: those the order
// names first, in its order, then the rest in the stages' own order.
func TestSectionsWithoutRunOrder(t *testing.T) {
	for name, order := range map[string][]string{
		"no run order":      nil,
		"partial run order": {"nonesuch", "cold_deploy"},
	} {
		r := runOutOfOrder()
		r.RunOrder = order
		var b bytes.Buffer
		if err := evidence.Markdown(&b, r); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		assertInOrder(t, page, "| Cold deploy (cold_deploy)", "| Migrate (migrate)", "| Greenfield apply (greenfield)",
			"| Strict profile (strict,", "### Cold deploy", "### Migrate", "### Strict profile")
		if n := strings.Count(page, "| Cold deploy (cold_deploy)"); n != 1 {
			t.Errorf("%s: cold_deploy has %d rows", name, n)
		}
		assertSummary(t, page, r)
	}
}

// assertInOrder fails unless page holds every part, each after the one
// before it.
func assertInOrder(t *testing.T, page string, parts ...string) {
	t.Helper()
	rest := page
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("%q missing, or not after the parts before it:\n%s", p, page)
			return
		}
		rest = rest[i+len(p):]
	}
}

// Formats are named as a flag gives them; an unknown one is refused by
// ParseFormat and by Markdown, naming the valid ones.
func TestFormats(t *testing.T) {
	for in, want := range map[string]evidence.Format{"": evidence.FormatSections, "sections": evidence.FormatSections, "seed": evidence.FormatSeed} {
		if got, err := evidence.ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := evidence.ParseFormat("table"); err == nil || !strings.Contains(err.Error(), "want sections or seed") {
		t.Errorf("ParseFormat(table) = %v, want an error naming sections and seed", err)
	}
	if err := evidence.Markdown(&bytes.Buffer{}, smallRun(), evidence.WithFormat("table")); err == nil || !strings.Contains(err.Error(), `"table"`) {
		t.Errorf("Markdown with format table = %v, want an error", err)
	}
	if _, err := evidence.WriteAll(filepath.Join(t.TempDir(), "x"), smallRun(), evidence.WithFormat("table")); err == nil {
		t.Error("WriteAll with format table succeeded")
	}
}

// WriteAll writes the page in the format it is given.
func TestWriteAllFormat(t *testing.T) {
	dir := t.TempDir()
	r := smallRun()
	if _, err := evidence.WriteAll(dir, r, evidence.WithFormat(evidence.FormatSeed)); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := evidence.Markdown(&want, r, evidence.WithFormat(evidence.FormatSeed)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, evidence.MarkdownFile))
	if err != nil || !bytes.Equal(got, want.Bytes()) || !bytes.Contains(got, []byte("| Stage | Verdict | Duration | Detail |")) {
		t.Errorf("WriteAll's page is not the seed layout (%v):\n%s", err, got)
	}
}

// A check that failed on several victims names every one in the summary
// table, not the first its detail's first line holds.
func TestSummaryNamesEveryVictim(t *testing.T) {
	r := withStage(1, func(s *result.Stage) {
		s.Verdict = result.Fail
		s.Checks = []result.Check{{Name: "next plan empty", Verdict: result.Fail,
			Detail: "subject: kubernetes_config_map_v1.a plan: want nothing, got create\nsubject: kubernetes_config_map_v1.b plan: want nothing, got update\noracle: kubernetes_config_map_v1.a plan: want nothing, got create",
			Findings: []result.Finding{
				{Check: "next plan empty", Side: "subject", Address: "kubernetes_config_map_v1.a", Field: "plan", Want: "nothing", Got: "create"},
				{Check: "next plan empty", Side: "subject", Address: "kubernetes_config_map_v1.b", Field: "plan", Want: "nothing", Got: "update"},
				{Check: "next plan empty", Side: "oracle", Address: "kubernetes_config_map_v1.a", Field: "plan", Want: "nothing", Got: "create"},
			}}}
	})
	var b bytes.Buffer
	if err := evidence.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "| next plan empty failed: 3 findings, on kubernetes_config_map_v1.a and kubernetes_config_map_v1.b. |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("the summary row does not name every victim (%q):\n%s", want, b.String())
	}
}

// A stage that failed exactly as its estate lists a documented engine
// difference says so on the page - in the summary row and under the
// stage, with where it is documented - and in JUnit's failure type; a
// known finding that is no difference is said as the estate's word only.
func TestKnownDifference(t *testing.T) {
	r := withStage(1, func(s *result.Stage) {
		s.Verdict = result.Fail
		s.Checks = []result.Check{{Name: "same as the oracle", Verdict: result.Fail, Detail: "subject: x plan: want import, got delete+create (import)"}}
		s.Known = &result.Known{Why: "tofu 1.12 triggers the replacement on a planned create", Difference: true,
			Engines: "tofu 1.12.0 and later", References: []string{"https://github.com/opentofu/opentofu/pull/3848"}}
	})
	var b bytes.Buffer
	if err := evidence.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| an engine difference, not a bug: tofu 1.12 triggers the replacement on a planned create |",
		"**Why, first:** Migrate - engine difference; whose: neither's: the engines differ by design, and document it.",
		"An engine difference, not a bug (estate.yaml findings): tofu 1.12 triggers the replacement on a planned create. tofu 1.12.0 and later behave this way by design; documented in https://github.com/opentofu/opentofu/pull/3848.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %q:\n%s", want, b.String())
		}
	}
	var j bytes.Buffer
	if err := evidence.JUnit(&j, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `type="engine_difference"`) {
		t.Errorf("JUnit does not type the failure as an engine difference:\n%s", j.String())
	}
	r.Stages[1].Known = &result.Known{Why: "stock alone stops here"}
	b.Reset()
	if err := evidence.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Known to this estate (estate.yaml findings): stock alone stops here.") || strings.Contains(b.String(), "engine difference") {
		t.Errorf("a known finding is said as a difference, or not at all:\n%s", b.String())
	}
}
