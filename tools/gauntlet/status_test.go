package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestRecordRefusesDirtyTree: `run --record` checks the tree before any
// cluster starts, counts an untracked (not ignored) file as dirty and
// names it in the error.
func TestRecordRefusesDirtyTree(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", testCommitDate)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write("go.mod", "module example.com/g\n\ngo 1.22\n")
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() {}\n")
	write("pkg/gauntlet/run.go", "package gauntlet\n")
	write("estates/e1/estate.yaml", "apiVersion: gauntlet/v1\nname: e1\n")
	write("third_party/pins.json", `{"go":"go1.26.8","tools":[{"name":"tofu","version":"1.12.6","role":"subject"}]}`)
	write("conformance/requirements.yaml", "requirements:\n  - {id: GAUNT-X-01, statement: s, estates: [e1], substrates: [local]}\n")
	write(".gitignore", "/out/\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "start")
	t.Chdir(dir)
	write("out/evidence.md", "ignored output does not count\n")
	exe := buildRunner(t, filepath.Join(dir, "out", "gauntlet"))
	if rc, err := prepareRecord(context.Background(), exe, "e1", "local", nil, "", ""); err != nil || rc.inputs.Code["pkg/gauntlet/run.go"] == "" {
		t.Fatalf("a clean tree: %v", err)
	}
	write("tools/gauntlet/extra.go", "package main\n")
	_, err := prepareRecord(context.Background(), exe, "e1", "local", nil, "", "")
	if err == nil || !strings.Contains(err.Error(), "tools/gauntlet/extra.go") {
		t.Fatalf("an untracked .go file: %v", err)
	}
	if c := gitCommit(context.Background()); !strings.HasSuffix(c, "-dirty") {
		t.Errorf("the run's commit %q is not marked dirty", c)
	}
}

// buildRunner builds ./tools/gauntlet of the working directory to out.
func buildRunner(t *testing.T, out string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "./tools/gauntlet")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, b)
	}
	return out
}

