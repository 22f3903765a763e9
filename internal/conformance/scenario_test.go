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

// The scenarios below run on a small temporary git repository shaped like
// gauntlet's: a Go module whose CLI (tools/gauntlet) runs pkg/gauntlet,
// an unrelated package, pins, an estate and a ledger. A run is
// pkg/gauntlet (which imports pkg/stage); the CLI adds a renderer. No cluster runs:
// the runs are result.Run values written into real run folders.

const (
	tofuSHA  = "5f90ff69380fa0070ec9ec7288e6d9b2b4047f722cc3bac52e7069497589b135"
	tfSHA    = "84edd96340c84edd96340c84edd96340c84edd96340c84edd96340c84edd9634"
	reqCrash = "GAUNT-DAY2-CRASH-01"
	reqCold  = "GAUNT-COLD-01"
)

type repo struct {
	t   *testing.T
	dir string
	n   int
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	needTools(t)
	r := &repo{t: t, dir: t.TempDir()}
	r.write("go.mod", "module example.com/g\n\ngo 1.22\n")
	r.write("tools/gauntlet/main.go", "package main\n\nimport (\n\t_ \"example.com/g/pkg/evidence\"\n\t_ \"example.com/g/pkg/gauntlet\"\n)\n\nfunc main() {}\n")
	r.write("pkg/gauntlet/run.go", "package gauntlet\n\nimport _ \"example.com/g/pkg/stage\"\n")
	r.write("pkg/evidence/page.go", "package evidence\n\n// Title heads a page.\nconst Title = \"evidence\"\n")
	r.write("pkg/stage/record.go", "package stage\n\n// Failed says whether a check failed.\nfunc Failed() bool { return true }\n")
	r.write("pkg/unrelated/u.go", "package unrelated\n")
	r.write("estates/e1/estate.yaml", "name: e1\nsource:\n  sha256: aaaa\n")
	r.write("estates/e2/estate.yaml", "name: e2\n")
	r.write("third_party/tools/kwok/tool.mod", "module kwok\n")
	r.write(".gitignore", "/out/\n")
	r.pins("1.12.6", tofuSHA, "0.8.0", "img@sha256:1")
	r.write("conformance/requirements.yaml", `requirements:
  - {id: GAUNT-COLD-01, statement: cold, estates: [e1], substrates: [kind]}
  - {id: GAUNT-DAY2-CRASH-01, statement: crash, estates: [e1], substrates: [local, kind]}
  - {id: GAUNT-LIVE-STRICT-01, statement: live, estates: [e1], substrates: [local], gap: no pinned engine has live mode}
`)
	r.git("init", "-q", "-b", "main")
	r.commit("start")
	return r
}

func (r *repo) pins(tofu, sha, kwok, image string) {
	r.pinsRunc(tofu, sha, kwok, image, "1")
}

// pinsRunc is pins with the version of gauntlet-runc, which every kind
// container runs through.
func (r *repo) pinsRunc(tofu, sha, kwok, image, runc string) {
	r.write("third_party/pins.json", fmt.Sprintf(`{"schema":1,"go":"go1.26.8","tools":[
 {"name":"tofu","version":%q,"role":"subject","sha256":%q},
 {"name":"terraform","version":"1.11.4","role":"oracle"},
 {"name":"kwok","version":%q,"wrapper":{"dir":"kwok"}},
 {"name":"kubelet","version":"1.37.2","group":"kind-node"},
 {"name":"gauntlet-runc","version":%q,"group":"docker-engine"},
 {"name":"terraform-provider-random","version":"3.9.0"}],
 "providers":[{"namespace":"hashicorp","type":"random","version":"3.9.0","tool":"terraform-provider-random"}],
 "provider_hosts":["example.invalid"],
 "kind":{"version":"v0.33.0","node_images":[{"image":%q}]}}`, tofu, sha, kwok, runc, image))
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", testCommitDate)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) commit(msg string) string {
	r.git("add", "-A")
	r.git("commit", "-qm", msg)
	return r.git("rev-parse", "HEAD")
}

func (r *repo) ledger() string { return filepath.Join(r.dir, "conformance", "runs", "ledger.jsonl") }
func (r *repo) runs() string   { return filepath.Join(r.dir, "conformance", "runs") }

