package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Two recorded runs of corpus-k8s-metrics-server on kind with the pinned
// tofu (conformance/runs): one clear, one whose drift_reconverge failed
// (the metrics APIService answered Unauthorized after the apply).
const (
	passRun  = "testdata/metrics-server-pass.run.json"
	driftRun = "testdata/metrics-server-drift-fail.run.json"
)

func load(t *testing.T, path string) *result.Run {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Run
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

func input(build, baseline []*result.Run) Input {
	e := EstateRuns{Name: "corpus-k8s-metrics-server"}
	for i, r := range build {
		e.Build = append(e.Build, Rep{Run: r, Dir: "ms/build-" + string(rune('1'+i))})
	}
	for i, r := range baseline {
		e.Baseline = append(e.Baseline, Rep{Run: r, Dir: "ms/baseline-" + string(rune('1'+i))})
	}
	return Input{Engine: "./bin/tofu", Baseline: "tofu@1.12.6", Oracle: "terraform@1.11.4", Estates: []EstateRuns{e}}
}

func row(t *testing.T, r Report, id string) StageRow {
	t.Helper()
	for _, s := range r.Estates[0].Stages {
		if s.Stage == id {
			return s
		}
	}
	t.Fatalf("no row %s", id)
	return StageRow{}
}

func stageOf(r *result.Run, id string) *result.Stage {
	for i := range r.Stages {
		if r.Stages[i].ID == id {
			return &r.Stages[i]
		}
	}
	return nil
}

func TestTheSameRunTwiceIsTheSameEverywhere(t *testing.T) {
	r := Compare(input([]*result.Run{load(t, passRun)}, []*result.Run{load(t, passRun)}))
	if len(r.New) != 0 || len(r.Removed) != 0 || len(r.Timing) != 0 {
		t.Fatalf("new %v removed %v timing %v", r.New, r.Removed, r.Timing)
	}
	for _, s := range r.Estates[0].Stages {
		if s.Outcome != Same {
			t.Errorf("%s: %s (%s)", s.Stage, s.Outcome, s.Why)
		}
	}
	if got := row(t, r, "day2_crash"); got.Build.Evidence != "ms/build-1/evidence.md" || got.Stock.Requests != 356 || got.Time.Ratio != 1 {
		t.Errorf("day2_crash row %+v", got)
	}
}

func TestABuildThatFailsAStageTheBaselinePassedIsANewDifferenceWithBothSides(t *testing.T) {
	r := Compare(input([]*result.Run{load(t, driftRun)}, []*result.Run{load(t, passRun)}))
	if len(r.New) == 0 {
		t.Fatalf("no new difference: %+v", r.Counts)
	}
	d := r.New[0]
	if d.Stage != "drift_reconverge" || d.Kind != "verdict" || len(d.Baseline) != 0 || d.BuildEvidence != "ms/build-1/evidence.md" || d.BaselineEvidence != "ms/baseline-1/evidence.md" {
		t.Fatalf("first new difference %+v", d)
	}
	var checks []string
	for _, f := range d.Build {
		checks = append(checks, f.Check+" = "+f.Detail)
	}
	if got := strings.Join(checks, "\n"); !strings.Contains(got, "its group version answers discovery again after the reconverging apply = fail: APIService v1beta1.metrics.k8s.io") ||
		!strings.Contains(got, "Unauthorized") {
		t.Errorf("the build's findings do not name the failing check:\n%s", got)
	}
	if row(t, r, "migrate").Outcome != Same {
		t.Errorf("migrate: %+v", row(t, r, "migrate"))
	}

	// The other way round, the build removed the difference.
	back := Compare(input([]*result.Run{load(t, passRun)}, []*result.Run{load(t, driftRun)}))
	if len(back.Removed) != 1 || back.Removed[0].Stage != "drift_reconverge" || row(t, back, "drift_reconverge").Outcome != Removed {
		t.Errorf("removed %+v", back.Removed)
	}
	for _, n := range back.New {
		if n.Kind == "verdict" || n.Kind == "check" {
			t.Errorf("a removed difference also listed as new: %+v", n)
		}
	}
}

func TestAFailingCheckWhoseFindingChangedIsNewAndTheSameFailureIsShared(t *testing.T) {
	base, build := load(t, driftRun), load(t, driftRun)
	in := input([]*result.Run{build}, []*result.Run{base})
	in.Estates[0].Findings = map[string]string{"drift_reconverge": "the provider drops the APIService's caBundle"}
	if got := row(t, Compare(in), "drift_reconverge"); got.Outcome != Shared || !strings.Contains(got.Why, "stock does too") || got.Stock.Limitation == "" {
		t.Errorf("the same failure on both: %+v", got)
	}
	// Only a duration differs: still the same finding.
	st := stageOf(build, "drift_reconverge")
	for i := range st.Checks {
		st.Checks[i].Detail = strings.ReplaceAll(st.Checks[i].Detail, "after 0s", "after 2.5s")
	}
	if got := row(t, Compare(in), "drift_reconverge"); got.Outcome != Shared {
		t.Errorf("a duration made a new finding: %+v", got)
	}
	for i := range st.Checks {
		if st.Checks[i].Verdict == result.Fail {
			st.Checks[i].Detail = "APIService v1beta1.metrics.k8s.io: GET /apis/metrics.k8s.io/v1beta1 on subject: 503 Service Unavailable"
		}
	}
	r := Compare(in)
	got := row(t, r, "drift_reconverge")
	if got.Outcome != New || got.Change != "check" || !strings.Contains(got.Why, "its group version answers discovery again after the reconverging apply says otherwise") {
		t.Fatalf("a changed finding: %+v", got)
	}
	if len(r.New) != 1 || r.New[0].Kind != "check" {
		t.Errorf("new %+v", r.New)
	}
}

func TestAChangeInRequestsIsABehaviourChangeNamingTheRequests(t *testing.T) {
	// Two repetitions a side: the counts have spreads to be judged by.
	runs := func(n int, testPlan map[string]int) []*result.Run {
		var out []*result.Run
		for range n {
			r := load(t, passRun)
			for i := range r.Stages {
				r.Stages[i].Requests = map[string]map[string]int{"subject": {"get configmaps": 3, "list namespaces": 1}}
			}
			if testPlan != nil {
				stageOf(r, "test_plan").Requests["subject"] = testPlan
			}
			out = append(out, r)
		}
		return out
	}
	more := map[string]int{"get configmaps": 4, "list namespaces": 1, "get services": 2}
	base, build := runs(2, nil), runs(2, more)
	r := Compare(input(build, base))
	got := row(t, r, "test_plan")
	if got.Outcome != New || len(got.Requests) != 2 || got.Requests[0].String() != "get configmaps 3 -> 4" || got.Requests[1].String() != "get services 0 -> 2" || !got.Requests[0].Confirmed {
		t.Fatalf("test_plan: %+v", got)
	}
	if len(r.New) != 1 || r.New[0].Kind != "requests" || !strings.Contains(r.New[0].What, "get configmaps 3 -> 4; get services 0 -> 2") || len(r.Unconfirmed) != 0 {
		t.Errorf("new %+v, unconfirmed %+v", r.New, r.Unconfirmed)
	}
	if row(t, r, "migrate").Outcome != Same {
		t.Errorf("migrate changed: %+v", row(t, r, "migrate"))
	}
	// A stage that sent no request (fence: not run) records none, and
	// the run is still compared request by request.
	for _, run := range append(slices.Clone(base), build...) {
		stageOf(run, "fence").Requests = nil
	}
	r = Compare(input(build, base))
	if got := row(t, r, "fence"); got.Outcome != Same || len(got.Requests) != 0 {
		t.Errorf("fence: %+v", got)
	}
	if got := row(t, r, "test_plan"); len(got.Requests) != 2 {
		t.Errorf("test_plan with a stage without requests: %+v", got.Requests)
	}
	// A run made before the breakdown is compared by its total.
	if got := row(t, Compare(input(build, []*result.Run{load(t, passRun), load(t, passRun)})), "test_plan"); got.Outcome != Same {
		t.Errorf("an old baseline whose total is the same: %+v", got.Requests)
	}
	// Counts that vary within the baseline's own repetitions are not a change.
	noisy := runs(1, map[string]int{"get configmaps": 4, "list namespaces": 1, "get services": 1})
	r = Compare(input(build, append(runs(1, nil), noisy...)))
	if got := row(t, r, "test_plan"); len(got.Requests) != 1 || got.Requests[0].String() != "get services 0-1 -> 2" {
		t.Errorf("within the spread: %+v", got.Requests)
	}
	// Where the verdict changed, the requests follow from it: not
	// listed apart (a stage run on one side only sent them all there).
	failing := runs(2, more)
	for _, run := range failing {
		stageOf(run, "test_plan").Verdict = result.Fail
	}
	if got := row(t, Compare(input(failing, base)), "test_plan"); got.Outcome != New || got.Change != "verdict" || len(got.Requests) != 0 {
		t.Errorf("a verdict change with its requests: %+v", got)
	}
	// One repetition a side has no spread: a count that moved by one (a
	// wait loop's extra poll) is listed as unconfirmed; one that moved
	// beyond the poll tolerance is a likely new difference.
	r = Compare(input(runs(1, more), runs(1, nil)))
	if got := row(t, r, "test_plan"); got.Outcome != New || len(got.Requests) != 2 || got.Requests[0].Confirmed || got.Requests[0].Likely || !got.Requests[1].Likely {
		t.Errorf("one repetition: %+v", got)
	}
	if len(r.New) != 1 || !strings.Contains(r.New[0].What, "likely changed (one repetition; -n 3 confirms): ") || !strings.Contains(r.New[0].What, "by kind: get services 0 -> 2") ||
		len(r.Unconfirmed) != 1 || !strings.Contains(r.Unconfirmed[0].What, "(unconfirmed): get configmaps 3 -> 4") {
		t.Errorf("one repetition: new %+v, unconfirmed %+v", r.New, r.Unconfirmed)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Request counts that differ in one repetition (unconfirmed)") || !strings.Contains(md.String(), "** (likely) |") {
		t.Errorf("report.md does not list the unconfirmed counts:\n%s", md.String())
	}
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `id="unconfirmed"`) || !strings.Contains(page.String(), ">unconfirmed<") {
		t.Errorf("report.html has no unconfirmed section with its badge")
	}
}

