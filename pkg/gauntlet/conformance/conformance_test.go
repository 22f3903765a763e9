package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// TestRegistryCoversEveryStage: every requirement a stage claims is
// registered, and every registered requirement is claimed by a stage.
func TestRegistryCoversEveryStage(t *testing.T) {
	reg, err := LoadRegistry(filepath.Join("..", "..", "..", "conformance", "requirements.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string][]string{}
	for _, s := range stage.All() {
		claims[s.ID()] = s.Requirements()
	}
	cov := ComputeCoverage(reg, claims)
	if !cov.Clean() {
		t.Errorf("uncovered %v, unregistered %v", cov.Uncovered, cov.Unregistered)
	}
	for _, q := range reg.Requirements {
		for _, p := range q.Paths {
			if _, err := os.Stat(filepath.Join("..", "..", "..", p)); err != nil {
				t.Errorf("%s: path %s: %v", q.ID, p, err)
			}
		}
	}
}

type fakeHistory map[string]bool // commit -> changed

func (f fakeHistory) ChangedSince(commit string, _ []string) (bool, string, error) {
	return f[commit], "a later commit changed it", nil
}

func TestProofRules(t *testing.T) {
	reg := &Registry{Requirements: []Requirement{{ID: "GAUNT-X-01", Statement: "x", Paths: []string{"p"}}}}
	cov := ComputeCoverage(reg, map[string][]string{"one": {"GAUNT-X-01"}, "two": {"GAUNT-X-01"}})
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	good := func(stage string, at time.Time) Row {
		return Row{Run: "r", Time: at, Commit: "abc", Stage: stage, Verdict: result.Pass, Breaks: 1, BreaksFailed: 1}
	}
	for name, tc := range map[string]struct {
		rows []Row
		hist fakeHistory
		want Proof
	}{
		"both proven":            {rows: []Row{good("one", t0), good("two", t0)}, want: Proven},
		"one stage unrecorded":   {rows: []Row{good("one", t0)}, want: Unproven},
		"not run is never proof": {rows: []Row{good("one", t0), func() Row { r := good("two", t0); r.Verdict = result.NotRun; return r }()}, want: NotRun},
		"failed wins":            {rows: []Row{func() Row { r := good("one", t0); r.Verdict = result.Fail; return r }(), good("two", t0)}, want: Failed},
		"break that held":        {rows: []Row{good("one", t0), func() Row { r := good("two", t0); r.BreaksFailed = 0; return r }()}, want: Failed},
		"no break at all":        {rows: []Row{good("one", t0), func() Row { r := good("two", t0); r.Breaks, r.BreaksFailed = 0, 0; return r }()}, want: Failed},
		"dirty commit":           {rows: []Row{good("one", t0), func() Row { r := good("two", t0); r.Commit = "abc-dirty"; return r }()}, want: Dirty},
		"stale":                  {rows: []Row{good("one", t0), good("two", t0)}, hist: fakeHistory{"abc": true}, want: StaleProof},
		"latest row counts":      {rows: []Row{func() Row { r := good("one", t0); r.Verdict = result.Fail; return r }(), good("one", t0.Add(time.Hour)), good("two", t0)}, want: Proven},
	} {
		t.Run(name, func(t *testing.T) {
			hist := tc.hist
			if hist == nil {
				hist = fakeHistory{}
			}
			st, err := Derive(reg, cov, tc.rows, hist)
			if err != nil {
				t.Fatal(err)
			}
			if st[0].Proof != tc.want {
				t.Errorf("proof %s (%s), want %s", st[0].Proof, st[0].Why, tc.want)
			}
		})
	}
}

func TestLedgerRoundTrip(t *testing.T) {
	run := &result.Run{Estate: result.Estate{Name: "e"}, Commit: "0123456789abcdef-dirty", StartedAt: time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC),
		Stages: []result.Stage{{ID: "s", Requirements: []string{"GAUNT-X-01"}, Verdict: result.Pass, Breaks: []result.Break{{Failed: true}, {Failed: false}}}}}
	rows := Rows(run)
	if len(rows) != 1 || rows[0].Breaks != 2 || rows[0].BreaksFailed != 1 || !rows[0].Dirty() || !strings.HasSuffix(rows[0].Run, "-0123456789-dirty") {
		t.Fatalf("rows %+v", rows)
	}
	path := filepath.Join(t.TempDir(), "runs", "ledger.jsonl")
	if err := Append(path, rows); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, rows); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil || len(back) != 2 || back[1].Stage != "s" {
		t.Fatalf("read %+v, %v", back, err)
	}
	if none, err := Read(filepath.Join(t.TempDir(), "absent.jsonl")); err != nil || none != nil {
		t.Errorf("a missing ledger: %v %v", none, err)
	}
}

func TestGitHistory(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("b"), 0o644)
	git("add", ".")
	git("commit", "-qm", "one")
	first := git("rev-parse", "HEAD")
	h := Git{Dir: dir}
	check := func(paths []string, want bool) {
		t.Helper()
		got, why, err := h.ChangedSince(first, paths)
		if err != nil || got != want {
			t.Errorf("ChangedSince(%v) = %v (%s), %v; want %v", paths, got, why, err, want)
		}
	}
	check([]string{"a.go"}, false)
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("b2"), 0o644)
	git("commit", "-qam", "two")
	check([]string{"a.go"}, false)
	check([]string{"b.go"}, true)
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("a2"), 0o644)
	check([]string{"a.go"}, true)
	if got, _, err := h.ChangedSince("0123456789012345678901234567890123456789", []string{"a.go"}); err != nil || !got {
		t.Errorf("an unknown commit vouches for the tree (%v, %v)", got, err)
	}
}
