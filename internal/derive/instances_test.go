package derive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// tree writes files (slash paths) into a fresh root folder.
func tree(t *testing.T, files map[string]string) string {
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
	return dir
}

type live struct {
	addr, typ, group, kind, ns, name string
	labels                           map[string]string
}

func inputOf(dir string, objs ...live) Input {
	in := Input{Dir: dir, Live: map[string]*unstructured.Unstructured{}}
	for _, x := range objs {
		o, u := obj(x.addr, x.typ, x.group, x.kind, x.ns, x.name, x.labels)
		in.Objects = append(in.Objects, o)
		in.Live[o.Address] = u
	}
	return in
}

// A root made only of one for_each block: every stage has an instance to
// act on.
const forEachTF = `resource "kubernetes_priority_class_v1" "pc" {
  for_each = {
    high = 1000
    low  = 10
  }
  metadata {
    name   = each.key
    labels = { tier = "platform" }
  }
  value = each.value
}
`

func forEachInput(t *testing.T) Input {
	dir := tree(t, map[string]string{"main.tf": forEachTF})
	lbl := map[string]string{"tier": "platform"}
	return inputOf(dir,
		live{`kubernetes_priority_class_v1.pc["high"]`, "kubernetes_priority_class_v1", "scheduling.k8s.io", "PriorityClass", "", "high", lbl},
		live{`kubernetes_priority_class_v1.pc["low"]`, "kubernetes_priority_class_v1", "scheduling.k8s.io", "PriorityClass", "", "low", map[string]string{"tier": "platform"}})
}

func TestDriftForEachInstances(t *testing.T) {
	p, err := Derive(forEachInput(t))
	if err != nil {
		t.Fatal(err)
	}
	d := p.Drift
	if d == nil {
		t.Fatalf("no drift: %s", p.Why["drift_reconverge"])
	}
	if d.Address != `kubernetes_priority_class_v1.pc["high"]` || d.Object.Name != "high" || d.Field != "metadata.labels.tier" || d.Want != "platform" ||
		d.Break.Object.Name != "low" || !strings.Contains(d.Break.Patch, "/metadata/labels/tier") {
		t.Errorf("drift %+v", d)
	}
	if why := p.Why["drift_reconverge"]; !strings.Contains(why, `key "high" of a for_each block`) {
		t.Errorf("why does not say it is an instance: %s", why)
	}
}

// Resources in local modules, nested, one of them counted: labels read
// from the modules' own files.
const modRootTF = `module "ns" {
  source = "./modules/ns"
}
`

const modNSTF = `resource "kubernetes_namespace_v1" "this" {
  count = 1
  metadata {
    name   = "demo"
    labels = { team = "a" }
  }
}

module "rbac" {
  source = "../rbac"
}
`

const modRBACTF = `resource "kubernetes_role_v1" "reader" {
  metadata {
    name      = "reader"
    namespace = "demo"
    labels    = { "app.kubernetes.io/name" = "reader" }
  }
}

output "role" { value = kubernetes_role_v1.reader.metadata[0].name }
`

func modulesInput(t *testing.T) Input {
	dir := tree(t, map[string]string{"main.tf": modRootTF, "modules/ns/main.tf": modNSTF, "modules/rbac/main.tf": modRBACTF})
	return inputOf(dir,
		live{"module.ns.kubernetes_namespace_v1.this[0]", "kubernetes_namespace_v1", "", "Namespace", "", "demo", map[string]string{"team": "a"}},
		live{"module.ns.module.rbac.kubernetes_role_v1.reader", "kubernetes_role_v1", "rbac.authorization.k8s.io", "Role", "demo", "reader",
			map[string]string{"app.kubernetes.io/name": "reader"}})
}

func TestDriftInLocalModules(t *testing.T) {
	p, err := Derive(modulesInput(t))
	if err != nil {
		t.Fatal(err)
	}
	d := p.Drift
	if d == nil {
		t.Fatalf("no drift: %s", p.Why["drift_reconverge"])
	}
	// The Role ranks before the Namespace (a stable kind).
	if d.Address != "module.ns.module.rbac.kubernetes_role_v1.reader" || d.Field != `metadata.labels["app.kubernetes.io/name"]` || d.Want != "reader" ||
		d.Break.Object.Kind != "Namespace" || !strings.Contains(d.Break.Patch, "/metadata/labels/team") {
		t.Errorf("drift %+v", d)
	}
	if why := p.Why["drift_reconverge"]; !strings.Contains(why, "in local module module.ns.module.rbac") || !strings.Contains(why, "index 0 of a count block, in local module module.ns") {
		t.Errorf("why: %s", why)
	}
}

