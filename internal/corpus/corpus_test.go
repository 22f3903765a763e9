package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

func source(content string) *estate.Source {
	h := sha256.Sum256([]byte(content))
	return &estate.Source{Repository: "https://example.test/owner/repo", Commit: strings.Repeat("ab", 20), Path: "dir/main.tf", SHA256: hex.EncodeToString(h[:])}
}

func layout(t *testing.T, withHost bool, src *estate.Source, content string) string {
	dir := t.TempDir()
	base := filepath.Join(dir, "owner", "repo")
	if withHost {
		base = filepath.Join(dir, "example.test", "owner", "repo")
	}
	p := filepath.Join(base, src.Commit, "dir", "main.tf")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(content), 0o644)
	return dir
}

func TestImportVerifiesBothLayouts(t *testing.T) {
	for _, withHost := range []bool{false, true} {
		src := source("resource {}\n")
		cache := t.TempDir()
		if _, err := Verified(cache, src); err == nil || !strings.Contains(err.Error(), "corpus import") {
			t.Errorf("an empty cache does not name the import command: %v", err)
		}
		p, err := Import(cache, layout(t, withHost, src, "resource {}\n"), src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Verified(cache, src); err != nil || len(got) != 1 || got[0].File != p[0] || got[0].RootPath != "main.tf" {
			t.Errorf("Verified = %+v, %v; want %q at main.tf", got, err, p)
		}
	}
}

func TestAlteredFilesAreRefused(t *testing.T) {
	src := source("resource {}\n")
	cache := t.TempDir()
	if _, err := Import(cache, layout(t, false, src, "resource { tampered }\n"), src); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("an altered file was imported: %v", err)
	}
	p, err := Import(cache, layout(t, false, src, "resource {}\n"), src)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p[0], 0o644)
	os.WriteFile(p[0], []byte("changed in the cache\n"), 0o644)
	if _, err := Verified(cache, src); err == nil || !strings.Contains(err.Error(), "the pin says") {
		t.Errorf("a cache file changed after import was accepted: %v", err)
	}
}

func TestFetchOfflineFailsFastWithTheFix(t *testing.T) {
	src := source("x")
	src.Repository = "https://127.0.0.1:1/owner/repo"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Fetch(ctx, t.TempDir(), src)
	if err == nil || !strings.Contains(err.Error(), "corpus import") {
		t.Errorf("a fetch that cannot reach the repository: %v", err)
	}
}

// TestFetchRefusesAnUnnamableRepositoryFirst: a repository URL the cache
// could not name a folder for is refused before git fetches anything
// (Fetch shares OpenTree's fetch, which checks it first).
func TestFetchRefusesAnUnnamableRepositoryFirst(t *testing.T) {
	src := source("x")
	src.Repository = "https://../owner/repo"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Fetch(ctx, t.TempDir(), src)
	if err == nil || !strings.Contains(err.Error(), "must each name a folder") || strings.Contains(err.Error(), "git") {
		t.Errorf("a repository the cache cannot name: %v", err)
	}
}

// TestEnsureSharedTriesTheEnvironmentsFolderFirst: $GAUNTLET_CORPUS_DIR
// is imported from before the shared folder; without either, offline is
// an error naming the variable.
func TestEnsureSharedTriesTheEnvironmentsFolderFirst(t *testing.T) {
	src := source("resource {}\n")
	spec := &estate.Spec{Name: "e", Source: src}
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "no-shared-corpus")
	t.Setenv(DirEnv, "")
	if err := EnsureShared(ctx, t.TempDir(), spec, missing, true, log.Discard()); err == nil || !strings.Contains(err.Error(), DirEnv) {
		t.Errorf("offline with no folder holding the files: %v", err)
	}
	t.Setenv(DirEnv, layout(t, false, src, "resource {}\n"))
	cache := t.TempDir()
	if err := EnsureShared(ctx, cache, spec, missing, true, log.Discard()); err != nil {
		t.Fatal(err)
	}
	if _, err := Verified(cache, src); err != nil {
		t.Errorf("not imported from $%s: %v", DirEnv, err)
	}
	// The shared folder is tried after it: an altered copy in the
	// environment's folder is refused, the shared one imported.
	t.Setenv(DirEnv, layout(t, false, src, "altered\n"))
	cache = t.TempDir()
	if err := EnsureShared(ctx, cache, spec, layout(t, true, src, "resource {}\n"), true, log.Discard()); err != nil {
		t.Fatal(err)
	}
	if _, err := Verified(cache, src); err != nil {
		t.Errorf("not imported from the shared folder: %v", err)
	}
}

func TestRepositoryURLs(t *testing.T) {
	if _, _, err := split("not a url"); err == nil {
		t.Error("accepted a non-URL")
	}
	if _, _, err := split("https://host/only-owner"); err == nil {
		t.Error("accepted a URL without owner/repo")
	}
	host, repo, err := split("https://github.com/kubernetes/k8s.io.git")
	if err != nil || host != "github.com" || repo != "kubernetes/k8s.io" {
		t.Errorf("split = %q %q %v", host, repo, err)
	}
}

// A list source: every file is verified on import and again from the
// cache, lands at its path relative to dir (or at as), and one altered
// file refuses the whole source.
func TestListSourceImportsEveryFileVerified(t *testing.T) {
	files := map[string]string{"mod/root/main.tf": "module \"m\" { source = \"./modules/m\" }\n", "mod/root/modules/m/main.tf": "# m\n"}
	sumOf := func(c string) string { h := sha256.Sum256([]byte(c)); return hex.EncodeToString(h[:]) }
	src := &estate.Source{Repository: "https://example.test/owner/repo", Commit: strings.Repeat("cd", 20), Dir: "mod/root", Files: []estate.SourceFile{
		{Path: "main.tf", SHA256: sumOf(files["mod/root/main.tf"])},
		{Path: "modules/m/main.tf", SHA256: sumOf(files["mod/root/modules/m/main.tf"])},
	}}
	dir := t.TempDir()
	for rel, c := range files {
		p := filepath.Join(dir, "owner", "repo", src.Commit, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(c), 0o644)
	}
	cache := t.TempDir()
	ps, err := Import(cache, dir, src)
	if err != nil || len(ps) != 2 {
		t.Fatalf("Import = %v, %v", ps, err)
	}
	got, err := Verified(cache, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RootPath != "main.tf" || got[1].RootPath != "modules/m/main.tf" || got[1].File != ps[1] {
		t.Errorf("Verified = %+v", got)
	}
	os.WriteFile(ps[1], []byte("# tampered\n"), 0o644)
	if _, err := Verified(cache, src); err == nil || !strings.Contains(err.Error(), "the pin says") {
		t.Errorf("a tampered module file was accepted: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "owner", "repo", src.Commit, "mod/root/modules/m/main.tf"), []byte("# tampered\n"), 0o644)
	if _, err := Import(t.TempDir(), dir, src); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("an altered module file was imported: %v", err)
	}
}
