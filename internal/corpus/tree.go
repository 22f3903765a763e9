package corpus

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/gitrun"
)

// GitTree is one commit of a repository as an estate.Tree, read with git
// after a shallow, blobless fetch (blobs come as they are read). It needs
// the network; Close removes its folder.
type GitTree struct {
	ctx    context.Context
	work   string
	commit string
}

// OpenTree fetches a repository's commit for `gauntlet estate new` to read
// the root and every file it references. The fetch is bounded to three
// minutes, and so is each later read.
func OpenTree(ctx context.Context, repository, commit string) (*GitTree, error) {
	return openTree(ctx, repository, commit, "gauntlet estate new --dir DIR")
}

// openTree is the one shallow, blobless fetch of a commit, for OpenTree
// and Fetch; a failed fetch names offline, the command to use instead. A
// repository URL the cache could not name is refused before anything is
// fetched.
func openTree(ctx context.Context, repository, commit, offline string) (*GitTree, error) {
	if _, _, err := split(repository); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "gauntlet-tree-")
	if err != nil {
		return nil, err
	}
	t := &GitTree{ctx: ctx, work: work, commit: commit}
	for _, args := range [][]string{{"init", "-q"}, {"fetch", "-q", "--depth=1", "--filter=blob:none", repository, commit}} {
		if _, err := t.git(args...); err != nil {
			os.RemoveAll(work)
			return nil, fmt.Errorf("fetch %s@%s (offline? use `%s`): %w", repository, short(commit), offline, err)
		}
	}
	return t, nil
}

func (t *GitTree) git(args ...string) ([]byte, error) {
	return gitrun.Run(t.ctx, t.work, 3*time.Minute, args...)
}

// ReadFile reads the file at p in the commit.
func (t *GitTree) ReadFile(p string) ([]byte, error) { return t.git("show", t.commit+":"+p) }

// Files lists the commit's files below dir.
func (t *GitTree) Files(dir string) ([]string, error) {
	args := []string{"ls-tree", "-r", "--name-only", t.commit}
	if dir != "" && dir != "." {
		args = append(args, "--", strings.TrimSuffix(dir, "/")+"/")
	}
	out, err := t.git(args...)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p != "" {
			files = append(files, path.Clean(p))
		}
	}
	return files, nil
}

// Close removes the fetched repository.
func (t *GitTree) Close() error { return os.RemoveAll(t.work) }

// Sum is a file's sha256 as the pins write it.
func Sum(b []byte) string { return sum(b) }

// SortedPaths returns a tree's paths in order.
func SortedPaths(tree map[string][]byte) []string {
	out := make([]string, 0, len(tree))
	for p := range tree {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
