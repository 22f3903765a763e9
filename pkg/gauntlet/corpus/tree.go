package corpus

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/internal/gitrun"
)

// ReadTree fetches, with git (a shallow, blobless fetch of one commit),
// the .tf files at paths of a repository - each a file or a folder, taken
// whole with its subfolders - for `gauntlet estate new` to pin. It needs
// the network. Keys are repository paths.
func ReadTree(ctx context.Context, repository, commit string, paths []string) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if _, _, err := split(repository); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "gauntlet-tree-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	git := func(args ...string) ([]byte, error) { return gitrun.Run(ctx, work, 0, args...) }
	for _, args := range [][]string{{"init", "-q"}, {"fetch", "-q", "--depth=1", "--filter=blob:none", repository, commit}} {
		if _, err := git(args...); err != nil {
			return nil, fmt.Errorf("fetch %s@%s (offline? use `gauntlet estate new --dir DIR`): %w", repository, short(commit), err)
		}
	}
	listed, err := git(append([]string{"ls-tree", "-r", "--name-only", commit, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, p := range strings.Split(strings.TrimSpace(string(listed)), "\n") {
		if path.Ext(p) != ".tf" {
			continue
		}
		b, err := git("show", commit+":"+p)
		if err != nil {
			return nil, err
		}
		out[p] = b
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no .tf file at %s in %s@%s", strings.Join(paths, ", "), repository, short(commit))
	}
	return out, nil
}

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
