package estate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// writeTree writes files (slash paths) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A root in a module's examples/ folder: the files its configuration
// reads (templatefile, file, fileset, through path.module and a local
// built from it) and the module it calls from "../../" with that module's
// own template are all taken; a path known only at plan time and a file
// that is not there are said, never guessed.
func TestClosureTakesEveryFileTheRootReads(t *testing.T) {
	repo := t.TempDir()
	writeTree(t, repo, map[string]string{
		"examples/app/main.tf": `
locals {
  tpl_dir = "${path.module}/templates"
}
resource "kubernetes_config_map_v1" "c" {
  metadata { name = "c" }
  data = {
    a = templatefile("${local.tpl_dir}/a.tpl", { x = 1 })
    b = file("./files/b.sh")
    c = join(",", [for f in fileset(path.module, "conf/*.yaml") : f])
    d = file(var.where)
    e = file("${path.module}/gone.txt")
  }
}
module "m" {
  source = "../../"
}
module "r" {
  source = "example/thing/kubernetes"
}
variable "where" {}
`,
		"examples/app/templates/a.tpl":  "x=${x}",
		"examples/app/files/b.sh":       "echo b",
		"examples/app/conf/one.yaml":    "one: 1",
		"examples/app/conf/two.yaml":    "two: 2",
		"examples/app/conf/skip.txt":    "not matched",
		"examples/app/unreferenced.txt": "not read by anything",
		"main.tf":                       "resource \"kubernetes_secret_v1\" \"s\" {\n  metadata { name = \"s\" }\n  data = { t = templatefile(\"${path.module}/tpl/s.tpl\", {}) }\n}\nmodule \"inner\" {\n  source = \"./modules/inner\"\n}\n",
		"tpl/s.tpl":                     "s",
		"modules/inner/main.tf":         "resource \"kubernetes_service_account_v1\" \"sa\" {\n  metadata { name = \"sa\" }\n}\n",
		"other/unrelated.tf":            "resource \"kubernetes_namespace_v1\" \"n\" {}\n",
	})
	tk, err := Closure(DirTree(repo), "examples/app")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"examples/app/conf/one.yaml", "examples/app/conf/two.yaml", "examples/app/files/b.sh", "examples/app/main.tf",
		"examples/app/templates/a.tpl", "main.tf", "modules/inner/main.tf", "tpl/s.tpl",
	}
	if got := tk.SortedFiles(); !slices.Equal(got, want) {
		t.Errorf("taken files:\n got %v\nwant %v", got, want)
	}
	if got := tk.Modules; !slices.Equal(got, []string{"examples/app", ".", "modules/inner"}) {
		t.Errorf("modules: %v", got)
	}
	if len(tk.Unresolved) != 1 || tk.Unresolved[0].Expr != "var.where" || !strings.Contains(tk.Unresolved[0].Why, "var") {
		t.Errorf("unresolved: %v", tk.Unresolved)
	}
	if len(tk.Missing) != 1 || tk.Missing[0].Path != "examples/app/gone.txt" {
		t.Errorf("missing: %v", tk.Missing)
	}
	if len(tk.Remote) != 1 || tk.Remote[0].Expr != "example/thing/kubernetes" {
		t.Errorf("remote: %v", tk.Remote)
	}
	if !slices.Equal(tk.Required, []string{"where"}) {
		t.Errorf("required: %v", tk.Required)
	}
}

// A source whose files climb out of its dir (a module called from
// "../../") is valid, lands with the repository's folder names kept above
// the root, and the module is there for the engines to find; a path that
// climbs out of the repository is refused.
func TestSourceClimbingOutOfItsDir(t *testing.T) {
	src := &Source{Repository: "https://github.com/example/mod", Commit: strings.Repeat("a", 40), Dir: "examples/app",
		Files: []SourceFile{{Path: "main.tf", SHA256: strings.Repeat("1", 64)}, {Path: "../../main.tf", SHA256: strings.Repeat("2", 64)}}}
	if err := src.validate(); err != nil {
		t.Fatal(err)
	}
	if src.Up() != 2 {
		t.Errorf("up = %d, want 2", src.Up())
	}
	if got := src.Pinned()[1].RepoPath; got != "main.tf" {
		t.Errorf("repo path = %q, want main.tf", got)
	}
	for _, bad := range []string{"../../../main.tf", "a/../../x.tf", "/etc/passwd"} {
		b := *src
		b.Files = []SourceFile{{Path: bad, SHA256: strings.Repeat("1", 64)}}
		if err := b.validate(); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
	work := t.TempDir()
	files := map[string]string{
		"main.tf":       "module \"m\" {\n  source = \"../../\"\n}\n",
		"../../main.tf": "resource \"kubernetes_secret_v1\" \"s\" {\n  metadata { name = \"s\" }\n}\n",
	}
	var fetched []Fetched
	for i, p := range src.Pinned() {
		f := filepath.Join(work, "store", p.RootPath+".src")
		writeTree(t, filepath.Dir(f), map[string]string{filepath.Base(f): files[src.Files[i].Path]})
		fetched = append(fetched, Fetched{RootPath: p.RootPath, File: f})
	}
	s := &Spec{Name: "climb", Source: src}
	r, err := s.Materialise(filepath.Join(work, "root"), DefaultRoot, Materials{Fetched: fetched})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(work, "root", "examples", "app"); r.Dir != want {
		t.Errorf("root dir %s, want %s", r.Dir, want)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "..", "..", "main.tf")); err != nil {
		t.Errorf("the module called from ../../ is not there: %v", err)
	}
	tk, err := r.Taken()
	if err != nil {
		t.Fatal(err)
	}
	if len(tk.Missing) != 0 || !slices.Contains(tk.SortedFiles(), "main.tf") {
		t.Errorf("the laid-out root does not find its module: missing %v, files %v", tk.Missing, tk.SortedFiles())
	}
}

