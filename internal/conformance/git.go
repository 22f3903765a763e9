package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/gitrun"
	"sigs.k8s.io/yaml"
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

// Ignores says whether path (which need not exist) is inside the checkout
// and ignored by it; outside is false with no error.
func (g Git) Ignores(ctx context.Context, path string) (inside, ignored bool, err error) {
	top, err := g.run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return false, false, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, false, err
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(real, filepath.Base(abs))
	}
	rel, err := filepath.Rel(strings.TrimSpace(top), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false, false, nil
	}
	// check-ignore exits 0 for ignored, 1 for not ignored, else failed.
	_, err = g.run(ctx, "check-ignore", "-q", "--no-index", "--", abs)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return true, false, nil
	}
	return true, err == nil, err
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
// with main on a branch, the previous commit on main itself. When this
// clone cannot say (it is shallow, has no main, HEAD shares no history
// with main, or HEAD is main's first commit) rev is empty and why says
// so: the caller must fail, not skip the check.
func (g Git) Base(ctx context.Context) (rev, why string, err error) {
	shallow, err := g.Shallow(ctx)
	if err != nil {
		return "", "", err
	}
	if shallow {
		// A merge base or a parent seen through a shallow boundary may be
		// the boundary, not the truth.
		return "", "this clone is shallow, so the merge base with main cannot be trusted", nil
	}
	head, err := g.Head(ctx)
	if err != nil {
		return "", "", err
	}
	for _, ref := range []string{"main", "origin/main"} {
		if _, err := g.run(ctx, "rev-parse", "--verify", "-q", ref+"^{commit}"); err != nil {
			continue // no such ref here
		}
		mb, err := g.run(ctx, "merge-base", ref, "HEAD")
		if mb = strings.TrimSpace(mb); err != nil || mb == "" {
			return "", "HEAD has no merge base with " + ref + " (unrelated histories)", nil
		}
		if mb != head {
			return mb, "the merge base with " + ref, nil
		}
		// HEAD is on main: the ledger must only have grown since its parent.
		prev, err := g.run(ctx, "rev-parse", "--verify", "-q", "HEAD^")
		if prev = strings.TrimSpace(prev); err != nil || prev == "" {
			return "", "HEAD is the first commit of " + ref + ": there is no earlier ledger to compare with", nil
		}
		return prev, "the previous commit", nil
	}
	return "", "this clone has no main or origin/main branch to find the merge base with", nil
}

// Shallow reports whether the clone is shallow (its history cut off).
func (g Git) Shallow(ctx context.Context) (bool, error) {
	out, err := g.run(ctx, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "true", nil
}

// commitExists answers whether a commit is in this repository, once per
// commit. In a shallow clone a commit it lacks may lie beyond the cut, so
// it cannot tell and says so.
func (g Git) commitExists(ctx context.Context) CommitExists {
	seen := map[string]bool{}
	var shallow *bool
	return func(commit string) (bool, error) {
		if ok, done := seen[commit]; done {
			return ok, nil
		}
		if !commitRE.MatchString(commit) {
			return false, nil
		}
		_, err := g.run(ctx, "cat-file", "-e", commit+"^{commit}")
		var ee *exec.ExitError
		switch {
		case err == nil:
			seen[commit] = true
			return true, nil
		case !errors.As(err, &ee):
			return false, err
		}
		if shallow == nil {
			s, err := g.Shallow(ctx)
			if err != nil {
				return false, err
			}
			shallow = &s
		}
		if *shallow {
			return false, errors.New("this clone is shallow and lacks it: fetch the whole history (git fetch --unshallow)")
		}
		seen[commit] = false
		return false, nil
	}
}

// ancestry answers, once per commit, when it was made (committer date) and
// whether HEAD descends from it.
func (g Git) ancestry(ctx context.Context) func(commit string) (time.Time, bool, error) {
	type answer struct {
		at       time.Time
		ancestor bool
	}
	seen := map[string]answer{}
	return func(commit string) (time.Time, bool, error) {
		if a, ok := seen[commit]; ok {
			return a.at, a.ancestor, nil
		}
		out, err := g.run(ctx, "show", "-s", "--format=%ct", commit+"^{commit}")
		if err != nil {
			return time.Time{}, false, err
		}
		secs, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("commit %s's date %q: %w", shortHash(commit), strings.TrimSpace(out), err)
		}
		a := answer{at: time.Unix(secs, 0)}
		_, err = g.run(ctx, "merge-base", "--is-ancestor", commit, "HEAD")
		var ee *exec.ExitError
		switch {
		case err == nil:
			a.ancestor = true
		case errors.As(err, &ee) && ee.ExitCode() == 1:
		default:
			return time.Time{}, false, err
		}
		seen[commit] = a
		return a.at, a.ancestor, nil
	}
}

