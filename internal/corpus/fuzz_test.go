package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// inside reports whether p lies in folder dir.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// A pin that estate.yaml accepts never makes the import read outside the
// folder it imports from or write outside the cache's corpus folder, and
// a malformed one is an error, never a panic.
func FuzzImport(f *testing.F) {
	estates := filepath.Join("..", "..", "estates")
	names, err := estate.List(estates)
	if err != nil || len(names) == 0 {
		f.Fatalf("no estates under %s to seed from: %v", estates, err)
	}
	for _, n := range names {
		s, err := estate.Load(estates, n)
		if err != nil {
			f.Fatal(err)
		}
		for _, src := range s.Sources() {
			file, as := src.Path, ""
			if len(src.Files) > 0 {
				file, as = src.Files[0].Path, src.Files[0].As
			}
			f.Add(src.Repository, src.Commit, src.Dir, file, as, []byte("resource \"x\" \"y\" {}\n"), len(src.Files) == 0)
		}
	}
	f.Add("https://example.test/owner/repo", strings.Repeat("ab", 20), "examples/app", "../../main.tf", "", []byte("x"), false)
	f.Fuzz(func(t *testing.T, repository, commit, dir, file, as string, content []byte, single bool) {
		src := map[string]any{"repository": repository, "commit": commit, "license": "MIT"}
		if single {
			src["path"], src["sha256"] = file, sum(content)
		} else {
			src["dir"] = dir
			src["files"] = []map[string]string{{"path": file, "sha256": sum(content), "as": as}}
		}
		raw, err := json.Marshal(map[string]any{"apiVersion": estate.APIVersion, "name": "x", "title": "t", "source": src})
		if err != nil {
			t.Fatal(err)
		}
		spec, err := estate.Parse(raw)
		if err != nil {
			return
		}
		s := spec.Sources()[0]
		from, cache := t.TempDir(), t.TempDir()
		store := filepath.Join(cache, "corpus")
		for _, pf := range s.Pinned() {
			if p, err := Path(cache, s, pf.RepoPath); err == nil && !inside(store, p) {
				t.Fatalf("pinned %q is cached at %s, outside %s", pf.RepoPath, p, store)
			}
			// Lay the file out where an import looks, when that is inside
			// the folder; the import must not find one outside it.
			if host, repo, err := split(s.Repository); err == nil {
				p := filepath.Join(from, host, repo, s.Commit, filepath.FromSlash(pf.RepoPath))
				if inside(from, p) {
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
						_ = os.WriteFile(p, content, 0o644)
					}
				}
			}
		}
		got, err := Import(cache, from, s)
		if err != nil {
			return
		}
		for _, p := range got {
			if !inside(store, p) {
				t.Fatalf("imported to %s, outside %s", p, store)
			}
		}
		if _, err := Verified(cache, s); err != nil {
			t.Fatalf("imported, then not verified: %v", err)
		}
	})
}