// Every literal cluster setting - a provider's config_path and context,
// an aliased provider's host, token and exec block, a backend's own
// config_path - is pointed at the side's cluster by an override file the
// run owns, recorded as a delta the page shows; the providers file no
// longer claims the root's variables do it.
func TestClusterSettingsOverridden(t *testing.T) {
	work := t.TempDir()
	kc := filepath.Join(work, "side.kubeconfig")
	writeTree(t, work, map[string]string{"side.kubeconfig": "apiVersion: v1\nkind: Config\ncurrent-context: s\ncontexts: [{name: s, context: {cluster: s, user: s}}]\nclusters: [{name: s, cluster: {server: \"https://127.0.0.1:9\"}}]\nusers: [{name: s, user: {token: side-token}}]\n"})
	spec := &Spec{Name: "cluster", Files: []string{"main.tf"}, Dir: filepath.Join(work, "estate")}
	writeTree(t, spec.Dir, map[string]string{"main.tf": `
terraform {
  backend "kubernetes" {
    secret_suffix = "app"
    namespace     = "state"
    config_path   = "~/.kube/config"
  }
}
provider "kubernetes" {
  config_path    = "./kubeconfig"
  config_context = "docker-desktop"
}
provider "kubernetes" {
  alias = "other"
  host  = "https://10.0.0.1"
  token = "literal"
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
  }
}
resource "kubernetes_config_map_v1" "c" {
  metadata { name = "c" }
}
`})
	r, err := spec.Materialise(filepath.Join(work, "root"), DefaultRoot, Materials{Kubeconfig: kc,
		Providers: []ProviderPin{{Name: "kubernetes", Source: "hashicorp/kubernetes", Version: "3.2.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(r.Dir, ClusterOverride))
	if err != nil {
		t.Fatalf("no override file: %v", err)
	}
	if _, diags := hclsyntax.ParseConfig(raw, ClusterOverride, hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("override does not parse: %s\n%s", diags.Error(), raw)
	}
	o := string(raw)
	for _, want := range []string{
		`config_path = "` + kc + `"`, "config_context = null", `alias = "other"`, "host = null", "token = null",
		`command     = "cat"`, `secret_suffix = "app"`, `namespace = "state"`,
	} {
		if !strings.Contains(o, want) {
			t.Errorf("override lacks %q:\n%s", want, o)
		}
	}
	if strings.Contains(o, "~/.kube/config") || strings.Contains(o, "docker-desktop") {
		t.Errorf("override keeps a literal cluster setting:\n%s", o)
	}
	cred, err := os.ReadFile(kc + ".exec-credential.json")
	if err != nil || !strings.Contains(string(cred), "side-token") {
		t.Errorf("exec credential: %s %v", cred, err)
	}
	var said []string
	for _, d := range r.Applied {
		said = append(said, d.Name+": "+d.Why)
	}
	if len(said) != 1 || !strings.Contains(said[0], "config_context, config_path") || !strings.Contains(said[0], "exec block") || !strings.Contains(said[0], `backend "kubernetes"`) {
		t.Errorf("applied deltas do not say the override: %v", said)
	}
	pf, err := os.ReadFile(filepath.Join(r.Dir, providersFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(pf), "its variables point it") || !strings.Contains(string(pf), ClusterOverride) {
		t.Errorf("providers file comment:\n%s", pf)
	}
}

var testPins = []ProviderPin{
	{Name: "kubernetes", Source: "hashicorp/kubernetes", Version: "3.2.1"},
	{Name: "random", Source: "hashicorp/random", Version: "3.9.0"},
}

// A root that needs a provider the toolchain does not supply, or whose
// constraint excludes the pin, is refused before any cluster starts,
// naming the block and what it needs; a declared relax_providers entry
// runs it on the pin through an override and is shown as a delta; a
// relaxation that matches nothing or that the pin does not need is
// refused. A required variable with no value is refused too.
func TestCheckRefusesWhatTheToolchainCannotRun(t *testing.T) {
	root := `terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 2.23"
    }
    random = ">= 3.0"
  }
}
variable "host" {}
variable "level" {
  default = 1
}
resource "aws_s3_bucket" "b" {}
resource "aws_s3_bucket" "c" {}
resource "random_id" "r" {
  byte_length = 2
}
resource "kubernetes_config_map_v1" "c" {
  metadata { name = "c" }
}
`
	mk := func(t *testing.T, extra string) (*Spec, string) {
		dir := t.TempDir()
		writeTree(t, filepath.Join(dir, "estate"), map[string]string{"main.tf": root})
		s, err := Parse([]byte("apiVersion: gauntlet/v1\nname: needs\ntitle: t\nfiles: [main.tf]\n" + extra))
		if err != nil {
			t.Fatal(err)
		}
		s.Dir = filepath.Join(dir, "estate")
		return s, dir
	}
	mats := func(string) Materials { return Materials{Providers: testPins[:1], Supplied: testPins} }
	s, dir := mk(t, "")
	_, err := s.Check(filepath.Join(dir, "work"), mats)
	if err == nil {
		t.Fatal("a root needing aws and kubernetes ~> 2.23 passed the check")
	}
	for _, want := range []string{
		`main.tf:14: resource "aws_s3_bucket" "b" (and resource "aws_s3_bucket" "c" at main.tf:15) needs hashicorp/aws: the toolchain does not supply it`,
		`required_providers needs hashicorp/kubernetes "~> 2.23": the constraint excludes the pinned 3.2.1`,
		"relax_providers", "variables with no default that estate.yaml does not set: host",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q:\n%v", want, err)
		}
	}
	if strings.Count(err.Error(), "needs hashicorp/aws") != 1 || strings.Contains(err.Error(), "random_id") || strings.Contains(err.Error(), `hashicorp/random ">= 3.0"`) {
		t.Errorf("the refusal repeats aws or names random, which the pin meets:\n%v", err)
	}

	s, dir = mk(t, "variables: {host: h}\nrelax_providers:\n  - {provider: kubernetes, constraint: \"~> 2.23\", why: written against 2.x}\n")
	_, err = s.Check(filepath.Join(dir, "work"), mats)
	if err == nil || strings.Contains(err.Error(), "needs hashicorp/kubernetes") || !strings.Contains(err.Error(), "needs hashicorp/aws") {
		t.Errorf("with the relaxation only aws should be refused: %v", err)
	}
	r, err := s.Materialise(filepath.Join(dir, "run"), DefaultRoot, Materials{Providers: testPins[:1], Supplied: testPins})
	if err != nil {
		t.Fatal(err)
	}
	o, err := os.ReadFile(filepath.Join(r.Dir, relaxOverride))
	if err != nil || !strings.Contains(string(o), `version = "3.2.1"`) {
		t.Errorf("relax override: %s %v", o, err)
	}
	if len(r.Applied) != 1 || !strings.Contains(r.Applied[0].Why, `"~> 2.23"`) || !strings.Contains(r.Applied[0].Why, "written against 2.x") {
		t.Errorf("the relaxation is not a delta the page shows: %+v", r.Applied)
	}

	for extra, want := range map[string]string{
		"relax_providers: [{provider: kubernetes, constraint: \"~> 2.30\", why: w}]\n": "the pinned source moved",
		"relax_providers: [{provider: random, constraint: \">= 3.0\", why: w}]\n":      "already meets it",
	} {
		s, dir := mk(t, extra)
		if _, err := s.Materialise(filepath.Join(dir, "run"), DefaultRoot, Materials{Providers: testPins[:1], Supplied: testPins}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", extra, err, want)
		}
	}
	for extra, want := range map[string]string{
		"relax_providers: [{provider: kubernetes, constraint: \"~> 2.23\"}]\n":            "provider, constraint and why are required",
		"relax_providers: [{provider: kubernetes, constraint: \"not one\", why: w}]\n":    "constraint",
		"relax_providers: [{provider: kubernetes, constraint: \"1\", why: w, root: x}]\n": "no root",
		"variables: {host: TODO, level: 2}\n":                                             "variables host are TODO",
	} {
		if _, err := Parse([]byte("apiVersion: gauntlet/v1\nname: needs\ntitle: t\nfiles: [main.tf]\n" + extra)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", extra, err, want)
		}
	}
}
