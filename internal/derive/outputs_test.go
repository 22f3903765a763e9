package derive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// outputsTree is a module-heavy root in the way published modules are
// written: a module (roles) makes two Roles behind a count toggle and
// publishes each name as an output through a splat; the module between
// (ns) passes both on; the root binds the admin Role through ns's output,
// and reads the viewer's wherever reader says.
func outputsTree(t *testing.T, reader string) string {
	t.Helper()
	role := func(name string) string {
		return `resource "kubernetes_role" "` + name + `" {
  count = var.create ? 1 : 0
  metadata {
    name      = "team-` + name + `"
    namespace = "team"
  }
  rule {
    api_groups = [""]
    resources  = ["pods"]
    verbs      = ["get"]
  }
}
`
	}
	out := func(name string) string {
		return `output "` + name + `_role" {
  value = element(
    concat(
      kubernetes_role.` + name + `.*.metadata.0.name,
      [""],
    ),
    0,
  )
}
`
	}
	return tree(t, map[string]string{
		"main.tf": `module "ns" {
  source = "./modules/ns"
}

resource "kubernetes_role_binding" "admin" {
  metadata {
    name      = "admin"
    namespace = "team"
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "Role"
    name      = module.ns.admin_role
  }
  subject {
    kind = "User"
    name = "alice"
  }
}
` + reader,
		"modules/ns/main.tf": "module \"roles\" {\n  source = \"../roles\"\n}\n",
		"modules/ns/outputs.tf": "output \"admin_role\" {\n  value = module.roles.admin_role\n}\n\n" +
			"output \"viewer_role\" {\n  value = module.roles.viewer_role\n}\n",
		"modules/roles/main.tf":    "variable \"create\" {\n  default = true\n}\n\n" + role("admin") + "\n" + role("viewer"),
		"modules/roles/outputs.tf": out("admin") + "\n" + out("viewer"),
	})
}

func outputsInput(dir string) Input {
	in := inputOf(dir,
		live{"module.ns.module.roles.kubernetes_role.admin[0]", "kubernetes_role", "rbac.authorization.k8s.io", "Role", "team", "team-admin", nil},
		live{"module.ns.module.roles.kubernetes_role.viewer[0]", "kubernetes_role", "rbac.authorization.k8s.io", "Role", "team", "team-viewer", nil},
		live{"kubernetes_role_binding.admin", "kubernetes_role_binding", "rbac.authorization.k8s.io", "RoleBinding", "team", "admin", nil})
	// The binding is a leaf the first pass would take: a hand-written
	// section acts on it.
	in.Exclude = []string{"kubernetes_role_binding.admin"}
	return in
}

// TestRemovalThroughOutputs: the viewer Role is read only by outputs that
// nothing but outputs reads, up to a root output; its removal deletes its
// block by file and name and turns the splat that read it into [], and the
// edited files still parse. The admin Role's output feeds the binding, so
// it is never the one.
func TestRemovalThroughOutputs(t *testing.T) {
	dir := outputsTree(t, "\noutput \"viewer\" {\n  value = module.ns.viewer_role\n}\n")
	p, err := Derive(outputsInput(dir))
	if err != nil {
		t.Fatal(err)
	}
	rm := p.Remove
	if rm == nil {
		t.Fatalf("no removal: %s", p.Why["day2_remove"])
	}
	if rm.Address != "module.ns.module.roles.kubernetes_role.viewer[0]" || rm.File != "modules/roles/main.tf" || rm.Block != "kubernetes_role.viewer" ||
		rm.Object.Name != "team-viewer" || rm.Neighbour.Name == "team-viewer" {
		t.Fatalf("removal %+v", rm)
	}
	if len(rm.Edits) != 1 || rm.Edits[0].File != "modules/roles/outputs.tf" || rm.Edits[0].Old != "kubernetes_role.viewer.*.metadata.0.name" || rm.Edits[0].New != "[]" {
		t.Fatalf("edits %+v", rm.Edits)
	}
	why := p.Why["day2_remove"]
	for _, want := range []string{"only outputs read it (viewer_role)", "its one instance", "modules/roles"} {
		if !strings.Contains(why, want) {
			t.Errorf("why %q does not say %q", why, want)
		}
	}
	// The edit applies exactly once and leaves HCL that parses; the
	// block's removal is the root's own (estate.Root.RemoveBlockIn).
	path := filepath.Join(dir, filepath.FromSlash(rm.Edits[0].File))
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), rm.Edits[0].Old); n != 1 {
		t.Fatalf("the edit's text is in %s %d times", rm.Edits[0].File, n)
	}
	edited := strings.Replace(string(src), rm.Edits[0].Old, rm.Edits[0].New, 1)
	if _, diags := hclsyntax.ParseConfig([]byte(edited), "outputs.tf", hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("edited outputs do not parse: %s\n%s", diags.Error(), edited)
	}
}

// TestRemovalNotThroughAReadOutput: when a resource reads the viewer's
// output too (through ns), or an output reads the Role by index rather
// than a splat, no removal is derived, and Why says what a removal needs.
func TestRemovalNotThroughAReadOutput(t *testing.T) {
	read := "\nresource \"kubernetes_config_map_v1\" \"names\" {\n  metadata {\n    name      = \"names\"\n    namespace = \"team\"\n  }\n  data = { viewer = module.ns.viewer_role }\n}\n"
	in := outputsInput(outputsTree(t, read))
	in.Exclude = append(in.Exclude, "kubernetes_config_map_v1.names")
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Remove != nil || !strings.Contains(p.Why["day2_remove"], "no removal derived") {
		t.Errorf("a Role whose output a resource reads: removal %+v, why %q", p.Remove, p.Why["day2_remove"])
	}

	dir := outputsTree(t, "")
	path := filepath.Join(dir, "modules", "roles", "outputs.tf")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	byIndex := strings.Replace(string(src), "kubernetes_role.viewer.*.metadata.0.name", "[kubernetes_role.viewer[0].metadata[0].name]", 1)
	if err := os.WriteFile(path, []byte(byIndex), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err = Derive(outputsInput(dir)); err != nil {
		t.Fatal(err)
	}
	if p.Remove != nil {
		t.Errorf("a Role an output reads by index: removal %+v", p.Remove)
	}
}
