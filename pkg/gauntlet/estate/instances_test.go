package estate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestParseAddress(t *testing.T) {
	for in, want := range map[string][3]string{
		`kubernetes_priority_class_v1.x["high"]`:       {"", "kubernetes_priority_class_v1.x", `["high"]`},
		`kubernetes_config_map_v1.c[1]`:                {"", "kubernetes_config_map_v1.c", "[1]"},
		`module.ns.kubernetes_namespace.this[0]`:       {"module.ns", "module.ns.kubernetes_namespace.this", "[0]"},
		`module.a["k"].module.b.kubernetes_role_v1.r`:  {"module.a.module.b", "module.a.module.b.kubernetes_role_v1.r", ""},
		`kubernetes_manifest.sa`:                       {"", "kubernetes_manifest.sa", ""},
		`module.app-1.kubernetes_secret_v1.s["a.b/c"]`: {"module.app-1", "module.app-1.kubernetes_secret_v1.s", `["a.b/c"]`},
	} {
		a, err := ParseAddress(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := [3]string{a.Module(), a.Block(), a.Key.Text()}; got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
		if a.String() != in {
			t.Errorf("%s written back as %s", in, a.String())
		}
	}
	for _, bad := range []string{"data.kubernetes_namespace.x", "module.m", "x", "module.m.a.b.c", `x["a"].y`} {
		if _, err := ParseAddress(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

func moduleTree(t *testing.T, files map[string]string) *Root {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Root{Dir: dir, Main: "main.tf"}
}

func readParsed(t *testing.T, r *Root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	if _, diags := hclsyntax.ParseConfig(b, name, hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("%s no longer parses: %s\n%s", name, diags.Error(), b)
	}
	return string(b)
}

const instancesTF = `locals {
  classes = {
    high = { value = 100 } # the top
    low  = { value = 1 }
  }
}

resource "kubernetes_priority_class_v1" "pc" {
  for_each = local.classes
  metadata { name = each.key }
  value = each.value.value
}

resource "kubernetes_config_map_v1" "inline" {
  for_each = { a = "x", "b.c" = "y" }
  metadata { name = each.key }
}

resource "kubernetes_config_map_v1" "set" {
  for_each = toset(["one", "two", "three"])
  metadata { name = each.key }
}

resource "kubernetes_config_map_v1" "counted" {
  count = 3
  metadata { name = "c-${count.index}" }
}

resource "kubernetes_config_map_v1" "computed" {
  count = var.n
  metadata { name = "d-${count.index}" }
}
`

func TestRemoveInstance(t *testing.T) {
	r := moduleTree(t, map[string]string{"main.tf": instancesTF})
	for _, a := range []string{`kubernetes_priority_class_v1.pc["low"]`, `kubernetes_config_map_v1.inline["b.c"]`,
		`kubernetes_config_map_v1.set["two"]`, `kubernetes_config_map_v1.set["three"]`, `kubernetes_config_map_v1.counted[2]`} {
		if err := r.RemoveInstance(a); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	got := readParsed(t, r, "main.tf")
	for _, want := range []string{"high = { value = 100 } # the top\n  }", `for_each = { a = "x" }`, `toset(["one"])`, "count = 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "low") {
		t.Errorf("the low key is still there:\n%s", got)
	}
	for a, why := range map[string]string{
		`kubernetes_config_map_v1.counted[0]`:  "removes index 1 only",
		`kubernetes_config_map_v1.computed[0]`: "not a literal number",
		`kubernetes_config_map_v1.set["nine"]`: `no element "nine"`,
		`kubernetes_config_map_v1.inline`:      "no instance key",
	} {
		if err := r.RemoveInstance(a); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", a, err, why)
		}
	}
}

const moduleRootTF = `module "ns" {
  source = "./modules/ns"
}
`

const moduleNSTF = `module "inner" {
  source = "../inner"
}

resource "kubernetes_namespace_v1" "this" {
  count = 1
  metadata {
    name   = "demo"
    labels = { team = "a" }
  }
}

resource "kubernetes_config_map_v1" "cm" {
  metadata {
    name      = "cm"
    namespace = kubernetes_namespace_v1.this[0].metadata[0].name
  }
}

output "ns" { value = kubernetes_namespace_v1.this[0].metadata[0].name }
`

const moduleInnerTF = `resource "kubernetes_secret_v1" "s" {
  metadata {
    name = "s"
  }
}
`

func TestEditsInLocalModules(t *testing.T) {
	r := moduleTree(t, map[string]string{"main.tf": moduleRootTF, "modules/ns/main.tf": moduleNSTF, "modules/inner/main.tf": moduleInnerTF})
	if err := r.SetLabel("module.ns.kubernetes_namespace_v1.this[0]", "reviewed", "yes"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetLabel("module.ns.module.inner.kubernetes_secret_v1.s", "reviewed", "yes"); err != nil {
		t.Fatal(err)
	}
	if got := readParsed(t, r, "modules/ns/main.tf"); !strings.Contains(got, `reviewed = "yes"`) {
		t.Errorf("no label in the module:\n%s", got)
	}
	if got := readParsed(t, r, "modules/inner/main.tf"); !strings.Contains(got, `reviewed = "yes"`) {
		t.Errorf("no label in the nested module:\n%s", got)
	}
	n, err := r.RenameResource("module.ns.kubernetes_namespace_v1.this", "module.ns.kubernetes_namespace_v1.this_renamed")
	if err != nil || n != 2 {
		t.Fatalf("rename in a module: %d references, %v", n, err)
	}
	if got := readParsed(t, r, "modules/ns/main.tf"); strings.Contains(got, "kubernetes_namespace_v1.this[") || !strings.Contains(got, `"kubernetes_namespace_v1" "this_renamed"`) {
		t.Errorf("rename did not follow:\n%s", got)
	}
	if err := r.RemoveResource("module.ns.module.inner.kubernetes_secret_v1.s"); err != nil {
		t.Fatal(err)
	}
	if got := readParsed(t, r, "modules/inner/main.tf"); strings.Contains(got, "kubernetes_secret_v1") {
		t.Errorf("block still there:\n%s", got)
	}
	if err := r.RemoveResource("module.ns.kubernetes_namespace_v1.this_renamed[0]"); err == nil {
		t.Error("RemoveResource took an instance address")
	}
	if err := r.SetLabel("module.nope.kubernetes_secret_v1.s", "a", "b"); err == nil || !strings.Contains(err.Error(), `0 module calls "nope"`) {
		t.Errorf("unknown module: %v", err)
	}
}
