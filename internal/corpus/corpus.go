// Package corpus brings third-party Terraform files into gauntlet's cache,
// pinned by repository, commit, path and sha256 - one file, or a root's
// list of files under one commit. gauntlet never carries their text: it
// fetches the files (online) or imports them from a directory laid out
// <owner>/<repo>/<commit>/<path> (or <host>/<owner>/...), and a file whose
// sha256 differs from its pin is refused.
package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Path is where the file at repoPath of src's commit lives in the cache
// under cacheDir.
func Path(cacheDir string, src *estate.Source, repoPath string) (string, error) {
	host, repo, err := split(src.Repository)
	if err != nil {
		return "", err
	}
	return filepath.Join(cacheDir, "corpus", host, repo, src.Commit, filepath.FromSlash(repoPath)), nil
}

// Verified returns src's cached files, in the source's order, each after
// checking its sha256; a missing file is an error naming the commands
// that bring it.
func Verified(cacheDir string, src *estate.Source) ([]estate.Fetched, error) {
	var out []estate.Fetched
	for _, pf := range src.Pinned() {
		p, err := Path(cacheDir, src, pf.RepoPath)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("corpus file %s@%s:%s is not in the cache: run `go run ./tools/gauntlet corpus import DIR` (offline) or `go run ./tools/gauntlet corpus fetch` (online)",
				src.Repository, short(src.Commit), pf.RepoPath)
		}
		if err != nil {
			return nil, err
		}
		if got := sum(b); got != pf.SHA256 {
			return nil, fmt.Errorf("corpus file %s: sha256 %s, the pin says %s", p, got, pf.SHA256)
		}
		out = append(out, estate.Fetched{RootPath: pf.RootPath, File: p})
	}
	return out, nil
}

// Import copies src's files from dir into the cache, verifying each
// sha256, and returns their cache paths.
func Import(cacheDir, dir string, src *estate.Source) ([]string, error) {
	host, repo, err := split(src.Repository)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, pf := range src.Pinned() {
		var tried []string
		found := false
		for _, base := range []string{filepath.Join(dir, repo), filepath.Join(dir, host, repo)} {
			p := filepath.Join(base, src.Commit, filepath.FromSlash(pf.RepoPath))
			tried = append(tried, p)
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			got, err := store(cacheDir, src, pf, b, p)
			if err != nil {
				return nil, err
			}
			out, found = append(out, got), true
			break
		}
		if !found {
			return nil, fmt.Errorf("corpus import: %s not found (looked at %s)", pf.RepoPath, strings.Join(tried, ", "))
		}
	}
	return out, nil
}

// Fetch downloads src's files with git (a shallow, blobless fetch of the
// pinned commit, the one OpenTree makes) and stores them, verified. It
// needs the network; offline, use Import.
func Fetch(ctx context.Context, cacheDir string, src *estate.Source) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	tree, err := openTree(ctx, src.Repository, src.Commit, "gauntlet corpus import DIR")
	if err != nil {
		return nil, fmt.Errorf("corpus %w", err)
	}
	defer tree.Close()
	var out []string
	for _, pf := range src.Pinned() {
		b, err := tree.ReadFile(pf.RepoPath)
		if err != nil {
			return nil, fmt.Errorf("corpus fetch %s: %w", pf.RepoPath, err)
		}
		p, err := store(cacheDir, src, pf, b, src.Repository)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func store(cacheDir string, src *estate.Source, pf estate.Pinned, b []byte, from string) (string, error) {
	if got := sum(b); got != pf.SHA256 {
		return "", fmt.Errorf("corpus file %s from %s: sha256 %s, the pin says %s: refusing it", pf.RepoPath, from, got, pf.SHA256)
	}
	p, err := Path(cacheDir, src, pf.RepoPath)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	// Whole: a concurrent reader never sees half of it (which would fail
	// its sha256 check).
	return p, atomicfile.Write(p, b, 0o644)
}

// split turns https://github.com/kubernetes/k8s.io into ("github.com",
// "kubernetes/k8s.io").
func split(repo string) (string, string, error) {
	u, err := url.Parse(repo)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("repository %q: want a URL like https://host/owner/repo", repo)
	}
	path := strings.Trim(strings.TrimSuffix(u.Path, ".git"), "/")
	if strings.Count(path, "/") != 1 {
		return "", "", fmt.Errorf("repository %q: want https://host/owner/repo", repo)
	}
	// Each name is a folder of the cache and of an imported corpus: none
	// may climb out of it or be empty.
	for _, n := range append([]string{u.Host}, strings.Split(path, "/")...) {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `\`) {
			return "", "", fmt.Errorf("repository %q: host, owner and repo must each name a folder (%q does not)", repo, n)
		}
	}
	return u.Host, path, nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}

// DirEnv names a folder laid out like shared/corpus that EnsureShared
// imports from first.
const DirEnv = "GAUNTLET_CORPUS_DIR"

// EnsureShared is Ensure from the folders gauntlet's commands and tests
// look in, in order: $GAUNTLET_CORPUS_DIR when set, then shared (the
// shared/corpus folder beside the checkout), then - online - a fetch.
func EnsureShared(ctx context.Context, cacheDir string, spec *estate.Spec, shared string, offline bool, l log.Logger) error {
	var dirs []string
	if d := os.Getenv(DirEnv); d != "" {
		dirs = append(dirs, d)
	}
	return Ensure(ctx, cacheDir, spec, append(dirs, shared), offline, l)
}

// Ensure brings every source of an estate into the cache that is not there
// yet, verified: from the first of dirs that has it (each laid out
// <owner>/<repo>/<commit>/<path>), else - when online - by a fetch. Each
// import and fetch is said on l; offline and nowhere to be found is an
// error naming the command that brings the files.
func Ensure(ctx context.Context, cacheDir string, spec *estate.Spec, dirs []string, offline bool, l log.Logger) error {
	for _, src := range spec.Sources() {
		if _, err := Verified(cacheDir, src); err == nil {
			continue
		}
		var tried []string
		done := false
		for _, d := range dirs {
			if _, err := os.Stat(d); err != nil {
				continue
			}
			ps, err := Import(cacheDir, d, src)
			if err == nil {
				l.Infof("corpus: imported %d file(s) of %s at %s from %s (sha256 verified)", len(ps), src.Repository, short(src.Commit), d)
				done = true
				break
			}
			tried = append(tried, err.Error())
		}
		if done {
			continue
		}
		if offline {
			return fmt.Errorf("corpus files of %s (%s at %s) are not cached and offline (%s): run `go run ./tools/gauntlet corpus import DIR` or set %s",
				spec.Name, src.Repository, short(src.Commit), strings.Join(tried, "; "), DirEnv)
		}
		l.Infof("corpus: fetching %s at %s (network)", src.Repository, short(src.Commit))
		if _, err := Fetch(ctx, cacheDir, src); err != nil {
			return err
		}
	}
	return nil
}
