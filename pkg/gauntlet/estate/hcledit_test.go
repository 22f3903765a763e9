package estate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

const typedTF = `resource "kubernetes_service_account_v1" "sa" {
  metadata {
    name      = "web" # the app's account
    namespace = "apps"
  }
}

resource "kubernetes_role_binding_v1" "rb" {
  metadata {
    name   = var.name
    labels = {
      team = "a"
    }
  }
  subject {
    kind      = "ServiceAccount"
    name      = kubernetes_service_account_v1.sa.metadata[0].name
    namespace = "${kubernetes_service_account_v1.sa.metadata[0].namespace}"
  }
  depends_on = [kubernetes_service_account_v1.sa]
}
`

const manifestTF = `resource "kubernetes_manifest" "cm" {
  manifest = {
    "apiVersion" = "v1"
    "kind"       = "ConfigMap"
    "metadata" = {
      "name"      = "${var.name}-cfg"
      "namespace" = var.namespace
    }
    "data" = { a = "b" }
  }
}

output "sa" { value = kubernetes_service_account_v1.sa_other }
`

func hclRoot(t *testing.T) *Root {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"main.tf": typedTF, "manifest.tf": manifestTF, "gauntlet_providers.tf": "# not ours\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Root{Dir: dir, Main: "main.tf"}
}

func read(t *testing.T, r *Root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, diags := hclsyntax.ParseConfig(b, name, hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("%s no longer parses: %s\n%s", name, diags.Error(), b)
	}
	return string(b)
}

func TestRenameResourceFollowsReferences(t *testing.T) {
	r := hclRoot(t)
	n, err := r.RenameResource("kubernetes_service_account_v1.sa", "kubernetes_service_account_v1.sa_renamed")
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("%d references rewritten, want 3", n)
	}
	got := read(t, r, "main.tf")
	for _, want := range []string{`resource "kubernetes_service_account_v1" "sa_renamed" {`, `name      = kubernetes_service_account_v1.sa_renamed.metadata[0].name`,
		`"${kubernetes_service_account_v1.sa_renamed.metadata[0].namespace}"`, `depends_on = [kubernetes_service_account_v1.sa_renamed]`, `# the app's account`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(read(t, r, "manifest.tf"), "sa_renamed_other") {
		t.Error("a longer name sharing the prefix was renamed")
	}
	if _, err := r.RenameResource("kubernetes_service_account_v1.sa", "kubernetes_service_account_v1.x"); err == nil {
		t.Error("renaming a block that is gone succeeded")
	}
}

func TestSuffixName(t *testing.T) {
	r := hclRoot(t)
	for _, a := range []string{"kubernetes_service_account_v1.sa", "kubernetes_role_binding_v1.rb", "kubernetes_manifest.cm"} {
		if err := r.SuffixName(a, "-renamed"); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	main, man := read(t, r, "main.tf"), read(t, r, "manifest.tf")
	for _, want := range []string{`name += "web-renamed" # the app's account`, `name += "\$\{var.name\}-renamed"`} {
		if !regexp.MustCompile(want).MatchString(main) {
			t.Errorf("missing %q in\n%s", want, main)
		}
	}
	if !regexp.MustCompile(`"name" += "\$\{var.name\}-cfg-renamed"`).MatchString(man) {
		t.Errorf("manifest name not suffixed:\n%s", man)
	}
}

func TestSetLabel(t *testing.T) {
	r := hclRoot(t)
	for _, a := range []string{"kubernetes_service_account_v1.sa", "kubernetes_role_binding_v1.rb", "kubernetes_manifest.cm"} {
		if err := r.SetLabel(a, "reviewed", "yes"); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	if err := r.SetLabel("kubernetes_role_binding_v1.rb", "reviewed", "again"); err != nil {
		t.Fatal(err)
	}
	main, man := read(t, r, "main.tf"), read(t, r, "manifest.tf")
	if strings.Count(main, "reviewed") != 2 || !regexp.MustCompile(`reviewed += "again"`).MatchString(main) || !regexp.MustCompile(`team += "a"`).MatchString(main) {
		t.Errorf("typed labels:\n%s", main)
	}
	if !strings.Contains(man, `"labels" = {`) && !strings.Contains(man, `labels = {`) {
		t.Errorf("manifest labels not added:\n%s", man)
	}
	if err := r.SetLabel("kubernetes_manifest.cm", "app.kubernetes.io/part-of", "x"); err != nil {
		t.Fatal(err)
	}
	man = read(t, r, "manifest.tf")
	if !strings.Contains(man, `"app.kubernetes.io/part-of" = "x"`) {
		t.Errorf("a dotted key:\n%s", man)
	}
}

func TestRemoveResource(t *testing.T) {
	r := hclRoot(t)
	if err := r.RemoveResource("kubernetes_manifest.cm"); err != nil {
		t.Fatal(err)
	}
	if man := read(t, r, "manifest.tf"); strings.Contains(man, "kubernetes_manifest") || !strings.Contains(man, `output "sa"`) {
		t.Errorf("after removal:\n%s", man)
	}
	if err := r.RemoveResource("kubernetes_manifest.cm"); err == nil {
		t.Error("removing it twice succeeded")
	}
}

func TestSavePut(t *testing.T) {
	r := hclRoot(t)
	if err := os.MkdirAll(filepath.Join(r.Dir, "modules", "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(r.Dir, "modules", "m", "main.tf")
	if err := os.WriteFile(mod, []byte("# module\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := r.Save()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveResource("kubernetes_manifest.cm"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(mod, []byte("# changed\n"), 0o644)
	os.WriteFile(filepath.Join(r.Dir, "gauntlet_new.tf"), []byte("# new\n"), 0o644)
	if err := r.Put(s); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(mod); string(b) != "# module\n" {
		t.Errorf("module file not restored: %q", b)
	}
	if !strings.Contains(read(t, r, "manifest.tf"), "kubernetes_manifest") {
		t.Error("removed block not restored")
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "gauntlet_new.tf")); !os.IsNotExist(err) {
		t.Errorf("a file made since is still there: %v", err)
	}
}

// Labels written as an expression take the label through merge(), in a
// typed metadata block and in a manifest alike; the result parses and
// keeps the expression.
func TestSetLabelMergesIntoAnExpression(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"main.tf": `variable "labels" { default = {} }
locals { common = { app = "x" } }
resource "kubernetes_role_v1" "r" {
  metadata {
    name   = "r"
    labels = var.labels
  }
}
resource "kubernetes_manifest" "cm" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name   = "cm"
      labels = merge(local.common, { tier = "a" })
    }
  }
}
`}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &Root{Dir: dir, Main: "main.tf"}
	for _, a := range []string{"kubernetes_role_v1.r", "kubernetes_manifest.cm"} {
		if err := r.SetLabel(a, "reviewed", "yes"); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	got := readParsed(t, r, "main.tf")
	for _, want := range []string{`labels = merge(var.labels, { reviewed = "yes" })`, `labels = merge(merge(local.common, { tier = "a" }), { reviewed = "yes" })`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}
