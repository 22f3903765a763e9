package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/internal/gitrun"
)

// Git reads the checkout a proof is about. Every call is bounded.
type Git struct{ Dir string }

// Dirty lists what makes the tree differ from its commit: modified,
// staged, deleted and untracked files that are not ignored (an untracked
// .go file is compiled into a run as surely as a tracked one).
func (g Git) Dirty(ctx context.Context) ([]string, error) {
	out, err := g.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	var files []string
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		files = append(files, e[3:]+" ("+strings.TrimSpace(e[:2])+")")
		if e[0] == 'R' || e[0] == 'C' {
			i++ // a rename's source follows it
		}
	}
	return files, nil
}

// Head is the checkout's commit.
func (g Git) Head(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// Show returns path as committed at rev; ok is false when rev has no such
// file (or rev is not in this clone).
func (g Git) Show(ctx context.Context, rev, path string) (data []byte, ok bool, err error) {
	if _, err := g.run(ctx, "cat-file", "-e", rev+":"+path); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, false, nil
		}
		return nil, false, err
	}
	out, err := g.run(ctx, "show", rev+":"+path)
	if err != nil {
		return nil, false, err
	}
	return []byte(out), true, nil
}

// Base picks what the ledger must only have grown from: the merge base
// with main on a branch, the previous commit on main itself. Empty when
// this clone holds neither (a shallow clone), with the reason.
func (g Git) Base(ctx context.Context) (rev, why string, err error) {
	head, err := g.Head(ctx)
	if err != nil {
		return "", "", err
	}
	for _, ref := range []string{"main", "origin/main"} {
		mb, err := g.run(ctx, "merge-base", ref, "HEAD")
		if mb = strings.TrimSpace(mb); err == nil && mb != "" && mb != head {
			return mb, "the merge base with " + ref, nil
		}
	}
	if prev, err := g.run(ctx, "rev-parse", "--verify", "-q", "HEAD^"); err == nil && strings.TrimSpace(prev) != "" {
		return strings.TrimSpace(prev), "the previous commit", nil
	}
	return "", "this clone has neither a main branch to merge-base with nor a previous commit (shallow?)", nil
}

func (g Git) run(ctx context.Context, args ...string) (string, error) {
	out, err := gitrun.Run(ctx, g.Dir, 30*time.Second, args...)
	return string(out), err
}

// AppendOnly checks that now is then with lines added at its end: the
// only change a ledger may see. It names the first line that differs.
func AppendOnly(then, now []byte) error {
	a, b := splitLines(then), splitLines(now)
	if len(b) < len(a) {
		return fmt.Errorf("the ledger lost %d line(s): it had %d, it has %d", len(a)-len(b), len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return fmt.Errorf("line %d was rewritten: a ledger only grows at its end", i+1)
		}
	}
	if len(then) > 0 && then[len(then)-1] != '\n' {
		return errors.New("the base ledger does not end in a newline")
	}
	return nil
}
