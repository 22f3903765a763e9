package conformance

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The holes of issue 44, each closed by a test that failed on the code
// before it.

func (r *repo) verifyIn() *Ledger {
	r.t.Helper()
	l, err := VerifyIn(context.Background(), Git{Dir: r.dir}, r.ledger(), r.runs())
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

// inputsNow are the inputs a run of estate on substrate has at the tree now.
func (r *repo) inputsNow(estate, substrate string) *Inputs {
	r.t.Helper()
	tree, err := NewTree(context.Background(), r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	in, err := tree.Inputs(estate, substrate, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return in
}

func (r *repo) everyEstateOnLocal() {
	r.t.Helper()
	p := filepath.Join(r.dir, "conformance/requirements.yaml")
	r.write("conformance/requirements.yaml", "every_estate:\n  substrates: [local]\n"+mustRead(r.t, p))
}

func gateOf(t *testing.T, rep *Report) Gate {
	t.Helper()
	g, err := rep.Gate(nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func blockingHas(g Gate, s string) bool { return strings.Contains(strings.Join(g.Blocking, "\n"), s) }

// TestEveryEstateIsRequired: with every_estate, the gate waits for an
// estate with no recorded run (exit 4) and record --stale lists it; once
// recorded at the tree it is proven, and once its run speaks for another
// tree (its estate.yaml changed) it blocks (exit 1).
func TestEveryEstateIsRequired(t *testing.T) {
	r := newRepo(t)
	r.everyEstateOnLocal()
	r.commit("every estate on local")
	r.provenBoth()
	w := r.world()
	w.Estates = []string{"e1", "e2"}
	rep := r.deriveWith(w)
	if g := gateOf(t, rep); g.Code != ExitWaiting || !strings.Contains(strings.Join(g.Waiting, "\n"), "estate e2 on local not-run") || blockingHas(g, "estate e1") {
		t.Errorf("e2 unrecorded: gate %+v, want it waiting for e2's cell alone", g)
	}
	l, _ := Verify(r.ledger(), r.runs())
	needs, err := StaleCells(w, l)
	found := false
	for _, n := range needs {
		found = found || (n.Name() == "e2/local" && n.Missing)
	}
	if err != nil || !found {
		t.Errorf("record --stale: %+v %v, want e2/local missing: what the gate waits for", needs, err)
	}
	r.mustRecord(run{estate: "e2", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{
		{ID: "day2_crash", Verdict: result.NotApplicable, Reason: "one object", Requirements: []string{reqCrash}}}})
	r.commit("e2 recorded")
	rep = r.deriveWith(w)
	for _, e := range rep.Estates {
		if e.Required && e.Proof != Proven {
			t.Errorf("estate cell %+v, want proven", e)
		}
	}
	if g := gateOf(t, rep); blockingHas(g, "estate ") || strings.Contains(strings.Join(g.Waiting, "\n"), "estate ") {
		t.Errorf("every estate recorded: gate %+v", g)
	}
	r.write("estates/e2/estate.yaml", "name: e2\ntitle: edited since its run\n")
	r.commit("e2's estate.yaml edited")
	if g := gateOf(t, r.deriveWith(w)); g.Code != ExitFailed || !blockingHas(g, "estate e2 on local stale") {
		t.Errorf("e2 edited since its run: gate %+v, want it blocked on e2's stale cell", g)
	}
}

// TestFailureStaysUntilRerun: narrowing where a requirement must hold (or
// an estate.yaml declining the stage) does not drop a recorded failure: a
// cell whose latest run failed blocks until a later run of it does not.
func TestFailureStaysUntilRerun(t *testing.T) {
	r := newRepo(t)
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{
		coldPass(), stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.commit("a failing kind run")
	reg := mustRead(t, filepath.Join(r.dir, "conformance/requirements.yaml"))
	r.write("conformance/requirements.yaml", strings.ReplaceAll(reg, "substrates: [local, kind]", "substrates: [local]"))
	r.commit("narrow every requirement to local")
	rep := r.deriveWith(r.world())
	if g := gateOf(t, rep); !blockingHas(g, "estate e1 on kind failed") {
		t.Errorf("a narrowed requirement: gate %+v, want e1 on kind's failure still blocking", g)
	}
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass()}})
	r.commit("kind passes again")
	if g := gateOf(t, r.deriveWith(r.world())); blockingHas(g, "estate e1 on kind") {
		t.Errorf("after a passing run of the cell: gate %+v", g)
	}
}

// TestSabotagedOrReplayedNeverRecorded: a run whose BREAKs skipped their
// corruptions, or whose oracle was replayed from a tape, is never a row.
func TestSabotagedOrReplayedNeverRecorded(t *testing.T) {
	r := newRepo(t)
	in := r.inputsNow("e1", "local")
	ib, _ := in.Encode()
	for name, tamper := range map[string]func(*result.Run){
		"sabotaged": func(r *result.Run) { r.Sabotaged = true },
		"replayed":  func(r *result.Run) { r.OracleReplay = "out/tape/oracle.json" },
	} {
		res := &result.Run{Estate: result.Estate{Name: "e1"}, Subject: pinnedTofu(), Commit: strings.Repeat("ab", 20),
			StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), Stages: []result.Stage{crashPass()}}
		tamper(res)
		rb, _ := json.Marshal(res)
		if _, err := BuildRows(RunID(res, "local"), rb, ib); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("a %s run: %v, want it refused, named", name, err)
		}
	}
}

// TestRunFolderMustBeItsEstates: a run folder moved to another estate (its
// names edited) or missing its pages, or a link, is a ledger problem.
func TestRunFolderMustBeItsEstates(t *testing.T) {
	r := newRepo(t)
	id := r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{crashPass()}})
	r.commit("e1 recorded")
	dir := filepath.Join(r.runs(), id)
	rb := mustRead(t, filepath.Join(dir, RunJSON))
	ib := mustRead(t, filepath.Join(dir, InputsJSON))
	rows, err := BuildRows(id, []byte(rb), []byte(ib))
	if err != nil {
		t.Fatal(err)
	}
	// The same run told as e2's: every name edited, the hashes still e1's.
	moved := strings.ReplaceAll(id, "-e1-", "-e2-")
	rb2 := strings.Replace(rb, `"name": "e1"`, `"name": "e2"`, 1)
	ib2 := strings.Replace(ib, `"estate": "e1"`, `"estate": "e2"`, 1)
	if rb2 == rb || ib2 == ib {
		t.Fatalf("the fixture's names did not change: run.json %q", rb[:min(200, len(rb))])
	}
	if _, err := BuildRows(moved, []byte(rb2), []byte(ib2)); err == nil || !strings.Contains(err.Error(), "another estate's run") {
		t.Errorf("e1's run told as e2's: %v, want it refused", err)
	}
	_ = rows
	for _, f := range []string{EvidenceMD, JUnitXML} {
		p := filepath.Join(dir, f)
		keep := mustRead(t, p)
		os.Remove(p)
		if l := r.verifyIn(); len(l.Problems) == 0 || !strings.Contains(l.Problems[0].What, f) {
			t.Errorf("a folder without %s: problems %v", f, l.Problems)
		}
		r.write(filepath.Join("conformance/runs", id, f), keep)
	}
	// A file linked to the same place in a mirror of the runs folder (as
	// Bazel's runfiles are) speaks for itself; linked to another folder's
	// file, or to a file of another name, it does not.
	mirror := filepath.Join(t.TempDir(), "runs", id)
	os.MkdirAll(filepath.Dir(mirror), 0o755)
	if out, err := exec.Command("cp", "-r", dir, mirror).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	link := func(target string) {
		t.Helper()
		p := filepath.Join(dir, RunJSON)
		os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(mirror, RunJSON))
	if l := r.verifyIn(); len(l.Problems) != 0 {
		t.Errorf("run.json linked to its mirror: problems %v, want none", l.Problems)
	}
	if links, err := (Git{Dir: r.dir}).Links(context.Background(), "conformance"); err != nil || len(links) != 0 {
		t.Errorf("links committed before any: %v %v", links, err)
	}
	r.commit("run.json committed as a link")
	if links, err := (Git{Dir: r.dir}).Links(context.Background(), "conformance"); err != nil || len(links) != 1 || links[0] != filepath.Join("conformance/runs", id, RunJSON) {
		t.Errorf("a committed link: Links = %v %v, want the one run.json", links, err)
	}
	for _, target := range []string{filepath.Join(mirror, InputsJSON), filepath.Join(filepath.Dir(mirror), "other", RunJSON)} {
		os.MkdirAll(filepath.Dir(target), 0o755)
		os.WriteFile(target, []byte(mustRead(t, filepath.Join(mirror, RunJSON))), 0o644)
		link(target)
		if l := r.verifyIn(); len(l.Problems) == 0 || !strings.Contains(l.Problems[0].What, "symbolic link") {
			t.Errorf("run.json linked to %s: problems %v", target, l.Problems)
		}
	}
	link(filepath.Join(mirror, RunJSON))
	os.Remove(filepath.Join(dir, RunJSON))
	r.write(filepath.Join("conformance/runs", id, RunJSON), mustRead(t, filepath.Join(mirror, RunJSON)))

	// The folder replaced by a link to a copy of itself.
	elsewhere := filepath.Join(t.TempDir(), id)
	if out, err := exec.Command("cp", "-r", dir, elsewhere).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.RemoveAll(dir)
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if l := r.verifyIn(); len(l.Problems) == 0 || !strings.Contains(l.Problems[0].What, "symbolic link") {
		t.Errorf("a linked run folder: problems %v", l.Problems)
	}
}

