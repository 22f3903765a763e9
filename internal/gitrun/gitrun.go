// Package gitrun runs the git command for gauntlet's packages: bounded,
// never prompting for credentials, with git's own complaint in the error.
package gitrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Run runs `git args...` in dir and returns what it printed on stdout.
// bound caps the call (0 leaves it to ctx's deadline). A git that ran
// and failed returns an error wrapping its *exec.ExitError, with the
// command and git's stderr in the message.
func Run(ctx context.Context, dir string, bound time.Duration, args ...string) ([]byte, error) {
	if bound > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, bound)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// A fetch of a repository that wants credentials fails instead of
	// waiting on a prompt no one will answer.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}
