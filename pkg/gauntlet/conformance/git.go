package conformance

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Git answers History from a git checkout.
type Git struct{ Dir string }

var _ History = Git{}

// ChangedSince reports a change to paths after commit: a later commit
// touching them, uncommitted edits to them, or commit not being an
// ancestor of HEAD at all (a proof from another line of history).
func (g Git) ChangedSince(commit string, paths []string) (bool, string, error) {
	// Exit 1: not an ancestor; 128: unknown here (another clone, or a
	// shallow one). Either way this tree cannot vouch for the proof.
	if _, err := g.run("merge-base", "--is-ancestor", commit, "HEAD"); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return true, "its commit " + shortHash(commit) + " is not in this checkout's history", nil
		}
		return false, "", err
	}
	out, err := g.run(append([]string{"log", "--format=%h %s", "-1", commit + "..HEAD", "--"}, paths...)...)
	if err != nil {
		return false, "", err
	}
	if line := strings.TrimSpace(out); line != "" {
		return true, "commit " + line + " changed " + strings.Join(paths, ", ") + " since", nil
	}
	out, err = g.run(append([]string{"status", "--porcelain", "--"}, paths...)...)
	if err != nil {
		return false, "", err
	}
	if strings.TrimSpace(out) != "" {
		return true, "uncommitted changes touch " + strings.Join(paths, ", "), nil
	}
	return false, "", nil
}

func (g Git) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.Dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", err
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return string(out), nil
}
