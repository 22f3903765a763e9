package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The ledger's holes, each reproduced on a scratch repository (issue 24,
// point 7).

// TestLongLineIsAProblem: a line longer than any scanner buffer, followed
// by a failing run, used to end the read there - the failure was never
// seen and the gate passed. Every line is read; the long one is a problem
// at its line, said in a few words (not 5 MiB of it), and one that is not
// even JSON names the fix.
func TestLongLineIsAProblem(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.commit("record a failure")
	raw, err := os.ReadFile(r.ledger())
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(raw)
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	for name, huge := range map[string][]byte{
		"a row naming a 5 MiB run": []byte(`{"v":2,"run":"` + strings.Repeat("x", 5<<20) + `"}`),
		"a 5 MiB line cut off":     []byte(`{"v":2,"run":"` + strings.Repeat("x", 5<<20)),
	} {
		forged := append(bytes.Join(append(append(append([][]byte{}, lines[:4]...), huge), lines[4]), []byte("\n")), '\n')
		if err := os.WriteFile(r.ledger(), forged, 0o644); err != nil {
			t.Fatal(err)
		}
		rep := r.report()
		var at []int
		for _, p := range rep.Problems {
			at = append(at, p.Line)
		}
		switch {
		case len(at) == 0 || at[0] != 5:
			t.Errorf("%s: problems at lines %v, want the long line 5 first", name, at)
		case len(rep.Problems[0].String()) > 1000:
			t.Errorf("%s: the problem is %d bytes long", name, len(rep.Problems[0].String()))
		case strings.Contains(name, "cut off") && !strings.Contains(rep.Problems[0].What, "restore the ledger from git"):
			t.Errorf("%s: the problem does not name the fix: %s", name, rep.Problems[0])
		}
		if g, _ := rep.Gate([]string{reqCrash}); g.Code != ExitFailed {
			t.Errorf("%s: gate with a long line before a failing run: exit %d, want 1", name, g.Code)
		}
		if got := splitLines(append(append(huge, '\n'), lines[4]...)); len(got) != 2 || !bytes.Equal(got[1], lines[4]) {
			t.Errorf("%s: split after a long line: %d lines", name, len(got))
		}
	}
}

// TestLongValidLineIsRead: a row longer than any scanner buffer (a stage
// reason of 5 MiB) is a row like any other, and the failing run recorded
// after it still fails the gate.
func TestLongValidLineIsRead(t *testing.T) {
	r := newRepo(t)
	long := result.Stage{ID: "strict", Verdict: result.NotRun, Reason: strings.Repeat("x", 5<<20), Requirements: []string{"GAUNT-LIVE-STRICT-01"}}
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{long}})
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.commit("a long row, then a failure")
	l := r.verified()
	if len(l.Rows) != 2 || len(l.Rows[0].Reason) != 5<<20 {
		t.Fatalf("%d rows, want the long one and the failure", len(l.Rows))
	}
	wantProof(t, r.report(), reqCrash, Failed, "ended fail")
}

// TestRuncPinIsKinds: gauntlet-runc runs every kind container, so its pin
// is in the kind substrate's set: bumping it makes kind proofs stale and
// leaves local ones alone. A group no substrate names is refused.
func TestRuncPinIsKinds(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	r.pinsRunc("1.12.6", tofuSHA, "0.8.0", "img@sha256:1", "2")
	r.commit("bump gauntlet-runc")
	rep := r.report()
	wantProof(t, rep, reqCold, Stale, "pin docker-engine:gauntlet-runc")
	for _, cp := range proofOf(t, rep, reqCrash).Cells {
		want := Proven
		if cp.Cell.Substrate == "kind" {
			want = Stale
		}
		if cp.Proof != want {
			t.Errorf("%s after a gauntlet-runc bump: %s (%s), want %s", cp.Cell, cp.Proof, cp.Why, want)
		}
	}
	pins := mustRead(t, filepath.Join(r.dir, "third_party/pins.json"))
	r.write("third_party/pins.json", strings.Replace(pins, `"group":"docker-engine"`, `"group":"mystery"`, 1))
	if _, err := NewTree(context.Background(), r.dir); err == nil || !strings.Contains(err.Error(), `group "mystery"`) {
		t.Errorf("a pin in no substrate's set: %v", err)
	}
}

// TestRequirementEntryKeysProofs: a proof is about the requirement as the
// registry states it when the run was recorded. Rewording the statement or
// narrowing the substrates makes it stale; reflowing the text does not,
// and other requirements' proofs stay.
func TestRequirementEntryKeysProofs(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	regPath := filepath.Join(r.dir, "conformance/requirements.yaml")
	orig := mustRead(t, regPath)
	edit := func(old, new string) {
		t.Helper()
		if !strings.Contains(orig, old) {
			t.Fatalf("no %q in the registry", old)
		}
		r.write("conformance/requirements.yaml", strings.Replace(orig, old, new, 1))
		r.commit("edit the registry")
	}
	edit("statement: crash, estates", "statement: a crash leaves the state as it was, estates")
	wantProof(t, r.report(), reqCrash, Stale, reqCrash+"'s registry entry")
	wantProof(t, r.report(), reqCold, Proven, "")

	edit("statement: crash, estates: [e1], substrates: [local, kind]", "statement: crash, estates: [e1], substrates: [local]")
	wantProof(t, r.report(), reqCrash, Stale, "registry entry")

	edit("statement: crash, estates", "statement: \"crash \", estates")
	wantProof(t, r.report(), reqCrash, Proven, "")
}

