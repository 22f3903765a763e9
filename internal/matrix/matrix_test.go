package matrix

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func stageOf(id string, v result.Verdict, calls int, checks ...result.Check) result.Stage {
	return result.Stage{ID: id, Title: id, Verdict: v, Checks: checks,
		Breaks: []result.Break{
			{Name: "b", Side: "subject", Outcome: result.Proved, Failed: true},
			{Name: "b", Side: "oracle", Outcome: result.Proved, Failed: true},
		},
		Figures: map[string]int{"oracle.engine_calls": calls, "oracle.plans": 1, "oracle.engine_ms": calls * 1000}}
}

func runOf(engine, version string, d time.Duration, stages ...result.Stage) *result.Run {
	return &result.Run{Estate: result.Estate{Name: "e1"}, Subject: result.Engine{Name: engine, Version: version, Display: engine + " v" + version, SHA256: "abc"},
		Oracle: result.Engine{Name: "terraform", Version: "1.11.4"}, Duration: d, Stages: stages}
}

func sample() *Matrix {
	ok := result.Check{Name: "plan imports every object", Verdict: result.Pass, ProvedBy: []string{"b"}}
	bad := result.Check{Name: "plan imports every object", Verdict: result.Fail, Detail: "planned 1 to add\nmore"}
	return &Matrix{
		Estate: result.Estate{Name: "e1"}, Oracle: "terraform@1.11.4", Substrate: "local substrate", Duration: 3 * time.Minute,
		Columns: []Column{
			{Engine: "tofu@1.8.11", Tool: "tofu-1.8.11", Run: runOf("tofu", "1.8.11", time.Minute,
				stageOf("cold_deploy", result.Pass, 4, ok), stageOf("test_plan", result.Fail, 6, bad))},
			{Engine: "tofu@1.9.4", Tool: "tofu-1.9.4", Run: runOf("tofu", "1.9.4", time.Minute,
				stageOf("cold_deploy", result.Pass, 4, ok), stageOf("test_plan", result.Pass, 6, ok))},
			{Engine: "terraform@1.5.7", Tool: "terraform-1.5.7", Run: runOf("terraform", "1.5.7", time.Minute,
				stageOf("cold_deploy", result.Pass, 5, ok),
				result.Stage{ID: "test_plan", Verdict: result.NotRun, Reason: "needs import blocks, since terraform 1.5.0 (CHANGELOG); this is terraform 1.4.6"})},
			{Engine: "terraform@1.9.5", Tool: "terraform-1.9.5", Error: "engine terraform@1.9.5: build failed"},
		},
	}
}

func TestParityExplainsEveryCell(t *testing.T) {
	tb := Parity(sample())
	if len(tb.Engines) != 4 {
		t.Fatalf("engines %v", tb.Engines)
	}
	for _, row := range tb.Rows {
		for _, c := range row.Cells {
			if strings.TrimSpace(c.Why) == "" {
				t.Errorf("%s x %s: %s with no explanation", row.Stage, c.Engine, c.Verdict)
			}
			if c.Verdict == result.Fail && len(c.Differs) == 0 {
				t.Errorf("%s x %s: a failure names no check", row.Stage, c.Engine)
			}
		}
	}
	var tp Row
	for _, r := range tb.Rows {
		if r.Stage == "test_plan" {
			tp = r
		}
	}
	if c := tp.Cells[0]; c.Verdict != result.Fail || c.Differs[0].Check != "plan imports every object" || !strings.Contains(c.Differs[0].Detail, "planned 1 to add") || strings.Contains(c.Differs[0].Detail, "more") {
		t.Errorf("tofu 1.8.11 test_plan: %+v, want the failing check with its first line", c)
	}
	if c := tp.Cells[2]; c.Verdict != result.NotRun || !strings.Contains(c.Why, "needs import blocks, since terraform 1.5.0") {
		t.Errorf("terraform 1.5.7 test_plan: %+v", c)
	}
	if c := tp.Cells[3]; c.Verdict != result.NotRun || !strings.Contains(c.Why, "build failed") {
		t.Errorf("a run that could not happen: %+v", c)
	}
	// tofu 1.8.11 -> 1.9.4 changed test_plan; terraform 1.5.7 -> 1.9.5 too.
	var got []string
	for _, ch := range tb.Changes {
		got = append(got, ch.Stage+":"+ch.From+">"+ch.To)
	}
	want := "test_plan:tofu@1.8.11>tofu@1.9.4"
	if !strings.Contains(strings.Join(got, " "), want) {
		t.Errorf("changes %v, want %s", got, want)
	}
	for _, ch := range tb.Changes {
		if ch.From == "tofu@1.9.4" && strings.HasPrefix(ch.To, "terraform") {
			t.Errorf("a change across engines is not a version change: %+v", ch)
		}
	}
	if len(tb.Figures) != 0 {
		t.Errorf("figures %+v: the sample's subjects report none", tb.Figures)
	}
	// The oracle made 5 calls in terraform 1.5.7's run of cold_deploy and
	// 4 in the others: drift, named per engine.
	if len(tb.OracleDrift) != 1 || tb.OracleDrift[0].Stage != "cold_deploy" || !strings.Contains(tb.OracleDrift[0].ByEngine["terraform@1.5.7"], "engine_calls=5") {
		t.Errorf("oracle drift %+v", tb.OracleDrift)
	}
}