// TestOneRepetitionJudgesSizeAndPattern: with one run a side, a build that
// reads twice as much is a new difference in every stage it touches, and
// one that adds a single request in most stages is too (the same
// direction everywhere is no wait loop); one extra poll in one stage stays
// unconfirmed.
func TestOneRepetitionJudgesSizeAndPattern(t *testing.T) {
	run := func(scale func(stage string, n int) int) []*result.Run {
		r := load(t, passRun)
		for i := range r.Stages {
			st := &r.Stages[i]
			st.Requests = map[string]map[string]int{"subject": {"get deployments.apps": scale(st.ID, 20), "list namespaces": scale(st.ID, 4)}}
			total := 0
			for _, n := range st.Requests["subject"] {
				total += n
			}
			if st.Figures == nil {
				st.Figures = map[string]int{}
			}
			st.Figures["subject.api_requests"] = total
		}
		return []*result.Run{r}
	}
	base := run(func(_ string, n int) int { return n })
	doubled := Compare(input(run(func(_ string, n int) int { return 2 * n }), base))
	compared := 0 // every stage of the fixture sends requests
	for _, row := range doubled.Estates[0].Stages {
		if row.Build.Verdict != result.NotApplicable {
			compared++
			if row.Outcome != New || len(likely(row)) != 2 {
				t.Errorf("doubled reads, %s: %+v", row.Stage, row)
			}
		}
	}
	if compared < 3 || len(doubled.New) != compared || len(doubled.Unconfirmed) != 0 {
		t.Errorf("doubled reads: %d stages compared, new %d, unconfirmed %d", compared, len(doubled.New), len(doubled.Unconfirmed))
	}
	onePoll := Compare(input(run(func(id string, n int) int {
		if id == "test_plan" && n == 20 {
			return 21
		}
		return n
	}), base))
	if got := row(t, onePoll, "test_plan"); got.Outcome != Same || len(onePoll.New) != 0 || len(onePoll.Unconfirmed) != 1 {
		t.Errorf("one extra poll in one stage: %+v, new %v, unconfirmed %v", got, onePoll.New, onePoll.Unconfirmed)
	}
	everywhere := Compare(input(run(func(_ string, n int) int {
		if n == 4 {
			return 5
		}
		return n
	}), base))
	if len(everywhere.New) != compared || !strings.Contains(row(t, everywhere, "test_plan").Why, "more requests in") {
		t.Errorf("one more request in every stage: new %d of %d stages, test_plan %+v", len(everywhere.New), compared, row(t, everywhere, "test_plan"))
	}
}