// LedgerGrew checks the ledger's whole history: every commit reachable from
// HEAD that changed it only appended to each parent's ledger (the history
// git simplifies to the commits that touched it), so a rewrite cannot hide
// behind a later commit. It returns a problem per commit that did not.
func (g Git) LedgerGrew(ctx context.Context, path string) ([]string, error) {
	out, err := g.run(ctx, "rev-list", "--parents", "HEAD", "--", path)
	if err != nil {
		return nil, err
	}
	shown := map[string][]byte{}
	show := func(rev string) ([]byte, bool, error) {
		if b, ok := shown[rev]; ok {
			return b, b != nil, nil
		}
		b, ok, err := g.Show(ctx, rev, path)
		if err != nil {
			return nil, false, err
		}
		shown[rev] = b
		return b, ok, nil
	}
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		revs := strings.Fields(line)
		if len(revs) < 2 {
			continue // the ledger's first commit, or no history
		}
		now, ok, err := show(revs[0])
		if err != nil {
			return nil, err
		}
		for _, parent := range revs[1:] {
			then, had, err := show(parent)
			if err != nil {
				return nil, err
			}
			switch {
			case !had:
			case !ok:
				problems = append(problems, fmt.Sprintf("commit %s deleted the ledger that %s had", shortHash(revs[0]), shortHash(parent)))
			default:
				if err := AppendOnly(then, now); err != nil {
					problems = append(problems, fmt.Sprintf("commit %s against %s: %v", shortHash(revs[0]), shortHash(parent), err))
				}
			}
		}
	}
	return problems, nil
}

// Links lists the symbolic links committed at HEAD under dir: a ledger's
// evidence is files of their own, and a committed link could make one
// run's folder speak for another (or for a file outside the repository).
func (g Git) Links(ctx context.Context, dir string) ([]string, error) {
	out, err := g.run(ctx, "ls-tree", "-r", "HEAD", "--", dir)
	if err != nil {
		return nil, err
	}
	var links []string
	for _, line := range strings.Split(out, "\n") {
		mode, rest, ok := strings.Cut(line, " ")
		if !ok || mode != "120000" {
			continue
		}
		if _, path, ok := strings.Cut(rest, "\t"); ok {
			links = append(links, path)
		}
	}
	return links, nil
}

// registryAt reads the requirement IDs of the registry as committed at a
// commit, once per commit. Only the IDs: the registry's schema has grown
// since the first runs (estates, substrates), and a strict parse would
// refuse what was valid then.
func (g Git) registryAt(ctx context.Context) func(commit string) (map[string]bool, error) {
	seen := map[string]map[string]bool{}
	return func(commit string) (map[string]bool, error) {
		if ids, ok := seen[commit]; ok {
			return ids, nil
		}
		raw, ok, err := g.Show(ctx, commit, RegistryPath)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("commit %s has no %s", shortHash(commit), RegistryPath)
		}
		var reg struct {
			Requirements []struct {
				ID string `json:"id"`
			} `json:"requirements"`
		}
		if err := yaml.Unmarshal(raw, &reg); err != nil {
			return nil, fmt.Errorf("%s at %s: %w", RegistryPath, shortHash(commit), err)
		}
		ids := map[string]bool{}
		for _, q := range reg.Requirements {
			ids[q.ID] = true
		}
		seen[commit] = ids
		return ids, nil
	}
}

// commitRE is a full or abbreviated commit hash: a run names its commit by
// hash, never by a ref that could move.
var commitRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

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