func TestRenderers(t *testing.T) {
	m := sample()
	var md, js, ju bytes.Buffer
	if err := Markdown(&md, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| stage | tofu@1.8.11 | tofu@1.9.4 | terraform@1.5.7 | terraform@1.9.5 |",
		"**test_plan × tofu@1.8.11**: `plan imports every object`", "needs import blocks, since terraform 1.5.0",
		"**test_plan**, tofu@1.8.11 -> tofu@1.9.4", "did NOT observe the same thing", "[tofu-1.9.4](tofu-1.9.4/evidence.md)",
		"could not run: engine terraform@1.9.5: build failed"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := JSON(&js, m); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Clear bool
		Table Table
		Cost  struct {
			Runs int
		}
	}
	if err := json.Unmarshal(js.Bytes(), &j); err != nil || j.Clear || j.Cost.Runs != 3 || len(j.Table.Rows) == 0 {
		t.Errorf("matrix.json: %v %+v", err, j)
	}
	if err := JUnit(&ju, m); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil || len(doc.Suites) != 4 || doc.Failures != 1 {
		t.Errorf("junit: %v failures %d suites %d", err, doc.Failures, len(doc.Suites))
	}
}

func TestResolveOrdersByVersion(t *testing.T) {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	got, orc, err := Resolve(pins, []string{"terraform@1.5.7", "tofu@1.12.6", "tofu@1.9"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range got {
		s = append(s, e.String())
	}
	if strings.Join(s, ",") != "tofu@1.9.4,tofu@1.12.6,terraform@1.5.7" || orc.String() != "terraform@1.11.4" {
		t.Errorf("Resolve = %v oracle %s", s, orc)
	}
	if _, _, err := Resolve(pins, []string{"tofu@1.9.4", "tofu@1.9"}, ""); err == nil {
		t.Error("the same engine twice must be refused")
	}
	if _, _, err := Resolve(pins, []string{"terraform@1.14.0"}, ""); err == nil || !strings.Contains(err.Error(), "cannot be built") {
		t.Errorf("terraform 1.14: %v", err)
	}
}

func TestReusable(t *testing.T) {
	subj := toolchain.EngineRef{Tool: "tofu-1.9.4", Engine: "tofu", Version: "1.9.4"}
	orc := toolchain.EngineRef{Tool: "terraform", Engine: "terraform", Version: "1.11.4"}
	good := func() *result.Run {
		return &result.Run{Estate: result.Estate{Name: "e1"}, Commit: "c1", Substrate: "local control plane v1.37.2",
			Subject: result.Engine{Name: "tofu", Pinned: "1.9.4", SHA256: "s1"}, Oracle: result.Engine{Name: "terraform", Pinned: "1.11.4"},
			Stages: []result.Stage{{ID: "cold_deploy", Verdict: result.Pass}}}
	}
	want := func(commit, sha string) Want {
		return Want{Estate: "e1", Commit: commit, Substrate: "local", Subject: subj, Oracle: orc, SubjectSHA: sha}
	}
	if err := Reusable(good(), want("c1", "s1")); err != nil {
		t.Errorf("the same commit, binary and oracle: %v", err)
	}
	for name, mod := range map[string]func(r *result.Run) (commit, sha string){
		"dirty tree":   func(r *result.Run) (string, string) { r.Commit = "c1-dirty"; return "c1-dirty", "s1" },
		"other commit": func(r *result.Run) (string, string) { return "c2", "s1" },
		"other binary": func(r *result.Run) (string, string) { return "c1", "s2" },
		"other oracle": func(r *result.Run) (string, string) { r.Oracle.Pinned = "1.9.5"; return "c1", "s1" },
		"cancelled":    func(r *result.Run) (string, string) { r.Cancelled = &result.Cancellation{}; return "c1", "s1" },
		"stages selected": func(r *result.Run) (string, string) {
			r.Stages[0].Reason = "not selected for this run"
			return "c1", "s1"
		},
		"providers reattached": func(r *result.Run) (string, string) {
			r.ReattachedProviders = "kubernetes"
			return "c1", "s1"
		},
	} {
		r := good()
		commit, sha := mod(r)
		if err := Reusable(r, want(commit, sha)); err == nil {
			t.Errorf("%s: reused", name)
		}
	}
}

func TestReusableReattached(t *testing.T) {
	r := &result.Run{Estate: result.Estate{Name: "e1"}, Commit: "c1", Substrate: "local control plane v1.37.2",
		Subject: result.Engine{Name: "tofu", Pinned: "1.9.4", SHA256: "s1"}, Oracle: result.Engine{Name: "terraform", Pinned: "1.11.4"},
		ReattachedProviders: "none"}
	w := Want{Estate: "e1", Commit: "c1", Substrate: "local", SubjectSHA: "s1", ReattachProviders: true,
		Subject: toolchain.EngineRef{Engine: "tofu", Version: "1.9.4"}, Oracle: toolchain.EngineRef{Engine: "terraform", Version: "1.11.4"}}
	if err := Reusable(r, w); err != nil {
		t.Errorf("reattached both times (nothing to reattach): %v", err)
	}
	w.ReattachProviders = false
	if err := Reusable(r, w); err == nil || !strings.Contains(err.Error(), "reattached true, now false") {
		t.Errorf("reattached, now not: %v", err)
	}
}

func TestFigureChangesBetweenVersions(t *testing.T) {
	a := stageOf("cold_deploy", result.Pass, 4)
	b := stageOf("cold_deploy", result.Pass, 4)
	a.Figures["subject.planned_changes"], b.Figures["subject.planned_changes"] = 9, 10
	m := &Matrix{Columns: []Column{
		{Engine: "tofu@1.8.11", Run: runOf("tofu", "1.8.11", time.Minute, a)},
		{Engine: "tofu@1.9.4", Run: runOf("tofu", "1.9.4", time.Minute, b)},
	}}
	f := Parity(m).Figures
	if len(f) != 1 || f[0].Stage != "cold_deploy" || f[0].What != "planned_changes 9 -> 10" {
		t.Errorf("figure changes %+v", f)
	}
}

func TestMatrixHTMLIsTheParityTableColouredWithCharts(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, sample()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, `<tr class="row">`); n != 4 {
		t.Errorf("%d summary rows, want one per engine", n)
	}
	for _, want := range []string{
		`<td class="fail" title="plan imports every object: fail: planned 1 to add"><a href="tofu-1.8.11/evidence.md">fail</a>`,
		`test_plan · tofu@1.8.11`, `could not run: engine terraform@1.9.5: build failed`,
		`data-bars="10"`, // two stages ran x (four engines + stock)
	} {
		if !strings.Contains(page, want) {
			t.Errorf("matrix.html lacks %q", want)
		}
	}
	for _, bad := range []string{"http://", "https://", "<script", " src="} {
		if strings.Contains(page, bad) {
			t.Errorf("matrix.html is not self-contained: %q", bad)
		}
	}
}

func TestSubjectsAreTakenAsGivenAndChecked(t *testing.T) {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	ok := []Subject{{Label: "baseline #1", Tool: "baseline-1", Pin: "tofu@1.12.6"}, {Label: "build #1", Tool: "build-1", Path: "/bin/true"}}
	got, orc, err := subjects(pins, Options{Subjects: ok})
	if err != nil || len(got) != 2 || got[1].Path != "/bin/true" || orc.Engine != "terraform" {
		t.Fatalf("subjects %+v, oracle %v: %v", got, orc, err)
	}
	for name, bad := range map[string][]Subject{
		"a folder twice":    {ok[0], {Label: "again", Tool: "baseline-1", Pin: "tofu@1.12.6"}},
		"both pin and path": {{Label: "x", Tool: "x", Pin: "tofu@1.12.6", Path: "/bin/true"}},
		"no label":          {{Tool: "x", Pin: "tofu@1.12.6"}},
	} {
		if _, _, err := subjects(pins, Options{Subjects: bad}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A promise stock alone broke is stock's in every column: no difference of
// the engine's, said in the cell's words.
func TestOracleFindingIsStocks(t *testing.T) {
	c := stageCell("tofu@1.12.6", stageOf("refresh_only", result.Pass, 0,
		result.Check{Name: "exits 0 every repeat", Verdict: result.OracleFinding, Detail: "oracle: got 2 on 5 of 5 repeats"},
		result.Check{Name: "acts on nothing", Verdict: result.Pass}))
	if len(c.Differs) != 0 || !strings.Contains(c.Why, "the oracle's finding (stock alone broke it, this engine kept it): exits 0 every repeat") {
		t.Errorf("cell %+v", c)
	}
}