// TestUnknownRequirementInRun: a stage that claims a requirement the
// registry does not have is refused at record time, and a folder saying
// so never verifies.
func TestUnknownRequirementInRun(t *testing.T) {
	r := newRepo(t)
	_, err := r.record(run{estate: "e1", substrate: "local", engine: pinnedTofu(),
		stages: []result.Stage{stg("day2_crash", result.Pass, []string{reqCrash, "GAUNT-NOPE-01"}, proved("x"))}})
	if err == nil || !strings.Contains(err.Error(), "GAUNT-NOPE-01") {
		t.Errorf("a run claiming an unregistered requirement: %v", err)
	}
	if l, err := Verify(r.ledger(), r.runs()); err != nil || len(l.Rows) != 0 {
		t.Errorf("rows %v, %v", l, err)
	}
}

// TestUnknownRequirementInOldRun: a run that kept no registry of its own
// (recorded before inputs.json did, or a folder written without one) is
// checked against the registry committed at its commit once the ledger is
// verified in its repository: a stage claiming an ID absent there is a
// problem, not ignored; one claiming only known IDs verifies.
func TestUnknownRequirementInOldRun(t *testing.T) {
	r := newRepo(t)
	verifyIn := func() *Ledger {
		t.Helper()
		l, err := VerifyIn(context.Background(), Git{Dir: r.dir}, r.ledger(), r.runs())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), noRegistry: true, stages: []result.Stage{crashPass()}})
	r.commit("an old-style run")
	if l := verifyIn(); len(l.Problems) != 0 || len(l.Rows) != 1 {
		t.Fatalf("an old-style run claiming a known requirement: problems %v, %d rows", l.Problems, len(l.Rows))
	}
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), noRegistry: true,
		stages: []result.Stage{stg("day2_crash", result.Pass, []string{reqCrash, "GAUNT-NOPE-01"}, proved("x"))}})
	r.commit("an old-style run claiming an unknown requirement")
	l := verifyIn()
	if len(l.Problems) != 1 || !strings.Contains(l.Problems[0].What, "GAUNT-NOPE-01") || !strings.Contains(l.Problems[0].What, "at its commit") || len(l.Rows) != 1 {
		t.Errorf("problems %v, %d rows; want GAUNT-NOPE-01 named and only the first run's row", l.Problems, len(l.Rows))
	}

	// A first-format row, the same.
	res := result.Run{Estate: result.Estate{Name: "e1"}, Commit: r.git("rev-parse", "HEAD"), StartedAt: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		Stages: []result.Stage{{ID: "day2_crash", Verdict: result.Pass, Requirements: []string{"GAUNT-OLD-01"}}}}
	row := rowsV1(&res)[0]
	rb, _ := json.Marshal(res)
	line, _ := json.Marshal(row)
	r.write(filepath.Join("conformance/runs", row.Run, RunJSON), string(rb))
	r.write("conformance/runs/ledger.jsonl", string(line)+"\n")
	r.commit("a first-format run claiming an unknown requirement")
	if l := verifyIn(); len(l.Problems) != 1 || !strings.Contains(l.Problems[0].What, "GAUNT-OLD-01") || len(l.History) != 0 {
		t.Errorf("a first-format row: problems %v, %d history rows; want GAUNT-OLD-01 named", l.Problems, len(l.History))
	}
}