// run is one synthetic run's shape.
type run struct {
	estate, substrate string
	engine            result.Engine
	stages            []result.Stage
	selected          []string
	cancelled         bool
	// clis are the engine pin keys the run used (none: today's pair).
	clis []string
	// noRegistry records it as runs were before inputs.json kept the
	// registry entries.
	noRegistry bool
}

func pinnedTofu() result.Engine {
	return result.Engine{Name: "tofu", Version: "1.12.6", SHA256: tofuSHA, Pinned: "1.12.6"}
}

func proved(name string) result.Check {
	return result.Check{Name: name, Verdict: result.Pass, ProvedBy: []string{"break-" + name}}
}

func stg(id string, v result.Verdict, reqs []string, checks ...result.Check) result.Stage {
	return result.Stage{ID: id, Verdict: v, Requirements: reqs, Checks: checks,
		Breaks: []result.Break{{Name: "b", Outcome: result.Proved, Failed: true, Side: "subject"}}}
}

func crashPass() result.Stage {
	return stg("day2_crash", result.Pass, []string{reqCrash}, proved("remainder"))
}

func coldPass() result.Stage {
	return stg("cold_deploy", result.Pass, []string{reqCold}, proved("live"))
}

// record writes a run folder the way `run --record` does (run.json,
// inputs.json from the tree now) and appends its rows; it returns the id.
func (r *repo) record(rn run) (string, error) {
	r.t.Helper()
	r.n++
	tree, err := NewTree(context.Background(), r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	in, err := tree.Inputs(rn.estate, rn.substrate, rn.selected, rn.clis...)
	if err != nil {
		r.t.Fatal(err)
	}
	if rn.noRegistry {
		in.Requirements = nil
	}
	res := &result.Run{
		Estate: result.Estate{Name: rn.estate}, Subject: rn.engine,
		Oracle:    result.Engine{Name: "terraform", Version: "1.11.4", SHA256: tfSHA, Pinned: "1.11.4"},
		Substrate: rn.substrate + " substrate", Commit: r.git("rev-parse", "HEAD"),
		StartedAt: time.Date(2026, 11, 30, 10, r.n, 0, 0, time.UTC), Stages: rn.stages,
	}
	if rn.cancelled {
		res.Cancelled = &result.Cancellation{Stage: "day2_crash", Signal: "interrupt"}
	}
	id := RunID(res, rn.substrate)
	dir := filepath.Join(r.runs(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	rb, _ := json.MarshalIndent(res, "", " ")
	ib, _ := in.Encode()
	r.write(filepath.Join("conformance", "runs", id, RunJSON), string(rb))
	r.write(filepath.Join("conformance", "runs", id, InputsJSON), string(ib))
	r.write(filepath.Join("conformance/runs", id, EvidenceMD), "# Evidence\n")
	r.write(filepath.Join("conformance/runs", id, JUnitXML), "<testsuites/>\n")
	if _, err := Append(r.ledger(), r.runs(), id); err != nil {
		os.RemoveAll(dir)
		return id, err
	}
	return id, nil
}

func (r *repo) mustRecord(rn run) string {
	r.t.Helper()
	id, err := r.record(rn)
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}

// report derives the status of the repository as `gauntlet status` does.
func (r *repo) report() *Report {
	r.t.Helper()
	reg, err := LoadRegistry(filepath.Join(r.dir, "conformance", "requirements.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	l, err := Verify(r.ledger(), r.runs())
	if err != nil {
		r.t.Fatal(err)
	}
	tree, err := NewTree(context.Background(), r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	v, sha, _ := tree.PinnedCLI("tofu")
	w := World{
		Registry: reg, Current: tree,
		Coverage:   ComputeCoverage(reg, map[string][]string{"cold_deploy": {reqCold}, "day2_crash": {reqCrash}, "strict": {"GAUNT-LIVE-STRICT-01"}}),
		Needs:      map[string][]string{"strict": {"live mode"}},
		SubjectHas: func(c string) bool { return c != "live mode" },
		Engine:     PinnedCLI{Name: "tofu", Version: v, SHA256: sha},
		Oracle:     PinnedCLI{Name: "terraform", Version: "1.11.4"},
	}
	rep, err := Derive(w, l)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

func proofOf(t *testing.T, rep *Report, id string) Status {
	t.Helper()
	for _, s := range rep.Requirements {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no requirement %s", id)
	return Status{}
}

func wantProof(t *testing.T, rep *Report, id string, want Proof, whyHas string) {
	t.Helper()
	s := proofOf(t, rep, id)
	if s.Proof != want || !strings.Contains(s.Why, whyHas) {
		t.Errorf("%s: %s (%s), want %s mentioning %q", id, s.Proof, s.Why, want, whyHas)
	}
}

// provenBoth records passing runs of e1 on local and kind.
func (r *repo) provenBoth() {
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass()}})
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass()}})
	r.commit("record")
}

// TestMaskingPass: a failure of metrics-server's crash stage followed by
// a pass from another estate and an unknown engine must stay failed; so
// must a later pass in the same cell at the same inputs (flaky).
func TestMaskingPass(t *testing.T) {
	r := newRepo(t)
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.mustRecord(run{estate: "e2", substrate: "local", engine: result.Engine{Name: "someengine", Version: "0.0.1", SHA256: "ff"}, stages: []result.Stage{crashPass()}})
	r.commit("record")
	rep := r.report()
	wantProof(t, rep, reqCrash, Failed, "ended fail")
	// The other cell is shown, proven, and not required.
	for _, cp := range proofOf(t, rep, reqCrash).Cells {
		if cp.Cell.Estate == "e2" && (cp.Required || cp.Proof != Proven) {
			t.Errorf("the unpinned cell: %+v", cp)
		}
	}
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{crashPass()}})
	r.commit("record a pass")
	wantProof(t, r.report(), reqCrash, Failed, "ended fail")
	if g, _ := r.report().Gate([]string{reqCrash}); g.Code != ExitFailed {
		t.Errorf("gate %+v", g)
	}
}

