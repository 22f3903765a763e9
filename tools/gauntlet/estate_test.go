package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

func TestCorpusLayout(t *testing.T) {
	r, c, d, ok := corpusLayout("/work/shared/corpus/hashicorp/terraform-provider-kubernetes/3a33fb6cc6055853584af1731b1369164c35ffc7/_examples/kubernetes_manifest/vault")
	if !ok || r != "https://github.com/hashicorp/terraform-provider-kubernetes" || c != "3a33fb6cc6055853584af1731b1369164c35ffc7" || d != "_examples/kubernetes_manifest/vault" {
		t.Errorf("%q %q %q %v", r, c, d, ok)
	}
	if _, _, _, ok := corpusLayout("/home/me/roots/app"); ok {
		t.Error("a plain folder read as a corpus layout")
	}
}

func TestNames(t *testing.T) {
	all := []string{"a/x.tf", "b/x.tf", "b/y.tf", "main.tf"}
	if got := flatName("a/x.tf", all); got != "a.tf" {
		t.Errorf("flatName a/x.tf = %q", got)
	}
	if got := flatName("b/y.tf", all); got != "b_y.tf" {
		t.Errorf("flatName b/y.tf = %q", got)
	}
	if got := commonDir([]string{"ex/res/a/x.tf", "ex/res/b/y.tf"}); got != "ex/res" {
		t.Errorf("commonDir = %q", got)
	}
}

