package gauntlettest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFromAnotherModule shows the library used the way another repository
// uses it: a scratch module that requires this one (a replace to this
// checkout), keeps an estate of its own - a copy of
// corpus-k8s-metrics-server's estate.yaml - and runs its cold deploy with
// gauntlettest.Run. It fails unless that test compiles, runs for real and
// passes the stage.
func TestFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a scratch module and runs a cold deploy on two control planes (about a minute)")
	}
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("under Bazel: the scratch module needs the go command and the module cache, outside the sandbox; `go test` runs it")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(mod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile(filepath.Join(root, "estates", "corpus-k8s-metrics-server", "estate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The copy leaves out the estate's sabotaged pass: one cold deploy is
	// proof enough that the import works.
	if i := strings.Index(string(yaml), "\ntest:"); i >= 0 {
		yaml = yaml[:i+1]
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/scratch\n\n"+string(goLine)+"\n\n"+
		"require github.com/gauntlet-k8s/gauntlet v0.0.0\n\n"+
		"replace github.com/gauntlet-k8s/gauntlet => "+root+"\n")
	write("go.sum", string(sum))
	write("estates/corpus-k8s-metrics-server/estate.yaml", string(yaml))
	write("scratch_test.go", `package scratch

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

func TestColdDeploy(t *testing.T) {
	gauntlettest.Run(t, "estates/corpus-k8s-metrics-server", gauntlet.WithStages("cold_deploy"))
}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", "-run", "TestColdDeploy", ".")
	cmd.Dir = dir
	corpusDir := os.Getenv("GAUNTLET_CORPUS_DIR")
	if corpusDir == "" {
		corpusDir = filepath.Join(root, "..", "shared", "corpus")
	}
	// -mod=mod: the scratch module's requirements are settled from the
	// module cache (this checkout's go.sum covers them); GOWORK=off keeps a
	// workspace around the checkout out of it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GAUNTLET_CORPUS_DIR="+corpusDir)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("the scratch module's test failed: %v\n%s", err, tail(text, 60))
	}
	for _, want := range []string{"--- PASS: TestColdDeploy/cold_deploy", "--- SKIP: TestColdDeploy/day2_teardown", "not selected for this run"} {
		if !strings.Contains(text, want) {
			t.Errorf("the scratch module's output lacks %q:\n%s", want, tail(text, 60))
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