func TestEngineTimeIsFlaggedOnlyOutsideItsSpread(t *testing.T) {
	runs := func(ms ...int) []*result.Run {
		var out []*result.Run
		for _, m := range ms {
			r := load(t, passRun)
			r.OracleReplay = "the run with tofu@1.12.6"
			stageOf(r, "day2_count").Figures["subject.engine_ms"] = m
			out = append(out, r)
		}
		return out
	}
	cases := []struct {
		name         string
		build, base  []int
		flagged      bool
		ratioAtLeast float64
		ratioAtMost  float64
	}{
		{"slower, spreads apart", []int{26000, 27000, 28000}, []int{17000, 18000, 19000}, true, 1.4, 1.6},
		{"slower, spreads overlap", []int{18500, 27000, 28000}, []int{17000, 18000, 19000}, false, 1.4, 1.6},
		{"apart but within the tolerance", []int{19100, 19200, 19300}, []int{18000, 18100, 18200}, false, 1, 1.1},
		{"one repetition has no spread", []int{40000}, []int{18000}, false, 2.2, 2.3},
	}
	for _, c := range cases {
		r := Compare(input(runs(c.build...), runs(c.base...)))
		got := row(t, r, "day2_count").Time
		if got.Flagged != c.flagged || got.Ratio < c.ratioAtLeast || got.Ratio > c.ratioAtMost {
			t.Errorf("%s: %+v", c.name, got)
		}
		if c.flagged && (len(r.Timing) != 1 || r.Timing[0].Stage != "day2_count") {
			t.Errorf("%s: timing list %+v", c.name, r.Timing)
		}
	}
	// The run that recorded the oracle had it live beside it: its time
	// is left out when its side has replayed runs.
	base := runs(18000, 18000)
	base[0].OracleReplay = ""
	stageOf(base[0], "day2_count").Figures["subject.engine_ms"] = 90000
	if got := row(t, Compare(input(runs(18000, 18000), base)), "day2_count").Time; got.Ratio != 1 || got.Samples != 1 {
		t.Errorf("the recording run was timed: %+v", got)
	}
}

