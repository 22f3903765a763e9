package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write("go.mod", "module example.com/g\n\ngo 1.22\n")
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() {}\n")
	write("pkg/gauntlet/run.go", "package gauntlet\n")
	write("estates/e1/estate.yaml", "name: e1\n")
	write("third_party/pins.json", `{"go":"go1.26.8","tools":[{"name":"tofu","version":"1.12.6","role":"subject"}]}`)
	write(".gitignore", "/out/\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "start")
	t.Chdir(dir)
	write("out/evidence.md", "ignored output does not count\n")
	if rc, err := prepareRecord(context.Background(), "e1", "local", nil, "", ""); err != nil || rc.inputs.Code["pkg/gauntlet/run.go"] == "" {
		t.Fatalf("a clean tree: %v", err)
	}
	write("tools/gauntlet/extra.go", "package main\n")
	_, err := prepareRecord(context.Background(), "e1", "local", nil, "", "")
	if err == nil || !strings.Contains(err.Error(), "tools/gauntlet/extra.go") {
		t.Fatalf("an untracked .go file: %v", err)
	}
	if c := gitCommit(context.Background()); !strings.HasSuffix(c, "-dirty") {
		t.Errorf("the run's commit %q is not marked dirty", c)
	}
}

// TestStatusExitCodes: the gates' exit codes through the command itself,
// on a temporary repository: 3 when only not-run remains, 1 on a forged
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
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write("go.mod", "module example.com/g\n\ngo 1.22\n")
	write("tools/gauntlet/main.go", "package main\n\nimport _ \"example.com/g/pkg/gauntlet\"\n\nfunc main() {}\n")
	write("pkg/gauntlet/run.go", "package gauntlet\n")
	write("estates/e1/estate.yaml", "name: e1\n")
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
		err := runStatus(context.Background(), args)
		var ec exitCoder
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ec):
			return ec.ExitCode()
		}
		t.Fatalf("status %v: %v", args, err)
		return -1
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
	if c := code("--hygiene", "--base", "HEAD"); c != 0 {
		t.Errorf("hygiene against itself: exit %d, want 0", c)
	}
	if c := code("--requirements", "GAUNT-DAY2-CRASH-01"); c != 3 {
		t.Errorf("merge gate with nothing recorded: exit %d, want 3", c)
	}
	if c := code("--require-all", "--json"); c != 3 {
		t.Errorf("phase gate with nothing recorded: exit %d, want 3", c)
	}
	if c := code(); c != 0 {
		t.Errorf("the report: exit %d, want 0", c)
	}
	if err := runStatus(context.Background(), []string{"--requirements", "GAUNT-NOPE-01"}); err == nil {
		t.Error("an unknown requirement was gated")
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