// TestBaseNeedsHistory: where this clone cannot say what the ledger must
// have grown from, Base says why and gives no revision (hygiene fails on
// it); on a branch it is the merge base, on main the previous commit.
func TestBaseNeedsHistory(t *testing.T) {
	r := newRepo(t)
	g := Git{Dir: r.dir}
	ctx := context.Background()
	if rev, why, err := g.Base(ctx); err != nil || rev != "" || !strings.Contains(why, "first commit") {
		t.Errorf("main's first commit: %q %q %v", rev, why, err)
	}
	first := r.git("rev-parse", "HEAD")
	r.write("a", "a\n")
	r.commit("second")
	if rev, _, err := g.Base(ctx); err != nil || rev != first {
		t.Errorf("on main: %q %v, want the previous commit %s", rev, err, first)
	}
	second := r.git("rev-parse", "HEAD")
	r.git("checkout", "-q", "-b", "feature")
	r.write("b", "b\n")
	r.commit("feature")
	r.write("c", "c\n")
	r.commit("feature 2")
	if rev, _, err := g.Base(ctx); err != nil || rev != second {
		t.Errorf("on a branch: %q %v, want the merge base %s", rev, err, second)
	}
	r.git("checkout", "-q", "--orphan", "stray")
	r.commit("unrelated")
	if rev, why, err := g.Base(ctx); err != nil || rev != "" || !strings.Contains(why, "no merge base") {
		t.Errorf("unrelated history: %q %q %v", rev, why, err)
	}
	shallow := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "--branch", "feature", "file://"+r.dir, shallow).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	if rev, why, err := (Git{Dir: shallow}).Base(ctx); err != nil || rev != "" || !strings.Contains(why, "shallow") {
		t.Errorf("a shallow clone: %q %q %v", rev, why, err)
	}
	noMain := filepath.Join(t.TempDir(), "nomain")
	if out, err := exec.Command("git", "clone", "-q", "--single-branch", "--branch", "stray", r.dir, noMain).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	if rev, why, err := (Git{Dir: noMain}).Base(ctx); err != nil || rev != "" || !strings.Contains(why, "no main") {
		t.Errorf("a clone with no main: %q %q %v", rev, why, err)
	}
}

// TestEveryEstateThatExercisesIt: a requirement is proven only when every
// estate whose pinned runs exercise it is, not only those the registry
// lists: a failure of another estate fails it, and an unpinned engine's
// cell still never counts.
func TestEveryEstateThatExercisesIt(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	r.mustRecord(run{estate: "e2", substrate: "local", engine: result.Engine{Name: "someengine", Version: "0.0.1", SHA256: "ff"},
		stages: []result.Stage{stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.commit("an unpinned failure on e2")
	wantProof(t, r.report(), reqCrash, Proven, "")
	r.mustRecord(run{estate: "e2", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.commit("a pinned failure on e2")
	rep := r.report()
	wantProof(t, rep, reqCrash, Failed, "e2 on local")
	// e2 runs on kind are not asked for cold (it must hold on kind): e2
	// ran it on local only, a substrate cold is not required on.
	wantProof(t, rep, reqCold, Proven, "")
	if g, _ := rep.Gate(nil); g.Code != ExitFailed {
		t.Errorf("--require-all with a failing estate the registry does not list: exit %d, want 1", g.Code)
	}
}

// TestMatrixReadableAtManyEstates: the text view groups cells by estate
// with a column per substrate and wraps reasons, so 20 estates on two
// substrates and two engines stay within a terminal's width.
func TestMatrixReadableAtManyEstates(t *testing.T) {
	rep := &Report{}
	why := strings.Repeat("a long reason that names a run and what changed since it was recorded ", 4)
	for q := 0; q < 3; q++ {
		st := Status{ID: fmt.Sprintf("GAUNT-AREA-%02d", q), Proof: Stale, Why: why}
		for e := 0; e < 20; e++ {
			for _, sub := range []string{"local", "kind"} {
				for _, eng := range []string{"tofu 1.12.6 5f90ff69380f", "tofu 1.9.4 0123456789ab"} {
					c := Cell{Estate: fmt.Sprintf("corpus-estate-%02d", e), Substrate: sub, Engine: eng, Oracle: "terraform 1.11.4 84edd96340c8"}
					st.Cells = append(st.Cells, CellProof{Cell: c, Proof: Stale, Why: why, Required: strings.HasPrefix(eng, "tofu 1.12.6")})
					if q == 0 {
						rep.Columns = append(rep.Columns, c)
					}
				}
			}
		}
		rep.Requirements = append(rep.Requirements, st)
	}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, l := range strings.Split(b.String(), "\n") {
		longest = max(longest, len(l))
	}
	if longest > 160 {
		t.Errorf("the longest line is %d characters, want at most 160:\n%s", longest, b.String()[:min(b.Len(), 3000)])
	}
	if !strings.Contains(b.String(), "\ncorpus-estate-07\n") {
		t.Error("no heading for estate 07")
	}
}

// TestIgnores: a folder under an ignored directory is inside and ignored
// (a bisection's probes stay clean there), one elsewhere in the checkout
// is inside and not ignored, and one outside the checkout is neither.
func TestIgnores(t *testing.T) {
	r := newRepo(t) // its .gitignore ignores /out/
	g, ctx := Git{Dir: r.dir}, context.Background()
	for _, c := range []struct {
		path            string
		inside, ignored bool
	}{
		{filepath.Join(r.dir, "out", "bisect", "x"), true, true},
		{filepath.Join(r.dir, "conformance", "bugs", "bisect", "x"), true, false},
		{filepath.Join(t.TempDir(), "elsewhere"), false, false},
	} {
		inside, ignored, err := g.Ignores(ctx, c.path)
		if err != nil || inside != c.inside || ignored != c.ignored {
			t.Errorf("Ignores(%s) = inside %v, ignored %v, %v; want %v, %v", c.path, inside, ignored, err, c.inside, c.ignored)
		}
	}
}