// TestRunMustBeOfThisHistory: a run recorded at a commit HEAD does not
// descend from, or dated before its commit, is a ledger problem.
func TestRunMustBeOfThisHistory(t *testing.T) {
	r := newRepo(t)
	r.git("checkout", "-q", "-b", "side")
	r.write("side.txt", "a commit main never had\n")
	r.commit("side")
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{crashPass()}})
	r.commit("a run at the side commit")
	r.git("checkout", "-q", "main")
	r.git("checkout", "side", "--", "conformance/runs")
	r.commit("the side run's folder and ledger copied to main")
	if l := r.verifyIn(); len(l.Problems) != 1 || !strings.Contains(l.Problems[0].What, "not an ancestor of HEAD") {
		t.Errorf("a run at a commit off this history: problems %v", l.Problems)
	}

	r2 := newRepo(t)
	cmd := exec.Command("git", "commit", "-q", "--allow-empty", "-m", "a commit dated after the run")
	cmd.Dir = r2.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_COMMITTER_DATE=2026-12-02T00:00:00Z")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v %s", err, out)
	}
	r2.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{crashPass()}})
	r2.commit("a run dated 2026-11-30 at a commit of 2026-12-02")
	if l := r2.verifyIn(); len(l.Problems) != 1 || !strings.Contains(l.Problems[0].What, "before its commit") {
		t.Errorf("a run dated before its commit: problems %v", l.Problems)
	}
}

