// Package corpus brings third-party Terraform files into gauntlet's cache,
// pinned by repository, commit, path and sha256. gauntlet never carries
// their text: it fetches a file (online) or imports it from a directory
// laid out <owner>/<repo>/<commit>/<path> (or <host>/<owner>/...), and a
// file whose sha256 differs from the pin is refused.
package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// Path is where src lives in the cache under dir.
func Path(cacheDir string, src *estate.Source) (string, error) {
	host, repo, err := split(src.Repository)
	if err != nil {
		return "", err
	}
	return filepath.Join(cacheDir, "corpus", host, repo, src.Commit, filepath.FromSlash(src.Path)), nil
}

// Verified returns the cached file for src after checking its sha256; a
// missing file is an error naming the commands that bring it.
func Verified(cacheDir string, src *estate.Source) (string, error) {
	p, err := Path(cacheDir, src)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("corpus file %s@%s:%s is not in the cache: run `go run ./tools/gauntlet corpus import DIR` (offline) or `go run ./tools/gauntlet corpus fetch` (online)",
			src.Repository, short(src.Commit), src.Path)
	}
	if err != nil {
		return "", err
	}
	if got := sum(b); got != src.SHA256 {
		return "", fmt.Errorf("corpus file %s: sha256 %s, the pin says %s", p, got, src.SHA256)
	}
	return p, nil
}

// Import copies src from dir into the cache, verifying its sha256.
func Import(cacheDir, dir string, src *estate.Source) (string, error) {
	host, repo, err := split(src.Repository)
	if err != nil {
		return "", err
	}
	var tried []string
	for _, base := range []string{filepath.Join(dir, repo), filepath.Join(dir, host, repo)} {
		p := filepath.Join(base, src.Commit, filepath.FromSlash(src.Path))
		tried = append(tried, p)
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		return store(cacheDir, src, b, p)
	}
	return "", fmt.Errorf("corpus import: %s not found (looked at %s)", src.Path, strings.Join(tried, ", "))
}

// Fetch downloads src with git (a shallow fetch of the pinned commit) and
// stores it, verified. It needs the network; offline, use Import.
func Fetch(ctx context.Context, cacheDir string, src *estate.Source) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "gauntlet-fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(string(ee.Stderr)))
			}
			return nil, fmt.Errorf("git %s: %w", args[0], err)
		}
		return out, nil
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"fetch", "-q", "--depth=1", "--filter=blob:none", src.Repository, src.Commit},
	} {
		if _, err := git(args...); err != nil {
			return "", fmt.Errorf("corpus fetch %s@%s (offline? use `gauntlet corpus import DIR`): %w", src.Repository, short(src.Commit), err)
		}
	}
	b, err := git("show", src.Commit+":"+src.Path)
	if err != nil {
		return "", fmt.Errorf("corpus fetch %s: %w", src.Path, err)
	}
	return store(cacheDir, src, b, src.Repository)
}

func store(cacheDir string, src *estate.Source, b []byte, from string) (string, error) {
	if got := sum(b); got != src.SHA256 {
		return "", fmt.Errorf("corpus file from %s: sha256 %s, the pin says %s: refusing it", from, got, src.SHA256)
	}
	p, err := Path(cacheDir, src)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	// Write then rename: a concurrent reader sees the old file or the new
	// one, never half of it (which would fail its sha256 check).
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
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
