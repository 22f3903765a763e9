package estate

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/slashpath"
)

// estatesDir holds the real estates whose files seed the fuzzers.
var fuzzEstates = filepath.Join("..", "..", "..", "estates")

// seedFiles returns the estates' files matching pattern (relative to an
// estate's folder); none is an error, so a fuzzer never runs unseeded.
func seedFiles(f *testing.F, pattern string) map[string][]byte {
	f.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(fuzzEstates, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ok, _ := filepath.Match(pattern, d.Name()); !ok {
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	})
	if err != nil || len(out) == 0 {
		f.Fatalf("seeds %s under %s: %d file(s), %v", pattern, fuzzEstates, len(out), err)
	}
	return out
}

// A malformed estate.yaml is an error naming the file and the field,
// never a panic; one that loads pins files that stay inside the
// repository and land inside the run's root.
func FuzzLoad(f *testing.F) {
	for _, b := range seedFiles(f, "estate.yaml") {
		f.Add(b)
	}
	f.Add([]byte("apiVersion: gauntlet/v1\nname: x\ntitle: t\nfiles: [main.tf]\n"))
	f.Add([]byte("apiVersion: gauntlet/v1\nname: x\ntitle: t\nsource: {repository: https://h/o/r, commit: '0123456789012345678901234567890123456789', path: a/main.tf, sha256: '" + strings.Repeat("a", 64) + "'}\n"))
	f.Add([]byte("apiVersion: gauntlet/v1\nname: x\ntitle: t\nroots: [{name: a, files: [main.tf]}, {name: b, source: {repository: TODO, commit: TODO}}]\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "x")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "estate.yaml")
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(root, "x")
		if err != nil {
			if !strings.Contains(err.Error(), file) {
				t.Fatalf("the error does not name %s: %v", file, err)
			}
			return
		}
		for _, src := range s.Sources() {
			for _, p := range src.Pinned() {
				if p.RepoPath == "" || path.IsAbs(p.RepoPath) || path.Clean(p.RepoPath) != p.RepoPath || strings.HasPrefix(p.RepoPath, "../") || p.RepoPath == ".." {
					t.Fatalf("pinned file %q: outside the repository", p.RepoPath)
				}
				if up, rest := slashpath.Climb(p.RootPath); up > src.Up() || rest == "" || path.IsAbs(rest) || strings.Contains(rest, "..") {
					t.Fatalf("pinned file %q lands at %q: outside the run's root", p.RepoPath, p.RootPath)
				}
			}
		}
		s.RootSpecs()
		s.StageRoot()
		s.Redact("text")
		s.RedactJSON(`{"a":"b"}`)
	})
}

// memTree is a Tree in memory.
type memTree map[string][]byte

func (m memTree) ReadFile(p string) ([]byte, error) {
	if b, ok := m[p]; ok {
		return b, nil
	}
	return nil, fs.ErrNotExist
}

func (m memTree) Files(dir string) ([]string, error) {
	var out []string
	for p := range m {
		if dir == "" || dir == "." || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Reading a malformed root (its .tf files, a local module's, a file they
// read) is an error naming the file, never a panic; what it takes stays
// in the tree, and every finding can be said.
func FuzzClosure(f *testing.F) {
	tfs := seedFiles(f, "*.tf")
	var mains []string
	for p := range tfs {
		mains = append(mains, p)
	}
	slices.Sort(mains)
	for i, p := range mains {
		f.Add(string(tfs[p]), string(tfs[mains[(i+1)%len(mains)]]), "x=${x}")
	}
	f.Add(`
locals {
  tpl_dir = "${path.module}/templates"
}
provider "kubernetes" {
  config_path = "./kubeconfig"
  alias = "a"
  exec { command = "x" }
}
terraform {
  required_providers {
    kubernetes = { source = "hashicorp/kubernetes", version = ">= 9.0" }
    aws = "~> 5.0"
  }
  backend "kubernetes" { secret_suffix = "s", config_path = "~/.kube/config" }
}
resource "kubernetes_config_map_v1" "c" {
  provider = kubernetes.a
  data = {
    a = templatefile("${local.tpl_dir}/a.tpl", { x = 1 })
    b = file("./files/b.sh")
    c = join(",", [for f in fileset(path.module, "**/*.tpl") : f])
    d = file(var.where)
  }
}
module "m" {
  source = "./modules/m"
}
module "up" {
  source = "../../"
}
variable "where" {}
`, `variable "v" { default = 1 }
resource "aws_s3_bucket" "b" {}
output "o" { value = file("${path.module}/../../files/b.sh") }
`, "x=${x}")
	f.Fuzz(func(t *testing.T, main, module, tpl string) {
		tree := memTree{
			"repo/root/main.tf":             []byte(main),
			"repo/root/modules/m/main.tf":   []byte(module),
			"repo/root/templates/a.tpl":     []byte(tpl),
			"repo/root/files/b.sh":          []byte(tpl),
			"repo/root/gauntlet_skipped.tf": []byte("{{{"),
		}
		tk, err := Closure(tree, "repo/root")
		if err != nil {
			if !strings.Contains(err.Error(), "main.tf") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		for p := range tk.Files {
			if _, ok := tree[p]; !ok {
				t.Fatalf("taken %q: not a file of the tree", p)
			}
		}
		for _, m := range tk.Modules {
			if m == ".." || strings.HasPrefix(m, "../") || path.IsAbs(m) {
				t.Fatalf("module folder %q: outside the tree", m)
			}
		}
		for _, rs := range [][]Reference{tk.Unresolved, tk.Missing, tk.Remote} {
			for _, r := range rs {
				_ = r.String()
			}
		}
		for _, c := range tk.Cluster {
			_ = c.String()
		}
		for _, n := range tk.ProviderNeeds([]ProviderPin{{Name: "kubernetes", Source: "hashicorp/kubernetes", Version: "3.2.1"}}, nil) {
			_ = n.String()
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := declared(dir); err != nil && !strings.Contains(err.Error(), "main.tf") {
			t.Fatalf("the error does not name the file: %v", err)
		}
	})
}

// A malformed resource address is an error, never a panic; one that
// parses prints back as itself (the stages match the engine's own
// addresses by that text).
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{`kubernetes_config_map_v1.a`, `x.y["k"]`, `x.y[0]`, `module.m["a"].module.n[1].t.r["x.y"]`, `module.m`, `a.b[`, `a.b["\""]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			return
		}
		if got := a.String(); got != s {
			if b, err := ParseAddress(got); err != nil || b.String() != got {
				t.Errorf("%q parsed, printed %q, which does not parse back to itself (%v)", s, got, err)
			}
		}
	})
}