// estate new on a plain folder (no corpus layout, no --repository or
// --commit): the root's files copied beside estate.yaml with their layout
// (a local module under it and one called from beside it), the provider's
// config_path variable set to the kubeconfig, and the estate refusing to
// load until its required variable has a value. With --repository and
// --commit the same folder is pinned as a source instead.
func TestEstateNewOffline(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "app")
	writeFiles(t, root, map[string]string{
		"app/main.tf":           "variable \"kube\" {}\nvariable \"name\" {}\nprovider \"kubernetes\" {\n  config_path = var.kube\n}\nresource \"kubernetes_config_map_v1\" \"c\" {\n  metadata {\n    name = var.name\n    labels = { app = \"x\" }\n  }\n  data = { conf = file(\"${path.module}/app.conf\") }\n}\nmodule \"m\" {\n  source = \"./modules/m\"\n}\nmodule \"shared\" {\n  source = \"../shared\"\n}\n",
		"app/app.conf":          "level=1",
		"app/modules/m/main.tf": "resource \"kubernetes_secret_v1\" \"s\" {\n  metadata { name = \"s\" }\n}\n",
		"shared/main.tf":        "resource \"kubernetes_config_map_v1\" \"shared\" {\n  metadata { name = \"shared\" }\n}\n",
	})
	estates := filepath.Join(root, "estates")
	code, stdout, stderr := gauntletCLI(t, "estate", "new", "--dir", src, "--estates", estates, "--cache", filepath.Join(root, "cache"))
	if code != 0 {
		t.Fatalf("estate new: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(estates, "app")
	raw, err := os.ReadFile(filepath.Join(dir, "estate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "apiVersion: gauntlet/v1\n") {
		t.Errorf("estate.yaml does not start with its apiVersion:\n%s", raw)
	}
	want := "files:\n  - app/main.tf\n  - app/app.conf\n  - app/modules/m/main.tf\n  - shared/main.tf\n"
	for _, w := range []string{want, `kube: "${kubeconfig}"`, "name: TODO", `title: "the root in app"`} {
		if !strings.Contains(string(raw), w) {
			t.Errorf("estate.yaml lacks %q:\n%s", w, raw)
		}
	}
	if strings.Contains(string(raw), "source:") || strings.Contains(stdout, "TODO: fill in source") {
		t.Errorf("a plain folder's estate asks for a repository:\n%s\n%s", raw, stdout)
	}
	for _, p := range []string{"app/main.tf", "app/app.conf", "app/modules/m/main.tf", "shared/main.tf"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("not copied beside estate.yaml: %v", err)
		}
	}
	// A required variable left TODO is refused at load, by name.
	if _, err := estate.Load(estates, "app"); err == nil || !strings.Contains(err.Error(), "variables name are TODO") {
		t.Errorf("an estate with a required variable left TODO loaded: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "estate.yaml"), []byte(strings.Replace(string(raw), "name: TODO", "name: demo", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := estate.Load(estates, "app")
	if err != nil {
		t.Fatalf("the filled-in estate does not load: %v", err)
	}
	r, err := s.Materialise(filepath.Join(root, "laid"), estate.DefaultRoot, estate.Materials{Substrate: "local", Kubeconfig: filepath.Join(root, "kubeconfig")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "..", "shared", "main.tf")); err != nil || filepath.Base(r.Dir) != "app" {
		t.Errorf("laid out at %s without the module beside it: %v", r.Dir, err)
	}
	// Given a repository and a commit, the folder is pinned as a source.
	if code, _, stderr := gauntletCLI(t, "estate", "new", "--dir", src, "--name", "pinned", "--repository", "https://github.com/example/app", "--commit", strings.Repeat("0", 40),
		"--estates", estates, "--cache", filepath.Join(root, "cache")); code != 0 {
		t.Fatalf("estate new --repository --commit: exit %d: %s", code, stderr)
	}
	raw, _ = os.ReadFile(filepath.Join(estates, "pinned", "estate.yaml"))
	for _, w := range []string{"repository: https://github.com/example/app", "path: main.tf, sha256: ", "path: ../shared/main.tf, sha256: "} {
		if !strings.Contains(string(raw), w) {
			t.Errorf("the pinned estate.yaml lacks %q:\n%s", w, raw)
		}
	}
}

// The acceptance of issue 23: estate new on a root with a template, a
// literal config_path, an extra provider the toolchain does not supply, a
// provider constraint that excludes the pin and a module called from
// "../../" takes every file, and its report names each, starting nothing.
func TestEstateNewReportsWhatTheRootNeeds(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "example", "kube-app", strings.Repeat("c", 40))
	writeFiles(t, repo, map[string]string{
		"main.tf": `resource "kubernetes_config_map_v1" "m" {
  metadata { name = "from-module" }
  data = { conf = file("${path.module}/conf/app.conf") }
}
`,
		"conf/app.conf": "level=1",
		"examples/app/main.tf": `terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 2.23"
    }
    aws = {
      source = "hashicorp/aws"
    }
  }
}
provider "kubernetes" {
  config_path = "./kubeconfig"
}
resource "kubernetes_config_map_v1" "c" {
  metadata { name = "c" }
  data = { page = templatefile("${path.module}/templates/page.tpl", { who = "x" }) }
}
resource "aws_s3_bucket" "b" {}
module "base" {
  source = "../../"
}
`,
		"examples/app/templates/page.tpl": "hello ${who}",
	})
	estates := filepath.Join(t.TempDir(), "estates")
	code, report, stderr := gauntletCLI(t, "estate", "new", "--dir", filepath.Join(repo, "examples", "app"), "--estates", estates, "--cache", filepath.Join(t.TempDir(), "cache"))
	if code != 0 {
		t.Fatalf("estate new: exit %d: %s", code, stderr)
	}
	t.Log(report)
	for _, want := range []string{
		"templates/page.tpl (templatefile at main.tf:17)",
		"../../conf/app.conf (file at ../../main.tf:3)",
		"../..",
		`provider "kubernetes" sets config_path - a run points it at each side's cluster through gauntlet_cluster_override.tf`,
		`required_providers (and resource "aws_s3_bucket" "b" at main.tf:19) needs hashicorp/aws: the toolchain does not supply it`,
		`needs hashicorp/kubernetes "~> 2.23": the constraint excludes the pinned 3.2.1`,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	raw, err := os.ReadFile(filepath.Join(estates, "corpus-app", "estate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`dir: "examples/app"`, "path: templates/page.tpl, sha256: ", "path: ../../main.tf, sha256: ", "path: ../../conf/app.conf, sha256: ",
		`#   - {provider: kubernetes, constraint: "~> 2.23", why: "..."}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("estate.yaml lacks %q:\n%s", want, raw)
		}
	}
	if _, err := estate.Load(estates, "corpus-app"); err != nil {
		t.Errorf("the estate does not load: %v", err)
	}
}

// A root at a repository's top folder is named after the repository, not
// after the commit folder it lies in.
func TestEstateNewNamesATopFolderRootAfterItsRepository(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "example", "terraform-kubernetes-thing", strings.Repeat("d", 40))
	writeFiles(t, repo, map[string]string{"main.tf": "resource \"kubernetes_config_map_v1\" \"c\" {\n  metadata { name = \"c\" }\n}\n"})
	estates := filepath.Join(t.TempDir(), "estates")
	if code, _, stderr := gauntletCLI(t, "estate", "new", "--dir", repo, "--estates", estates, "--cache", filepath.Join(t.TempDir(), "cache")); code != 0 {
		t.Fatalf("estate new: exit %d: %s", code, stderr)
	}
	if _, err := estate.Load(estates, "corpus-terraform-kubernetes-thing"); err != nil {
		t.Errorf("no estate named after the repository: %v", err)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
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

// estate new with two --dir folders writes an ordered estate: the roots in
// the order given (a CRD before its custom resource), each pinned, the
// estate named after the last, which the stages act on.
func TestEstateNewWritesRootsInOrder(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "example", "platform", strings.Repeat("e", 40))
	writeFiles(t, repo, map[string]string{
		"crd/main.tf": "variable \"kube\" {}\nprovider \"kubernetes\" {\n  config_path = var.kube\n}\nresource \"kubernetes_config_map_v1\" \"crd\" {\n  metadata { name = \"crd\" }\n}\n",
		"app/main.tf": "resource \"kubernetes_config_map_v1\" \"app\" {\n  metadata {\n    name   = \"app\"\n    labels = { tier = \"web\" }\n  }\n}\n",
	})
	estates := filepath.Join(t.TempDir(), "estates")
	code, stdout, stderr := gauntletCLI(t, "estate", "new", "--dir", filepath.Join(repo, "crd"), "--dir", filepath.Join(repo, "app"), "--estates", estates, "--cache", filepath.Join(t.TempDir(), "cache"))
	if code != 0 {
		t.Fatalf("estate new: exit %d: %s", code, stderr)
	}
	s, err := estate.Load(estates, "corpus-app")
	if err != nil {
		t.Fatalf("the ordered estate does not load: %v", err)
	}
	specs := s.RootSpecs()
	if len(specs) != 2 || specs[0].Name != "crd" || specs[1].Name != "app" {
		t.Fatalf("roots %+v, want crd then app", specs)
	}
	for _, r := range specs {
		if r.Source == nil || r.Source.Dir != r.Name || len(r.Source.Files) != 1 || len(r.Source.Files[0].SHA256) != 64 {
			t.Errorf("root %s: source %+v, want its folder's main.tf pinned by sha256", r.Name, r.Source)
		}
	}
	if specs[0].Variables["kube"] != "${kubeconfig}" || len(specs[1].Variables) != 0 {
		t.Errorf("variables crd %v, app %v: want crd's config_path variable set to each side's kubeconfig, app's none", specs[0].Variables, specs[1].Variables)
	}
	if !strings.Contains(stdout, "== root crd") || !strings.Contains(stdout, "== root app") || !strings.Contains(stdout, "the stages act on the last root, app") {
		t.Errorf("the report does not name each root and the acted one:\n%s", stdout)
	}
	// Plain folders: each root's files copied beside estate.yaml, under
	// the root's name.
	plain := t.TempDir()
	writeFiles(t, plain, map[string]string{"crd/main.tf": "resource \"kubernetes_config_map_v1\" \"crd\" {\n  metadata { name = \"crd\" }\n}\n",
		"app/main.tf": "resource \"kubernetes_config_map_v1\" \"app\" {\n  metadata { name = \"app\" }\n}\n"})
	if code, _, stderr := gauntletCLI(t, "estate", "new", "--dir", filepath.Join(plain, "crd"), "--dir", filepath.Join(plain, "app"), "--estates", estates); code != 0 {
		t.Fatalf("estate new on plain folders: exit %d: %s", code, stderr)
	}
	if s, err := estate.Load(estates, "app"); err != nil {
		t.Errorf("the ordered estate of plain folders does not load: %v", err)
	} else if specs := s.RootSpecs(); len(specs) != 2 || !slices.Equal(specs[0].Files, []string{"crd/main.tf"}) || !slices.Equal(specs[1].Files, []string{"app/main.tf"}) {
		t.Errorf("roots %+v, want crd/main.tf then app/main.tf", specs)
	}
	if code, _, stderr := gauntletCLI(t, "estate", "new", "--dir", filepath.Join(repo, "crd"), "--dir", filepath.Join(repo, "app"), "--flatten", "--estates", estates); code != 2 || !strings.Contains(stderr, "with one --dir") {
		t.Errorf("--flatten with two --dir: exit %d, %s; want a usage error", code, stderr)
	}
}
