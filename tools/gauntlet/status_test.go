package main

import (
	"context"
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
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs the %s command on PATH (the runner's closure is `go list -deps`, the tree's state is git's): %v", tool, err)
		}
	}
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
	write("tools/gauntlet/main.go", "package main\n\nfunc main() {}\n")
	write("estates/e1/estate.yaml", "name: e1\n")
	write("third_party/pins.json", `{"go":"go1.26.8","tools":[{"name":"tofu","version":"1.12.6","role":"subject"}]}`)
	write(".gitignore", "/out/\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "start")
	t.Chdir(dir)
	write("out/evidence.md", "ignored output does not count\n")
	if rc, err := prepareRecord(context.Background(), "e1", "local", nil); err != nil || rc.inputs.Code["tools/gauntlet/main.go"] == "" {
		t.Fatalf("a clean tree: %v", err)
	}
	write("tools/gauntlet/extra.go", "package main\n")
	_, err := prepareRecord(context.Background(), "e1", "local", nil)
	if err == nil || !strings.Contains(err.Error(), "tools/gauntlet/extra.go") {
		t.Fatalf("an untracked .go file: %v", err)
	}
	if c := gitCommit(context.Background()); !strings.HasSuffix(c, "-dirty") {
		t.Errorf("the run's commit %q is not marked dirty", c)
	}
}