func TestRepetitionsThatDisagreeAreUnsteadyNotNew(t *testing.T) {
	r := Compare(input([]*result.Run{load(t, passRun)}, []*result.Run{load(t, passRun), load(t, driftRun)}))
	if got := row(t, r, "drift_reconverge"); got.Outcome != Unsteady || !strings.Contains(got.Why, "baseline's repetitions disagree: pass, fail") {
		t.Errorf("%+v", got)
	}
	if len(r.New) != 0 {
		t.Errorf("new %+v", r.New)
	}
}

func TestARunThatCouldNotHappenIsSaid(t *testing.T) {
	in := input([]*result.Run{load(t, passRun)}, nil)
	in.Estates[0].Baseline = []Rep{{Error: "engine tofu@1.12.6: build failed"}}
	r := Compare(in)
	if len(r.Estates[0].Errors) != 1 || !strings.Contains(r.Estates[0].Errors[0], "baseline #1 could not run: engine tofu@1.12.6: build failed") {
		t.Errorf("errors %v", r.Estates[0].Errors)
	}
	if got := row(t, r, "migrate"); got.Outcome != Unsteady {
		t.Errorf("a stage with one side missing: %+v", got)
	}
}

// Every run's evidence page is written in the layout WriteAll is given.
func TestWriteAllPageFormat(t *testing.T) {
	in := input([]*result.Run{load(t, driftRun)}, []*result.Run{load(t, passRun)})
	for header, opts := range map[string][]evidence.Option{
		"| Stage | Verdict | Time | Checks | Reason |": nil,
		"| Stage | Verdict | Duration | Detail |":      {evidence.WithFormat(evidence.FormatSeed)},
	} {
		dir := t.TempDir()
		if _, _, err := WriteAll(dir, in, opts...); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"ms/build-1/evidence.md", "ms/baseline-1/evidence.md"} {
			page, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil || !bytes.Contains(page, []byte(header)) {
				t.Errorf("%s lacks %q (%v)", p, header, err)
			}
		}
	}
}