// TestKeptRegistryCannotWiden: a run folder's own copy of the registry
// (inputs.json) cannot add an ID the registry committed at its commit
// lacks - the way a failing stage could claim only a made-up requirement.
func TestKeptRegistryCannotWiden(t *testing.T) {
	r := newRepo(t)
	in := r.inputsNow("e1", "local")
	in.Requirements["GAUNT-MADE-UP-01"] = strings.Repeat("0", 64)
	res := &result.Run{Estate: result.Estate{Name: "e1"}, Subject: pinnedTofu(),
		Oracle: result.Engine{Name: "terraform", Version: "1.11.4", SHA256: tfSHA, Pinned: "1.11.4"}, Substrate: "local substrate",
		Commit: r.git("rev-parse", "HEAD"), StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		Stages: []result.Stage{stg("day2_crash", result.Fail, []string{"GAUNT-MADE-UP-01"})}}
	id := RunID(res, "local")
	rb, _ := json.Marshal(res)
	ib, _ := in.Encode()
	for f, s := range map[string]string{RunJSON: string(rb), InputsJSON: string(ib), EvidenceMD: "# Evidence\n", JUnitXML: "<testsuites/>\n"} {
		r.write(filepath.Join("conformance/runs", id, f), s)
	}
	if _, err := Append(r.ledger(), r.runs(), id); err != nil {
		t.Fatal(err)
	}
	r.commit("a failing stage claiming a made-up requirement")
	if l := r.verifyIn(); len(l.Problems) != 1 || !strings.Contains(l.Problems[0].What, "GAUNT-MADE-UP-01") {
		t.Errorf("a widened registry copy: problems %v", l.Problems)
	}
}

// TestLedgerRewriteInHistory: a ledger line rewritten in one commit and
// followed by any other commit is still found: every commit that changed
// the ledger is checked against its parent, not only the last one.
func TestLedgerRewriteInHistory(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	g := Git{Dir: r.dir}
	if p, err := g.LedgerGrew(context.Background(), "conformance/runs/ledger.jsonl"); err != nil || len(p) != 0 {
		t.Fatalf("an honest history: %v %v", p, err)
	}
	ledger := mustRead(t, r.ledger())
	r.write("conformance/runs/ledger.jsonl", strings.Replace(ledger, `"checks":1`, `"checks":2`, 1))
	r.commit("a row rewritten")
	r.write("unrelated.txt", "any later commit\n")
	r.commit("something else")
	p, err := g.LedgerGrew(context.Background(), "conformance/runs/ledger.jsonl")
	if err != nil || len(p) != 1 || !strings.Contains(p[0], "rewritten") {
		t.Errorf("a rewrite two commits back: %v %v", p, err)
	}
}

// TestBuildFlagsRefused: GOFLAGS that change what is compiled (an overlay,
// a build tag) or a GOEXPERIMENT are refused before a recording, since the
// recorded inputs hash the tree, not the flags.
func TestBuildFlagsRefused(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	if err := CheckModule(ctx, r.dir); err != nil {
		t.Fatalf("no flags: %v", err)
	}
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlay, []byte(`{"Replace":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range []string{"-overlay=" + overlay, "-tags=gauntlet_fake", "-mod=mod -gcflags=all=-N"} {
		t.Setenv("GOFLAGS", flags)
		if err := CheckModule(ctx, r.dir); err == nil || !strings.Contains(err.Error(), "GOFLAGS") {
			t.Errorf("GOFLAGS=%s: %v, want it refused", flags, err)
		}
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	if err := CheckModule(ctx, r.dir); err != nil {
		t.Errorf("GOFLAGS=-mod=mod changes nothing compiled: %v", err)
	}
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOEXPERIMENT", "jsonv2")
	if err := CheckModule(ctx, r.dir); err == nil || !strings.Contains(err.Error(), "GOEXPERIMENT=jsonv2 changes") {
		t.Errorf("a GOEXPERIMENT: %v, want it refused", err)
	}
}