// TestForgedRows: a hand-written row, an edited verdict, a removed line
// and a copied run are rejected, and fail every gate.
func TestForgedRows(t *testing.T) {
	r := newRepo(t)
	id := r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{stg("day2_crash", result.Fail, []string{reqCrash})}})
	r.commit("record")
	orig, _ := os.ReadFile(r.ledger())

	forge := func(name string, edit func([]byte) []byte, whyHas string) {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(r.ledger(), edit(append([]byte{}, orig...)), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(r.ledger(), orig, 0o644)
			rep := r.report()
			found := false
			for _, p := range rep.Problems {
				found = found || strings.Contains(p.What, whyHas)
			}
			if !found {
				t.Errorf("problems %v, want one mentioning %q", rep.Problems, whyHas)
			}
			if s := proofOf(t, rep, reqCrash); s.Proof == Proven {
				t.Errorf("a forged row proves %s", reqCrash)
			}
			if g, _ := rep.Gate([]string{reqCrash}); g.Code != ExitFailed {
				t.Errorf("gate %d, want 1", g.Code)
			}
		})
	}
	t.Run("no row is appended to a forged ledger", func(t *testing.T) {
		forged := bytes.Replace(orig, []byte(`"verdict":"fail"`), []byte(`"verdict":"pass"`), 1)
		if err := os.WriteFile(r.ledger(), forged, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(r.ledger(), orig, 0o644)
		if _, err := r.record(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{crashPass()}}); err == nil || !strings.Contains(err.Error(), "problem") {
			t.Errorf("appended to a forged ledger: %v", err)
		}
	})
	forge("hand-written row, no folder", func(b []byte) []byte {
		line := strings.ReplaceAll(strings.TrimSpace(string(b)), id, "20261130T000000Z-e1-local-0123456789ab")
		line = strings.ReplaceAll(line, `"verdict":"fail"`, `"verdict":"pass"`)
		return append(b, []byte(line+"\n")...)
	}, "no run folder")
	forge("edited verdict", func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"verdict":"fail"`), []byte(`"verdict":"pass"`), 1)
	}, "field verdict")
	forge("unknown field", func(b []byte) []byte {
		return bytes.Replace(b, []byte(`{"v":2,`), []byte(`{"v":2,"proven":true,`), 1)
	}, "unknown field")
	forge("run appended twice", func(b []byte) []byte { return append(b, b...) }, "extra line")
	forge("run.json edited after recording", func(b []byte) []byte {
		p := filepath.Join(r.runs(), id, RunJSON)
		raw, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.ReplaceAll(raw, []byte(`"fail"`), []byte(`"pass"`)), 0o644)
		t.Cleanup(func() { os.WriteFile(p, raw, 0o644) })
		return b
	}, "field run_sha256")
}

// TestChainAndAppendOnly: a line removed from the middle breaks the chain;
// the hygiene check sees a rewritten or dropped line against the base.
func TestChainAndAppendOnly(t *testing.T) {
	r := newRepo(t)
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass()}})
	base := r.commit("record one")
	then, _ := os.ReadFile(r.ledger())
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass()}})
	r.commit("record two")
	now, _ := os.ReadFile(r.ledger())

	g := Git{Dir: r.dir}
	at, ok, err := g.Show(context.Background(), base, "conformance/runs/ledger.jsonl")
	if err != nil || !ok || !bytes.Equal(at, then) {
		t.Fatalf("show: %v %v", ok, err)
	}
	if err := AppendOnly(at, now); err != nil {
		t.Errorf("an append: %v", err)
	}
	lines := splitLines(now)
	rewritten := bytes.Join([][]byte{lines[0], bytes.Replace(lines[1], []byte("pass"), []byte("fail"), 1), lines[2], lines[3]}, []byte("\n"))
	if err := AppendOnly(at, append(rewritten, '\n')); err == nil || !strings.Contains(err.Error(), "line 2 was rewritten") {
		t.Errorf("a rewritten line: %v", err)
	}
	if err := AppendOnly(at, append(lines[0], '\n')); err == nil {
		t.Error("a dropped line passed")
	}
	// Drop line 3 (the first of run two): line 4 no longer chains.
	dropped := bytes.Join([][]byte{lines[0], lines[1], lines[3]}, []byte("\n"))
	l := verifyLines(splitLines(dropped), r.runs(), nil)
	if len(l.Problems) == 0 {
		t.Error("a dropped line went unnoticed")
	}
	if rev, _, err := g.Base(context.Background()); err != nil || rev != base {
		t.Errorf("base on main: %s %v, want the previous commit %s", rev, err, base)
	}
}

// TestPinBump: a pin invalidates exactly the proofs that used it.
func TestPinBump(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	rep := r.report()
	wantProof(t, rep, reqCrash, Proven, "proved by a BREAK")
	wantProof(t, rep, reqCold, Proven, "")

	r.pins("1.12.6", tofuSHA, "0.8.1", "img@sha256:1") // a local-substrate pin
	r.commit("bump kwok")
	rep = r.report()
	wantProof(t, rep, reqCrash, Stale, "pin local:kwok")
	wantProof(t, rep, reqCold, Proven, "") // required on kind only: kind did not use kwok

	r.pins("1.12.6", tofuSHA, "0.8.1", "img@sha256:2") // the kind node image
	r.commit("bump the node image")
	wantProof(t, r.report(), reqCold, Stale, "pin kind")

	r.pins("1.12.7", strings.Repeat("1", 64), "0.8.1", "img@sha256:2") // the engine itself
	r.commit("bump tofu")
	wantProof(t, r.report(), reqCold, NotRun, "pinned tofu 1.12.7")
}

// TestSharedCodeChange: a change to any file compiled into the runner
// makes every proof stale and names the file; a package outside the
// closure changes nothing. No requirement lists paths.
func TestSharedCodeChange(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	r.write("pkg/unrelated/u.go", "package unrelated\n\nvar X = 1\n")
	r.commit("unrelated")
	wantProof(t, r.report(), reqCrash, Proven, "")
	r.write("pkg/stage/record.go", "package stage\n\n// Failed ignores held BREAKs now.\nfunc Failed() bool { return false }\n")
	r.commit("weaken record.go")
	wantProof(t, r.report(), reqCrash, Stale, "pkg/stage/record.go")
	wantProof(t, r.report(), reqCold, Stale, "pkg/stage/record.go")
	r.write("estates/e1/estate.yaml", "name: e1\nsource:\n  sha256: bbbb\n")
	r.commit("new corpus")
	wantProof(t, r.report(), reqCrash, Stale, "corpus file sha256")
}

// TestUntrackedFile: an untracked, not ignored file makes the tree dirty
// (and an ignored one does not), and a new .go file in a runner package
// joins the closure.
func TestUntrackedFile(t *testing.T) {
	r := newRepo(t)
	g := Git{Dir: r.dir}
	r.write("out/evidence.md", "ignored\n")
	if d, err := g.Dirty(context.Background()); err != nil || len(d) != 0 {
		t.Fatalf("an ignored file: %v %v", d, err)
	}
	r.write("pkg/stage/extra.go", "package stage\n")
	d, err := g.Dirty(context.Background())
	if err != nil || len(d) != 1 || !strings.HasPrefix(d[0], "pkg/stage/extra.go") {
		t.Fatalf("dirty %v %v", d, err)
	}
	tree, err := NewTree(context.Background(), r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if in, _ := tree.Inputs("e1", "local", nil); in.Code["pkg/stage/extra.go"] == "" {
		t.Errorf("the untracked file is not in the closure: %v", in.Code)
	}
}

// TestRecordRefuses: a cancelled run and a run from uncommitted changes
// are never recorded; a --stages subset records only its stages.
func TestRecordRefuses(t *testing.T) {
	r := newRepo(t)
	if _, err := r.record(run{estate: "e1", substrate: "local", engine: pinnedTofu(), cancelled: true, stages: []result.Stage{crashPass()}}); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("a cancelled run: %v", err)
	}
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), selected: []string{"day2_crash"},
		stages: []result.Stage{coldPass(), crashPass()}})
	l, err := Verify(r.ledger(), r.runs())
	if err != nil || len(l.Problems) > 0 || len(l.Rows) != 1 || l.Rows[0].Stage != "day2_crash" {
		t.Errorf("a --stages day2_crash run recorded %+v (%v %v)", l.Rows, l.Problems, err)
	}
	// not_applicable is a stage's verdict only: a check that claims it is
	// refused like any unknown verdict.
	na := crashPass()
	na.Checks[0].Verdict = result.NotApplicable
	if _, err := r.record(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{na}}); err == nil || !strings.Contains(err.Error(), `unknown verdict "not_applicable"`) {
		t.Errorf("a check not applicable: %v", err)
	}
	if _, err := BuildRows("x", []byte(`{"commit":"abc-dirty","estate":{"name":"e1"}}`), []byte(`{"schema":"gauntlet.inputs/v1","estate":"e1"}`)); err == nil {
		t.Error("a dirty run was accepted")
	}
}

// TestProofRules: partial, unbacked, not run, unprovable and the gates'
// exit codes.
func TestProofRules(t *testing.T) {
	notRun := result.Check{Name: "apiservice", Verdict: result.NotRun}
	legacy := result.Check{Name: "old", Verdict: result.Pass}
	for name, tc := range map[string]struct {
		local, kind []result.Stage
		kindEngine  *result.Engine
		ids         []string
		want        Proof
		code        int
	}{
		"proven on both":                       {local: []result.Stage{crashPass()}, kind: []result.Stage{crashPass()}, ids: []string{reqCrash}, want: Proven, code: ExitProven},
		"one substrate unrecorded":             {local: []result.Stage{crashPass()}, ids: []string{reqCrash}, want: NotRun, code: ExitWaiting},
		"a check not run: partial":             {local: []result.Stage{crashPass()}, kind: []result.Stage{stg("day2_crash", result.Pass, []string{reqCrash}, proved("a"), notRun)}, ids: []string{reqCrash}, want: Partial, code: ExitWaiting},
		"before check-level proof":             {local: []result.Stage{crashPass()}, kind: []result.Stage{stg("day2_crash", result.Pass, []string{reqCrash}, legacy)}, ids: []string{reqCrash}, want: Unbacked, code: ExitFailed},
		"a BREAK that held":                    {local: []result.Stage{crashPass()}, kind: []result.Stage{func() result.Stage { s := crashPass(); s.Breaks[0].Outcome = result.Held; return s }()}, ids: []string{reqCrash}, want: Failed, code: ExitFailed},
		"stage not run":                        {local: []result.Stage{crashPass()}, kind: []result.Stage{{ID: "day2_crash", Verdict: result.NotRun, Reason: "engine has no x", Requirements: []string{reqCrash}}}, ids: []string{reqCrash}, want: NotRun, code: ExitWaiting},
		"stage not applicable":                 {local: []result.Stage{crashPass()}, kind: []result.Stage{{ID: "day2_crash", Verdict: result.NotApplicable, Reason: "the root has one kubernetes object", Requirements: []string{reqCrash}}}, ids: []string{reqCrash}, want: NotRun, code: ExitWaiting},
		"not applicable on both":               {local: []result.Stage{{ID: "day2_crash", Verdict: result.NotApplicable, Reason: "the root has one kubernetes object", Requirements: []string{reqCrash}}}, kind: []result.Stage{{ID: "day2_crash", Verdict: result.NotApplicable, Reason: "the root has one kubernetes object", Requirements: []string{reqCrash}}}, ids: []string{reqCrash}, want: NotRun, code: ExitWaiting},
		"an unpinned engine is never green":    {local: []result.Stage{crashPass()}, kind: []result.Stage{crashPass()}, kindEngine: &result.Engine{Name: "tofu", Version: "1.12.6", SHA256: tofuSHA}, ids: []string{reqCrash}, want: NotRun, code: ExitWaiting},
		"another binary of the pinned version": {local: []result.Stage{crashPass()}, kind: []result.Stage{crashPass()}, kindEngine: &result.Engine{Name: "tofu", Version: "1.12.6", SHA256: "ab", Pinned: "1.12.6"}, ids: []string{reqCrash}, want: NotRun, code: ExitWaiting},
		"a gap is let through":                 {local: []result.Stage{crashPass()}, kind: []result.Stage{crashPass()}, ids: []string{"GAUNT-LIVE-STRICT-01", reqCrash}, want: Proven, code: ExitProven},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			if tc.local != nil {
				r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: tc.local})
			}
			if tc.kind != nil {
				e := pinnedTofu()
				if tc.kindEngine != nil {
					e = *tc.kindEngine
				}
				r.mustRecord(run{estate: "e1", substrate: "kind", engine: e, stages: tc.kind})
			}
			r.commit("record")
			rep := r.report()
			wantProof(t, rep, reqCrash, tc.want, "")
			g, err := rep.Gate(tc.ids)
			if err != nil || g.Code != tc.code {
				t.Errorf("gate %+v, %v; want exit %d", g, err, tc.code)
			}
		})
	}
	r := newRepo(t)
	r.provenBoth()
	rep := r.report()
	wantProof(t, rep, "GAUNT-LIVE-STRICT-01", Unprovable, `needs capability "live mode"`)
	if g, _ := rep.Gate(nil); g.Code != ExitProven || len(g.Gaps) != 1 {
		t.Errorf("--require-all with the live-mode gap: %+v", g)
	}
	if _, err := rep.Gate([]string{"GAUNT-NOPE-01"}); err == nil {
		t.Error("an unknown requirement was gated")
	}
	r.write("conformance/requirements.yaml", strings.Replace(mustRead(t, filepath.Join(r.dir, "conformance/requirements.yaml")), "gap: no pinned engine has live mode", "estates: [e1]", 1))
	if err := os.WriteFile(filepath.Join(r.dir, "conformance/requirements.yaml"), []byte(strings.Replace(mustRead(t, filepath.Join(r.dir, "conformance/requirements.yaml")), "estates: [e1], substrates: [local], estates: [e1]", "estates: [e1], substrates: [local]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, _ := r.report().Gate(nil); g.Code != ExitWaiting {
		t.Errorf("--require-all without the gap: exit %d, want 3", g.Code)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// needTools skips a test that needs go and git, with the reason, when this
// environment (e.g. a Bazel sandbox) lacks them or has no Go build cache.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs the %s command on PATH (the runner's closure is `go list -deps`, the tree's state is git's): %v", tool, err)
		}
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if c := strings.TrimSpace(string(out)); err != nil || c == "" || c == "off" {
		t.Skipf("needs a Go build cache for `go list -deps` (GOCACHE %q, %v)", c, err)
	}
}

// testCommitDate dates the scratch repositories' commits before the
// synthetic runs (2026-11-30), as a real run always follows its commit.
const testCommitDate = "GIT_COMMITTER_DATE=2026-11-29T00:00:00Z"