// A label the live object does not carry (a module call's argument
// overrides it, say) is never drifted; the reason names what was looked for.
func TestDriftNeedsTheLiveLabel(t *testing.T) {
	in := modulesInput(t)
	in.Live["module.ns.kubernetes_namespace_v1.this[0]"].SetLabels(map[string]string{"team": "b"})
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Drift != nil || !strings.Contains(p.Why["drift_reconverge"], "instances of count or for_each blocks, or resources in local modules") {
		t.Errorf("drift %+v: %s", p.Drift, p.Why["drift_reconverge"])
	}
}

func TestApprovalOnForEachBlock(t *testing.T) {
	in := forEachInput(t)
	// An output reads the block: no removal takes one of its keys first.
	out := filepath.Join(in.Dir, "outputs.tf")
	if err := os.WriteFile(out, []byte("output \"classes\" { value = kubernetes_priority_class_v1.pc }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A labelled ConfigMap elsewhere takes the out-of-band move.
	o, u := obj("kubernetes_config_map_v1.other", "kubernetes_config_map_v1", "", "ConfigMap", "default", "other", map[string]string{"x": "y"})
	in.Objects, in.Live[o.Address] = append(in.Objects, o), u
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	pa := p.PlanApproval
	if pa == nil || pa.Address != `kubernetes_priority_class_v1.pc["high"]` || pa.Object.Name != "high" || pa.Move.Object.Name != "other" {
		t.Fatalf("plan approval %+v: %s", pa, p.Why["plan_approval"])
	}
	if why := p.Why["plan_approval"]; !strings.Contains(why, `one update per instance of it: 2 (kubernetes_priority_class_v1.pc["high"], kubernetes_priority_class_v1.pc["low"])`) {
		t.Errorf("why: %s", why)
	}
}

func TestApprovalInModuleCalledOnce(t *testing.T) {
	in := modulesInput(t)
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	// The rename takes the Role (nested, its module called once); the
	// approval the block left, the Namespace.
	if rn := p.Rename; rn == nil || rn.From != "module.ns.module.rbac.kubernetes_role_v1.reader" || rn.To != "module.ns.module.rbac.kubernetes_role_v1.reader_renamed" {
		t.Errorf("rename %+v: %s", rn, p.Why["day2_rename"])
	}
	pa := p.PlanApproval
	if pa == nil || pa.Address != "module.ns.kubernetes_namespace_v1.this[0]" || pa.Move.Object.Kind != "Role" {
		t.Fatalf("plan approval %+v: %s", pa, p.Why["plan_approval"])
	}
	// The module's folder is named from the root, not the run's folder.
	if why := p.Why["plan_approval"]; !strings.Contains(why, "the module is called once") || !strings.Contains(why, " in modules/") || strings.Contains(why, in.Dir) {
		t.Errorf("why: %s", why)
	}
}

// A module folder two calls reach would take the label in both: not a
// plan-approval target.
func TestApprovalSkipsModuleCalledTwice(t *testing.T) {
	dir := tree(t, map[string]string{
		"main.tf": `module "a" {
  source = "./modules/cm"
}
module "b" {
  source = "./modules/cm"
}
`,
		"modules/cm/main.tf": `resource "kubernetes_config_map_v1" "c" {
  metadata {
    name   = "c"
    labels = { app = "c" }
  }
}
`})
	in := inputOf(dir,
		live{"module.a.kubernetes_config_map_v1.c", "kubernetes_config_map_v1", "", "ConfigMap", "a", "c", map[string]string{"app": "c"}},
		live{"module.b.kubernetes_config_map_v1.c", "kubernetes_config_map_v1", "", "ConfigMap", "b", "c", map[string]string{"app": "c"}})
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.PlanApproval != nil || !strings.Contains(p.Why["plan_approval"], "local module called once") {
		t.Errorf("plan approval %+v: %s", p.PlanApproval, p.Why["plan_approval"])
	}
	if p.Drift == nil {
		t.Errorf("drift of one call's object is fine: %s", p.Why["drift_reconverge"])
	}
}

func TestRemoveForEachKey(t *testing.T) {
	p, err := Derive(forEachInput(t))
	if err != nil {
		t.Fatal(err)
	}
	rm := p.Remove
	if rm == nil || rm.Address != `kubernetes_priority_class_v1.pc["high"]` || rm.Object.Name != "high" || rm.Neighbour.Name != "low" {
		t.Fatalf("remove %+v: %s", rm, p.Why["day2_remove"])
	}
	if why := p.Why["day2_remove"]; !strings.Contains(why, `dropping key "high" from the block's for_each`) {
		t.Errorf("why: %s", why)
	}
	// The other instance of the block takes the label, the removed one gone.
	if pa := p.PlanApproval; pa != nil && pa.Address != `kubernetes_priority_class_v1.pc["low"]` {
		t.Errorf("plan approval on %s", pa.Address)
	}
}

// A count written as a literal loses its last index; a for_each over a
// local only that block reads loses a key there; a local two blocks read,
// a computed count and a module two calls reach are never edited.
func TestRemoveInstanceShapes(t *testing.T) {
	root := `locals {
  shared = { a = 1, b = 2 }
  own    = { x = 1, y = 2 }
}

resource "kubernetes_config_map_v1" "shared1" {
  for_each = local.shared
  metadata { name = "s1-${each.key}" }
}

resource "kubernetes_config_map_v1" "shared2" {
  for_each = local.shared
  metadata { name = "s2-${each.key}" }
}

resource "kubernetes_secret_v1" "own" {
  for_each = local.own
  metadata { name = "own-${each.key}" }
}

resource "kubernetes_service_account_v1" "computed" {
  count = var.n
  metadata { name = "c-${count.index}" }
}

resource "kubernetes_service_account_v1" "literal" {
  count = 2
  metadata { name = "l-${count.index}" }
}

variable "n" {
  default = 1
}
`
	lv := func(addr, typ, kind, name string) live { return live{addr, typ, "", kind, "default", name, nil} }
	objs := []live{
		lv(`kubernetes_config_map_v1.shared1["a"]`, "kubernetes_config_map_v1", "ConfigMap", "s1-a"),
		lv(`kubernetes_config_map_v1.shared1["b"]`, "kubernetes_config_map_v1", "ConfigMap", "s1-b"),
		lv(`kubernetes_config_map_v1.shared2["a"]`, "kubernetes_config_map_v1", "ConfigMap", "s2-a"),
		lv(`kubernetes_config_map_v1.shared2["b"]`, "kubernetes_config_map_v1", "ConfigMap", "s2-b"),
		lv(`kubernetes_secret_v1.own["x"]`, "kubernetes_secret_v1", "Secret", "own-x"),
		lv(`kubernetes_secret_v1.own["y"]`, "kubernetes_secret_v1", "Secret", "own-y"),
		lv(`kubernetes_service_account_v1.computed[0]`, "kubernetes_service_account_v1", "ServiceAccount", "c-0"),
		lv(`kubernetes_service_account_v1.literal[0]`, "kubernetes_service_account_v1", "ServiceAccount", "l-0"),
		lv(`kubernetes_service_account_v1.literal[1]`, "kubernetes_service_account_v1", "ServiceAccount", "l-1"),
	}
	p, err := Derive(inputOf(tree(t, map[string]string{"main.tf": root}), objs...))
	if err != nil {
		t.Fatal(err)
	}
	// ConfigMaps rank first but share their local; the Secret's own local
	// is next.
	if rm := p.Remove; rm == nil || rm.Address != `kubernetes_secret_v1.own["x"]` || !strings.Contains(p.Why["day2_remove"], `dropping key "x" from local.own`) {
		t.Fatalf("remove %+v: %s", rm, p.Why["day2_remove"])
	}
	// Without the Secrets: the literal count's last index.
	p, err = Derive(inputOf(tree(t, map[string]string{"main.tf": strings.Replace(root, `resource "kubernetes_secret_v1" "own" {
  for_each = local.own`, `resource "kubernetes_secret_v1" "own" {
  for_each = local.shared`, 1)}), objs...))
	if err != nil {
		t.Fatal(err)
	}
	if rm := p.Remove; rm == nil || rm.Address != "kubernetes_service_account_v1.literal[1]" || !strings.Contains(p.Why["day2_remove"], "count from 2 to 1") {
		t.Fatalf("remove %+v: %s", rm, p.Why["day2_remove"])
	}
}

// A module that takes its labels from its caller (labels = var.labels), as
// Gruntwork's service-account module does, called twice: each call's
// object carries what that call writes, so each is a drift candidate with
// its own value; a call whose argument is not a literal gives none.
func TestDriftThroughModuleArguments(t *testing.T) {
	sa := `variable "labels" {
  type    = map(string)
  default = { role = "default" }
}
variable "name" { type = string }
variable "on" { default = true }
resource "kubernetes_service_account" "sa" {
  count = var.on ? 1 : 0
  metadata {
    name   = var.name
    labels = var.labels
  }
}
`
	dir := tree(t, map[string]string{
		"modules/sa/main.tf": sa,
		"main.tf": `variable "team" { default = "x" }
module "admin" {
  source = "./modules/sa"
  name   = "admin"
  labels = { role = "admin" }
}
module "monitor" {
  source = "./modules/sa"
  name   = "monitor"
  labels = {
    role = "monitor"
  }
}
module "computed" {
  source = "./modules/sa"
  name   = "computed"
  labels = { role = var.team }
}
`})
	in := inputOf(dir,
		live{"module.admin.kubernetes_service_account.sa[0]", "kubernetes_service_account", "", "ServiceAccount", "default", "admin", map[string]string{"role": "admin"}},
		live{"module.monitor.kubernetes_service_account.sa[0]", "kubernetes_service_account", "", "ServiceAccount", "default", "monitor", map[string]string{"role": "monitor"}},
		live{"module.computed.kubernetes_service_account.sa[0]", "kubernetes_service_account", "", "ServiceAccount", "default", "computed", map[string]string{"role": "x"}})
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.DriftCandidates {
		got = append(got, c.String())
	}
	if len(got) != 2 || !strings.Contains(got[0], "module.admin") || !strings.Contains(got[0], "admin") ||
		!strings.Contains(got[1], "module.monitor") || !strings.Contains(got[1], "monitor") {
		t.Fatalf("candidates: %q", got)
	}
	d := p.Drift
	if d == nil || d.Address != "module.admin.kubernetes_service_account.sa[0]" || d.Field != "metadata.labels.role" || d.Want != "admin" ||
		d.Break.Object.Name != "monitor" {
		t.Errorf("drift %+v (%s)", d, p.Why["drift_reconverge"])
	}
	// The module's block is both calls': no label edit goes through var.labels.
	if p.PlanApproval != nil {
		t.Errorf("approval %+v", p.PlanApproval)
	}
}

// With no single root resource, the rename takes the one instance of a
// block whose module folder one call reaches; a folder two calls reach,
// or a block with two instances, would move more than the moved block
// names.
func TestRenameInModuleCalledOnce(t *testing.T) {
	files := map[string]string{
		"main.tf": `module "ns" {
  source = "./modules/ns"
}
module "a" {
  source = "./modules/cm"
}
module "b" {
  source = "./modules/cm"
}
`,
		"modules/ns/main.tf": `variable "on" { default = true }
resource "kubernetes_namespace_v1" "ns" {
  count = var.on ? 1 : 0
  metadata { name = "team" }
}
output "name" { value = kubernetes_namespace_v1.ns[0].metadata[0].name }
`,
		"modules/cm/main.tf": `resource "kubernetes_config_map_v1" "c" {
  metadata {
    name = "c"
  }
}
`}
	objs := []live{
		{"module.ns.kubernetes_namespace_v1.ns[0]", "kubernetes_namespace_v1", "", "Namespace", "", "team", nil},
		{"module.a.kubernetes_config_map_v1.c", "kubernetes_config_map_v1", "", "ConfigMap", "a", "c", nil},
		{"module.b.kubernetes_config_map_v1.c", "kubernetes_config_map_v1", "", "ConfigMap", "b", "c", nil},
	}
	p, err := Derive(inputOf(tree(t, files), objs...))
	if err != nil {
		t.Fatal(err)
	}
	if rn := p.Rename; rn == nil || rn.From != "module.ns.kubernetes_namespace_v1.ns[0]" || rn.To != "module.ns.kubernetes_namespace_v1.ns_renamed[0]" {
		t.Fatalf("rename %+v: %s", rn, p.Why["day2_rename"])
	}

	// Two instances of the block: renaming it would move both.
	files["modules/ns/main.tf"] = strings.Replace(files["modules/ns/main.tf"], "var.on ? 1 : 0", "2", 1)
	two := append([]live{{"module.ns.kubernetes_namespace_v1.ns[1]", "kubernetes_namespace_v1", "", "Namespace", "", "team-1", nil}}, objs...)
	if p, err = Derive(inputOf(tree(t, files), two...)); err != nil {
		t.Fatal(err)
	}
	if p.Rename != nil || !strings.Contains(p.Why["day2_rename"], "one uncounted call reaches") {
		t.Errorf("rename %+v: %s", p.Rename, p.Why["day2_rename"])
	}
}

// Labels a variable gives take the reviewed label through merge(), but
// only where no block has labels written out (an estate derived before
// keeps its choice).
func TestApprovalMergesIntoVariableLabels(t *testing.T) {
	files := map[string]string{
		"main.tf": `module "roles" {
  source = "./modules/roles"
  labels = { team = "a" }
}
`,
		"modules/roles/main.tf": `variable "labels" { default = {} }
resource "kubernetes_role_v1" "reader" {
  metadata {
    name   = "reader"
    labels = var.labels
  }
}
resource "kubernetes_role_v1" "writer" {
  metadata {
    name   = "writer"
    labels = var.labels
  }
}
`}
	lbl := map[string]string{"team": "a"}
	objs := []live{
		{"module.roles.kubernetes_role_v1.reader", "kubernetes_role_v1", "rbac.authorization.k8s.io", "Role", "d", "reader", lbl},
		{"module.roles.kubernetes_role_v1.writer", "kubernetes_role_v1", "rbac.authorization.k8s.io", "Role", "d", "writer", lbl},
	}
	p, err := Derive(inputOf(tree(t, files), objs...))
	if err != nil {
		t.Fatal(err)
	}
	pa := p.PlanApproval
	if pa == nil || estate.BlockOf(pa.Address) == estate.BlockOf(p.Rename.From) || !strings.Contains(p.Why["plan_approval"], "merge()") {
		t.Fatalf("plan approval %+v (rename %+v): %s", pa, p.Rename, p.Why["plan_approval"])
	}

	// A block with labels written out is taken first (the rename takes
	// a root resource).
	files["main.tf"] += `resource "kubernetes_namespace_v1" "d" {
  metadata { name = "d" }
}
`
	for _, n := range []string{"admin", "auditor"} {
		files["modules/roles/main.tf"] += `resource "kubernetes_role_v1" "` + n + `" {
  metadata {
    name   = "` + n + `"
    labels = { team = "a" }
  }
}
`
		objs = append(objs, live{"module.roles.kubernetes_role_v1." + n, "kubernetes_role_v1", "rbac.authorization.k8s.io", "Role", "d", n, lbl})
	}
	objs = append(objs, live{"kubernetes_namespace_v1.d", "kubernetes_namespace_v1", "", "Namespace", "", "d", nil})
	if p, err = Derive(inputOf(tree(t, files), objs...)); err != nil {
		t.Fatal(err)
	}
	pa = p.PlanApproval
	if pa == nil || (p.Remove != nil && pa.Address == p.Remove.Address) || strings.Contains(p.Why["plan_approval"], "merge()") ||
		(pa.Address != "module.roles.kubernetes_role_v1.admin" && pa.Address != "module.roles.kubernetes_role_v1.auditor") {
		t.Errorf("plan approval %+v: %s", pa, p.Why["plan_approval"])
	}
}