// TestRecordRefusesOtherCode: `run --record` refuses a binary that is not
// the runner built from HEAD of this clean tree (here, one built before
// the last commit), a go.work, and a replace outside the module, each
// naming the fix; the runner built from the tree, by go build or go run,
// is accepted.
func TestRecordRefusesOtherCode(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", testCommitDate)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	write("go.mod", "module example.com/g\n\ngo 1.22\n")
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() { println(\"one\") }\n")
	write("pkg/gauntlet/run.go", "package gauntlet\n")
	write("estates/e1/estate.yaml", "apiVersion: gauntlet/v1\nname: e1\n")
	write("third_party/pins.json", `{"go":"go1.26.8","tools":[{"name":"tofu","version":"1.12.6","role":"subject"}]}`)
	write("conformance/requirements.yaml", "requirements:\n  - {id: GAUNT-X-01, statement: s, estates: [e1], substrates: [local]}\n")
	write(".gitignore", "/out/\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "start")
	t.Chdir(dir)
	t.Setenv("GOWORK", "")
	old := buildRunner(t, filepath.Join(dir, "out", "old"))
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() { println(\"two\") }\n")
	git("commit", "-qam", "change the runner")
	record := func(exe string) error {
		t.Helper()
		_, err := prepareRecord(context.Background(), exe, "e1", "local", nil, "", "")
		return err
	}
	if err := record(old); err == nil || !strings.Contains(err.Error(), "is not the runner built from this tree") || !strings.Contains(err.Error(), "go build -o bin/gauntlet") {
		t.Errorf("a binary built before the last commit: %v", err)
	}
	if err := record(buildRunner(t, filepath.Join(dir, "out", "new"))); err != nil {
		t.Errorf("the runner built from HEAD: %v", err)
	}
	// What `go run ./tools/gauntlet` runs is accepted too (copied out: go
	// run may build it in a directory it removes).
	exe := filepath.Join(dir, "out", "go-run")
	if out, err := exec.Command("go", "run", "-exec", "cp", "./tools/gauntlet", exe).CombinedOutput(); err != nil {
		t.Fatalf("go run: %v %s", err, out)
	}
	if err := record(exe); err != nil {
		t.Errorf("the runner go run builds: %v", err)
	}

	// A workspace, though ignored by git (so the tree is clean).
	write("out/ws/go.mod", "module example.com/other\n\ngo 1.22\n")
	write("out/go.work", "go 1.22\n\nuse (\n\t..\n\t./ws\n)\n")
	t.Setenv("GOWORK", filepath.Join(dir, "out", "go.work"))
	if err := record(exe); err == nil || !strings.Contains(err.Error(), "GOWORK=off") {
		t.Errorf("a go.work: %v", err)
	}
	t.Setenv("GOWORK", "off")
	if err := record(exe); err != nil {
		t.Errorf("GOWORK=off: %v", err)
	}

	// A replace outside the module, committed.
	write("go.mod", "module example.com/g\n\ngo 1.22\n\nrequire example.com/other v0.0.0\n\nreplace example.com/other => ../elsewhere\n")
	git("commit", "-qam", "replace outside")
	if err := record(exe); err == nil || !strings.Contains(err.Error(), "outside the module") {
		t.Errorf("a replace outside the module: %v", err)
	}
}

// TestStatusUsageAndHygieneHoles: --requirements "" is a usage error, not
// "every requirement"; --hygiene fails where it cannot check that the
// ledger only grew (a shallow clone, no main to merge-base with, main's
// first commit) instead of passing unchecked; a run folder naming a
// commit that does not exist is a ledger problem.
func TestStatusUsageAndHygieneHoles(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", testCommitDate)
	gitIn := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = d
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/g\n\ngo 1.22\n")
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() {}\n")
	write("pkg/gauntlet/run.go", "package gauntlet\n")
	write("estates/e1/estate.yaml", "apiVersion: gauntlet/v1\nname: e1\n")
	write("third_party/pins.json", `{"go":"go1.26.8","tools":[{"name":"tofu","version":"1.12.6","role":"subject"},{"name":"terraform","version":"1.11.4","role":"oracle"}]}`)
	reg := "requirements:\n"
	seen := map[string]bool{}
	for _, ids := range stageClaims() {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				reg += "  - {id: " + id + ", statement: s, estates: [e1], substrates: [local]}\n"
			}
		}
	}
	write("conformance/requirements.yaml", reg)
	write("conformance/runs/ledger.jsonl", "")
	gitIn(dir, "init", "-q", "-b", "main")
	gitIn(dir, "add", "-A")
	gitIn(dir, "commit", "-qm", "start")
	code := func(args ...string) (int, string) {
		t.Helper()
		c, _, stderr := gauntletCLI(t, append([]string{"status"}, args...)...)
		return c, stderr
	}
	t.Chdir(dir)

	for _, arg := range []string{"", " ", "GAUNT-DAY2-CRASH-01,"} {
		if c, msg := code("--requirements", arg); c != 2 || !strings.Contains(msg, "--require-all") {
			t.Errorf("--requirements %q: exit %d (%s), want a usage error (2)", arg, c, msg)
		}
	}

	// main's first commit: no earlier ledger to compare with.
	if c, _ := code("--hygiene"); c != 1 {
		t.Errorf("hygiene on main's first commit: exit %d, want 1", c)
	}
	write("README", "x\n")
	gitIn(dir, "add", "-A")
	gitIn(dir, "commit", "-qm", "second")
	if c, msg := code("--hygiene"); c != 0 {
		t.Fatalf("hygiene on main with a parent: exit %d (%s)", c, msg)
	}
	// A branch whose history is unrelated to main's.
	gitIn(dir, "checkout", "-q", "--orphan", "stray")
	gitIn(dir, "commit", "-qm", "unrelated")
	if c, _ := code("--hygiene"); c != 1 {
		t.Errorf("hygiene with no merge base: exit %d, want 1", c)
	}
	if c, msg := code("--hygiene", "--base", "HEAD"); c != 0 {
		t.Errorf("hygiene with --base: exit %d (%s), want 0", c, msg)
	}
	gitIn(dir, "checkout", "-q", "main")

	// A shallow clone of main.
	shallow := filepath.Join(t.TempDir(), "shallow")
	gitIn(dir, "clone", "-q", "--depth", "1", "file://"+dir, shallow)
	t.Chdir(shallow)
	if c, _ := code("--hygiene"); c != 1 {
		t.Errorf("hygiene in a shallow clone: exit %d, want 1", c)
	}
	t.Chdir(dir)

	// A run folder naming a commit this repository does not have: the
	// folder is self-consistent, its commit made up.
	tree, err := conformance.NewTree(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	in, err := tree.Inputs("e1", "local", nil)
	if err != nil {
		t.Fatal(err)
	}
	res := &result.Run{Estate: result.Estate{Name: "e1"}, Commit: strings.Repeat("ab", 20), StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		Stages: []result.Stage{{ID: "day2_crash", Verdict: result.Pass, Requirements: []string{"GAUNT-DAY2-CRASH-01"}}}}
	id := conformance.RunID(res, "local")
	rb, _ := json.Marshal(res)
	ib, _ := in.Encode()
	write(filepath.Join("conformance/runs", id, conformance.RunJSON), string(rb))
	write(filepath.Join("conformance/runs", id, conformance.InputsJSON), string(ib))
	write(filepath.Join("conformance/runs", id, conformance.EvidenceMD), "# Evidence\n")
	write(filepath.Join("conformance/runs", id, conformance.JUnitXML), "<testsuites/>\n")
	if _, err := conformance.Append(ledgerPath, runsDir, id); err != nil {
		t.Fatal(err)
	}
	gitIn(dir, "add", "-A")
	gitIn(dir, "commit", "-qm", "a made-up run")
	if c, msg := code("--hygiene"); c != 1 {
		t.Errorf("hygiene with a run at a commit that does not exist: exit %d (%s), want 1", c, msg)
	}
	if c, _ := code(); c != 1 {
		t.Errorf("status with a run at a commit that does not exist: exit %d, want 1", c)
	}
}

// TestStatusExitCodes: the gates' exit codes through the command itself,
// on a temporary repository: 4 when only not-run remains, 1 on a forged
// ledger line (for the report too), and --hygiene failing a rewritten
// ledger line against the previous commit.
func TestStatusExitCodes(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", testCommitDate)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write("go.mod", "module example.com/g\n\ngo 1.22\n")
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() {}\n")
	write("pkg/gauntlet/run.go", "package gauntlet\n")
	write("estates/e1/estate.yaml", "apiVersion: gauntlet/v1\nname: e1\n")
	write("third_party/pins.json", `{"go":"go1.26.8","tools":[{"name":"tofu","version":"1.12.6","role":"subject"},{"name":"terraform","version":"1.11.4","role":"oracle"}]}`)
	// Every requirement the real stages claim, so coverage is clean.
	reg := "requirements:\n"
	seen := map[string]bool{}
	for _, ids := range stageClaims() {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				reg += "  - {id: " + id + ", statement: s, estates: [e1], substrates: [local]}\n"
			}
		}
	}
	write("conformance/requirements.yaml", reg)
	write("conformance/runs/ledger.jsonl", `{"run":"r","time":"2026-11-29T17:51:47Z","commit":"c","estate":"e1","stage":"day2_crash","requirements":["GAUNT-DAY2-CRASH-01"],"verdict":"pass","breaks":1,"breaks_failed":1,"engine":"tofu 1.12.6","oracle":"terraform 1.11.4","substrate":"local"}`+"\n")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")
	t.Chdir(dir)
	code := func(args ...string) int {
		t.Helper()
		c, _, _ := gauntletCLI(t, append([]string{"status"}, args...)...)
		return c
	}
	// The committed line has no run folder: a forged row.
	if c := code(); c != 1 {
		t.Errorf("status with a forged row: exit %d, want 1", c)
	}
	if c := code("--requirements", "GAUNT-DAY2-CRASH-01"); c != 1 {
		t.Errorf("merge gate with a forged row: exit %d, want 1", c)
	}
	write("conformance/runs/ledger.jsonl", "")
	git("commit", "-qam", "empty the ledger")
	if c := code("--hygiene"); c != 1 {
		t.Errorf("hygiene after dropping a line: exit %d, want 1", c)
	}
	// A rewrite stays a problem after any later commit and whatever base
	// is named: every commit that changed the ledger is checked.
	if c := code("--hygiene", "--base", "HEAD"); c != 1 {
		t.Errorf("hygiene against itself after a commit that dropped a line: exit %d, want 1", c)
	}
	if c := code("--requirements", "GAUNT-DAY2-CRASH-01"); c != conformance.ExitWaiting {
		t.Errorf("merge gate with nothing recorded: exit %d, want %d", c, conformance.ExitWaiting)
	}
	if c := code("--require-all", "--json"); c != conformance.ExitWaiting {
		t.Errorf("phase gate with nothing recorded: exit %d, want %d", c, conformance.ExitWaiting)
	}
	if c := code(); c != 0 {
		t.Errorf("the report: exit %d, want 0", c)
	}
	if c := code("--require-all", "--requirements", "GAUNT-DAY2-CRASH-01"); c != 2 {
		t.Errorf("--require-all narrowed by --requirements: exit %d, want 2 (a wrong command line)", c)
	}
	if c := code("--requirements", "GAUNT-NOPE-01"); c != 3 {
		t.Errorf("an unknown requirement: exit %d, want 3 (could not run)", c)
	}
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
