package gitrun

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRun: stdout on success; on failure an error that wraps git's exit,
// names the command and carries git's complaint.
func TestRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("needs the git command on PATH: %v", err)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), dir, 10*time.Second, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), dir, 10*time.Second, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Fatalf("rev-parse: %q, %v", out, err)
	}
	_, err = Run(context.Background(), dir, 10*time.Second, "show", "HEAD:nothing")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "git show HEAD:nothing: exit status 128: fatal:") {
		t.Errorf("a failing git: %v", err)
	}
}