func TestTheReportsSayTheSameThings(t *testing.T) {
	in := input([]*result.Run{load(t, driftRun)}, []*result.Run{load(t, passRun)})
	dir := t.TempDir()
	r, paths, err := WriteAll(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5+2*3 || filepath.Base(paths[2]) != HTMLFile || filepath.Base(paths[3]) != SummaryFile || filepath.Base(paths[4]) != JUnitFile {
		t.Fatalf("paths %v", paths)
	}
	for _, p := range []string{"ms/build-1/evidence.md", "ms/baseline-1/run.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("evidence: %v", err)
		}
	}
	md, _ := os.ReadFile(paths[0])
	ht, _ := os.ReadFile(paths[2])
	var js struct {
		Schema string       `json:"schema"`
		New    []Difference `json:"new"`
	}
	raw, _ := os.ReadFile(paths[1])
	if err := json.Unmarshal(raw, &js); err != nil || js.Schema != "gauntlet.compare/v1" || len(js.New) != len(r.New) {
		t.Fatalf("report.json: %v %s %d", err, js.Schema, len(js.New))
	}
	for _, want := range []string{"drift_reconverge", "its group version answers discovery again", "ms/build-1/evidence.md", "ms/baseline-1/evidence.md"} {
		if !bytes.Contains(md, []byte(want)) || !bytes.Contains(ht, []byte(want)) {
			t.Errorf("%q: in markdown %v, in html %v", want, bytes.Contains(md, []byte(want)), bytes.Contains(ht, []byte(want)))
		}
	}
	// New differences lead both pages.
	if i, j := bytes.Index(md, []byte("## New differences")), bytes.Index(md, []byte("## Removed")); i < 0 || j < i {
		t.Errorf("markdown order %d %d", i, j)
	}
	for _, bad := range []string{"http://", "https://", "<script", "<link", " src="} {
		if bytes.Contains(ht, []byte(bad)) {
			t.Errorf("report.html is not self-contained: it has %q", bad)
		}
	}
}

// TestStockAloneAndBothAlikeAreNotTheSame: a stage stopped by stock alone
// on the baseline (the engine did its part) and by both sides on the build
// (the engine stopped where stock did) is a limitation on each, with the
// same text, but the build changed what the engine does: a new difference.
func TestStockAloneAndBothAlikeAreNotTheSame(t *testing.T) {
	base, build := load(t, driftRun), load(t, driftRun)
	for r, sides := range map[*result.Run][]string{base: {"oracle"}, build: {"subject", "oracle"}} {
		st := stageOf(r, "test_plan")
		st.Verdict, st.Checks, st.Breaks = result.Limitation, nil, nil
		st.Detail = "LIMITATION: Error: Missing Resource Identity After Update"
		st.Aborted, st.StoppedBy = "apply: exit status 1", sides
	}
	in := input([]*result.Run{build}, []*result.Run{base})
	got := row(t, Compare(in), "test_plan")
	if got.Outcome != New || !strings.Contains(got.Why, "who stopped the stage") {
		t.Errorf("stopped by stock alone, then by both: %+v", got)
	}
	stageOf(build, "test_plan").StoppedBy = []string{"oracle"}
	if got := row(t, Compare(in), "test_plan"); got.Outcome != Shared {
		t.Errorf("stopped by stock alone on both: %+v", got)
	}
}

// TestSummaryAndJUnitForAPullRequest: a build that reads twice as much
// shows in the summary's headline, its new differences and the table of
// requests before -> after, and fails its stages' JUnit cases.
func TestSummaryAndJUnitForAPullRequest(t *testing.T) {
	run := func(k int) []*result.Run {
		r := load(t, passRun)
		for i := range r.Stages {
			st := &r.Stages[i]
			if st.Verdict != result.Pass {
				continue
			}
			st.Requests = map[string]map[string]int{"subject": {"get deployments.apps": 20 * k}}
			st.Figures["subject.api_requests"] = 20 * k
		}
		return []*result.Run{r}
	}
	r := Compare(input(run(2), run(1)))
	var sum, ju bytes.Buffer
	if err := Summary(&sum, r); err != nil {
		t.Fatal(err)
	}
	s := sum.String()
	for _, want := range []string{"new difference(s)", "**New differences**", "requests likely changed", "| corpus-k8s-metrics-server | test_plan | **NEW** | 20 -> 40 (+100%) |"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(r.New[0].What, "20 -> 40 requests (+100%); by kind: get deployments.apps 20 -> 40") {
		t.Errorf("a request difference does not lead with the stage's total: %q", r.New[0].What)
	}
	if err := JUnit(&ju, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(ju.String(), "<failure "); n != len(r.New) || n == 0 {
		t.Errorf("junit.xml: %d failures for %d new differences:\n%.800s", n, len(r.New), ju.String())
	}
}
