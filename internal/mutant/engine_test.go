package mutant

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// The mutant engines for real: the pinned tofu wrapped by the built
// gauntlet-mutant, on a root of terraform_data resources (tofu's built-in
// provider, so no cluster and no provider mirror): each mutation changes
// exactly what it names, and the identity mutant is tofu.

const dataRoot = `resource "terraform_data" "a" {}
resource "terraform_data" "b" {}
resource "terraform_data" "c" {
  triggers_replace = "one"
  lifecycle {
    create_before_destroy = true
  }
}
`

type rig struct {
	t    *testing.T
	dir  string
	tofu string
	bin  string
	env  []string
}

func newRig(t *testing.T) *rig {
	if testing.Short() {
		t.Skip("-short: runs the pinned tofu")
	}
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("under Bazel: gauntlet-mutant (pins group mutants) is not in the toolchain seed and the sandbox has no Go to build it; .ci/run runs this test with go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// gauntlet-mutant is this repository's own source: built here on first
	// use (seconds), unlike the pinned tools testenv never builds.
	tc, err := toolchain.Resolve(ctx, toolchain.WithTools("tofu", "gauntlet-mutant"), toolchain.WithOffline(true), toolchain.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatalf("%v\n(`go run ./tools/gauntlet toolchain` resolves tofu)", err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(cfg, []byte("disable_checkpoint = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.tf"), []byte(dataRoot), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, dir: root, tofu: tc.Path("tofu"), bin: tc.Path("gauntlet-mutant"),
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TF_CLI_CONFIG_FILE=" + cfg, "TF_IN_AUTOMATION=1", "NO_COLOR=1", "CHECKPOINT_DISABLE=1"}}
	r.run("", "init", "-input=false", "-no-color")
	return r
}

// run runs tofu through the mutant (or plain tofu for mutation "") and
// returns its output, failing the test on a non-zero exit.
func (r *rig) run(mutation string, args ...string) string {
	r.t.Helper()
	out, code := r.try(mutation, args...)
	if code != 0 {
		r.t.Fatalf("%s %v: exit %d\n%s", mutation, args, code, out)
	}
	return out
}

func (r *rig) cmd(mutation string, args ...string) *exec.Cmd {
	bin := r.tofu
	if mutation != "" {
		var err error
		if bin, err = WriteEngine(filepath.Join(filepath.Dir(r.dir), "engines", mutation), r.bin, r.tofu, mutation); err != nil {
			r.t.Fatal(err)
		}
	}
	c := exec.Command(bin, args...)
	c.Dir, c.Env = r.dir, r.env
	return c
}

func (r *rig) try(mutation string, args ...string) (string, int) {
	r.t.Helper()
	out, err := r.cmd(mutation, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return string(out), 0
}

func (r *rig) state() string {
	return strings.Join(strings.Fields(r.run("", "state", "list")), " ")
}

var planRE = regexp.MustCompile(`(?m)^Plan: .*$`)

func TestIdentityIsTofu(t *testing.T) {
	r := newRig(t)
	for _, args := range [][]string{{"version"}, {"version", "-json"}} {
		if got, want := r.run("identity", args...), r.run("", args...); got != want {
			t.Errorf("%v through the identity mutant:\n%s\nwant tofu's own:\n%s", args, got, want)
		}
	}
	if got, want := planRE.FindString(r.run("identity", "plan", "-no-color")), "Plan: 3 to add, 0 to change, 0 to destroy."; got != want {
		t.Errorf("identity plan says %q, want %q", got, want)
	}
	if _, code := r.try("identity", "plan", "-no-such-flag"); code == 0 {
		t.Error("a failing tofu call exited 0 through the mutant")
	}
}

func TestLyingSummaryAndDropOneCreate(t *testing.T) {
	r := newRig(t)
	if got := planRE.FindString(r.run("lying-summary", "plan", "-no-color")); got != "Plan: 4 to add, 0 to change, 0 to destroy." {
		t.Errorf("lying-summary printed %q, want one more to add than the 3 planned", got)
	}
	out := r.run("drop-one-create", "apply", "-input=false", "-no-color", "-auto-approve")
	if !strings.Contains(out, "Apply complete! Resources: 2 added") {
		t.Errorf("drop-one-create apply:\n%s", out)
	}
	if got := r.state(); got != "terraform_data.a terraform_data.b" {
		t.Errorf("state after drop-one-create: %s, want c (the last create) missing", got)
	}
}

func TestStateForgetsAndDestroyLeaksOne(t *testing.T) {
	r := newRig(t)
	r.run("state-forgets", "apply", "-input=false", "-no-color", "-auto-approve")
	if got := r.state(); got != "terraform_data.a terraform_data.b" {
		t.Errorf("state after state-forgets' apply: %s, want c forgotten", got)
	}
	out := r.run("destroy-leaks-one", "apply", "-destroy", "-input=false", "-no-color", "-auto-approve")
	if !strings.Contains(out, "0 added, 0 changed, 1 destroyed") {
		t.Errorf("destroy-leaks-one destroy:\n%s", out)
	}
}

func TestStrippingMutants(t *testing.T) {
	r := newRig(t)
	r.run("", "apply", "-input=false", "-no-color", "-auto-approve")
	main := filepath.Join(r.dir, "main.tf")
	before, _ := os.ReadFile(main)
	renamed := strings.Replace(string(before), `"terraform_data" "a"`, `"terraform_data" "z"`, 1) +
		"moved {\n  from = terraform_data.a\n  to   = terraform_data.z\n}\n"
	renamed = strings.Replace(renamed, `"one"`, `"two"`, 1)
	if err := os.WriteFile(main, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := planRE.FindString(r.run("", "plan", "-no-color")); got != "Plan: 1 to add, 0 to change, 1 to destroy." {
		t.Fatalf("tofu's own plan: %q (the move is free, c is replaced)", got)
	}
	if got := planRE.FindString(r.run("ignore-moved", "plan", "-no-color")); got != "Plan: 2 to add, 0 to change, 2 to destroy." {
		t.Errorf("ignore-moved planned %q, want a destroy and create for the moved resource too", got)
	}
	if out := r.run("", "plan", "-no-color"); !strings.Contains(out, "create replacement and then destroy") {
		t.Errorf("tofu's own plan does not create c's replacement first:\n%s", out)
	}
	if out := r.run("ignore-cbd", "plan", "-no-color"); !strings.Contains(out, "destroy and then create replacement") {
		t.Errorf("ignore-cbd still creates first:\n%s", out)
	}
	if after, _ := os.ReadFile(main); string(after) != renamed {
		t.Errorf("the root was not restored after the mutants' calls:\n%s", after)
	}
}

func TestStalePlanOK(t *testing.T) {
	r := newRig(t)
	r.run("", "plan", "-no-color", "-out=saved.tfplan")
	r.run("", "apply", "-input=false", "-no-color", "-auto-approve")
	if out, code := r.try("", "apply", "-input=false", "-no-color", "saved.tfplan"); code == 0 || !strings.Contains(out, "stale") {
		t.Fatalf("tofu applied a stale plan (exit %d):\n%s", code, out)
	}
	if out, code := r.try("stale-plan-ok", "apply", "-input=false", "-no-color", "saved.tfplan"); code != 0 {
		t.Errorf("stale-plan-ok refused the stale plan (exit %d):\n%s", code, out)
	}
}

func TestLostInterrupt(t *testing.T) {
	r := newRig(t)
	slow := "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" {\n    command = \"sleep 3\"\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(r.dir, "slow.tf"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mutation string
		exit     int
	}{{"identity", 1}, {"lost-interrupt", 0}} {
		c := r.cmd(tc.mutation, "apply", "-input=false", "-no-color", "-auto-approve", "-parallelism=1", "-target=terraform_data.slow")
		out := &syncBuffer{}
		c.Stdout, c.Stderr = out, out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), "Provisioning with 'local-exec'") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		c.Process.Signal(syscall.SIGTERM)
		err := c.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != tc.exit {
			t.Errorf("%s: SIGTERM mid-apply gave exit %d, want %d:\n%s", tc.mutation, code, tc.exit, out.String())
		}
		r.run("", "apply", "-destroy", "-input=false", "-no-color", "-auto-approve")
	}
}

// syncBuffer is written by the child's output copier while the test polls it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
