package estate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const specYAML = `apiVersion: gauntlet/v1
name: demo
title: A demo estate
lane: kubernetes
set: growing
files: [main.tf]
namespace: default
prefix: dm
kinds:
  - {group: "", version: v1, kind: ConfigMap}
deltas:
  - {name: colour, why: testing, old: '"blue"', new: '"green"'}
  - {name: kind-only, why: testing, substrates: [kind], old: 'data', new: 'data'}
`

const mainTF = `resource "kubernetes_config_map_v1" "a" {
  metadata {
    name = "a" # a comment with a { brace
  }
  data = { colour = "blue", note = "}{" }
}

resource "kubernetes_config_map_v1" "b" {
  metadata {
    name = "b"
  }
}
`

func writeEstate(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "demo")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "estate.yaml"), []byte(specYAML), 0o644)
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644)
	return root
}

func TestLoadAndMaterialise(t *testing.T) {
	root := writeEstate(t)
	s, err := Load(root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Materialise(filepath.Join(t.TempDir(), "root"), DefaultRoot, Materials{Substrate: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Applied) != 1 || r.Applied[0].Name != "colour" {
		t.Errorf("applied %+v, want only the delta for every substrate", r.Applied)
	}
	b, _ := os.ReadFile(filepath.Join(r.Dir, "main.tf"))
	if !strings.Contains(string(b), `"green"`) || strings.Contains(string(b), `"blue"`) {
		t.Errorf("delta not applied:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "gauntlet_providers.tf")); err != nil {
		t.Error(err)
	}
	names, _ := List(root)
	if len(names) != 1 || names[0] != "demo" {
		t.Errorf("List = %v", names)
	}
	if _, err := Load(root, "absent"); err == nil || !strings.Contains(err.Error(), "estates: demo") {
		t.Errorf("a missing estate does not list the known ones: %v", err)
	}
}

func TestEditCountsMustMatch(t *testing.T) {
	r := &Root{Dir: t.TempDir(), Main: "main.tf"}
	os.WriteFile(filepath.Join(r.Dir, "main.tf"), []byte(mainTF), 0o644)
	if err := r.Edit(Edit{Old: `name = "`, New: `name = "x`}); err == nil || !strings.Contains(err.Error(), "found 2") {
		t.Errorf("an edit matching twice where once was declared: %v", err)
	}
	if err := r.Edit(Edit{Old: "absent", New: "x"}); err == nil || !strings.Contains(err.Error(), "the pinned source moved") {
		t.Errorf("an edit matching nothing: %v", err)
	}
	if err := r.Edit(Edit{Old: `name = "`, New: `name = "x`, Count: 2}); err != nil {
		t.Errorf("a declared count of 2: %v", err)
	}
}

func TestRemoveBlockSkipsBracesInStringsAndComments(t *testing.T) {
	r := &Root{Dir: t.TempDir(), Main: "main.tf"}
	os.WriteFile(filepath.Join(r.Dir, "main.tf"), []byte(mainTF), 0o644)
	if err := r.RemoveBlock("kubernetes_config_map_v1.a"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(r.Dir, "main.tf"))
	if strings.Contains(string(b), `"a"`) || !strings.HasPrefix(string(b), `resource "kubernetes_config_map_v1" "b" {`) {
		t.Errorf("after removing a:\n%s", b)
	}
	if err := r.RemoveBlock("kubernetes_config_map_v1.a"); err == nil {
		t.Error("removing an absent block succeeded")
	}
	if err := r.RemoveBlock("not an address"); err == nil {
		t.Error("a malformed address was accepted")
	}
}

func TestKindsOptional(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(specYAML, "kinds:\n  - {group: \"\", version: v1, kind: ConfigMap}", "", 1)))
	if err != nil || len(s.Kinds) != 0 {
		t.Fatalf("a spec without kinds: %v %+v", err, s)
	}
}

func TestMinimalSpecDefaults(t *testing.T) {
	s, err := Parse([]byte("apiVersion: gauntlet/v1\nname: demo\ntitle: A demo\nfiles: [main.tf]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Lane != "kubernetes" || s.Set != "growing" || s.Namespace != "default" || s.Prefix != "gauntlet" || len(s.WritesInto) != 1 || s.WritesInto[0] != "default" {
		t.Errorf("defaults: %+v", s)
	}
}

func TestParseRejects(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, want string }{
		"unknown field":           {"set: growing", "set: growing\nsurprise: 1", "surprise"},
		"bad name":                {"name: demo", "name: Demo_1", "lowercase"},
		"no source":               {"files: [main.tf]", "", "exactly one of source"},
		"kind no version":         {"kinds:\n  - {group: \"\", version: v1, kind: ConfigMap}", "kinds:\n  - {group: \"\", kind: ConfigMap}", "kinds"},
		"delta no why":            {"why: testing, old: '\"blue\"'", "why: '', old: '\"blue\"'", "name and why are required"},
		"short sha":               {"files: [main.tf]", "source: {repository: https://h/o/r, commit: '0123456789012345678901234567890123456789', path: a.tf, sha256: abc}", "sha256"},
		"bad prefix":              {"prefix: dm", "prefix: Dm_", "prefix"},
		"not_derived and skipped": {"set: growing", "set: growing\nskip: {day2_remove: one object}\nnot_derived: {day2_remove: no leaf}", "list it in one place"},
		"not_derived but written": {"set: growing", "set: growing\nnot_derived: {drift_reconverge: no label}\ndrift: {address: a.b, object: {version: v1, kind: ConfigMap, name: c}, field: x, want: y, patch: '[]'}", "has its plan written here"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(specYAML, tc.from, tc.to, 1)
			if bad == specYAML {
				t.Fatal("case changes nothing")
			}
			if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAPIVersionRequired: a file that does not name the format, or names
// another, is refused before anything else is read, naming the file and
// the line to add.
func TestAPIVersionRequired(t *testing.T) {
	body := strings.TrimPrefix(specYAML, "apiVersion: gauntlet/v1\n")
	for name, tc := range map[string]struct{ yaml, want string }{
		"missing": {body, "apiVersion is missing: add `apiVersion: gauntlet/v1` as the first line"},
		"another": {"apiVersion: gauntlet/v2\n" + body, `apiVersion "gauntlet/v2": this gauntlet reads gauntlet/v1 only: add ` + "`apiVersion: gauntlet/v1`"},
		// A later format's fields are not what refuses it: its version is.
		"another, with fields unknown here": {"apiVersion: gauntlet/v2\n" + body + "colour: blue\n", `apiVersion "gauntlet/v2"`},
		"not a string":                      {"apiVersion: 1\n" + body, `apiVersion "1"`},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "demo")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "estate.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(root, "demo")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), file) {
				t.Fatalf("error %v, want it to name %s and say %q", err, file, tc.want)
			}
		})
	}
	if s, err := Parse([]byte(specYAML)); err != nil || s.APIVersion != APIVersion {
		t.Fatalf("with apiVersion: %v, %+v", err, s)
	}
}

const listSpecYAML = `apiVersion: gauntlet/v1
name: listed
title: A root of many files
lane: kubernetes
set: growing
source:
  repository: https://example.test/owner/repo
  commit: '0123456789012345678901234567890123456789'
  license: Apache-2.0
  dir: root
  files:
    - {path: main.tf, sha256: '1111111111111111111111111111111111111111111111111111111111111111'}
    - {path: modules/ns/main.tf, sha256: '2222222222222222222222222222222222222222222222222222222222222222'}
    - {path: examples/one/example_1.tf, sha256: '3333333333333333333333333333333333333333333333333333333333333333', as: one.tf}
variables:
  name: demo
  config_path: ${kubeconfig}
  token: s3cr3t-t0ken
  nested: {paths: ["${kubeconfig}", 2]}
sensitive: [token]
namespace: default
prefix: ls
kinds:
  - {group: "", version: v1, kind: Namespace}
deltas:
  - {name: module-edit, why: testing, file: modules/ns/main.tf, old: '"ns"', new: '"ns2"'}
`

// A list source lands whole (local modules at their paths, a renamed
// example at its `as`), deltas may edit a module file, variables are
// written as the run-owned tfvars JSON with ${kubeconfig} expanded, and a
// root that configures its own kubernetes provider gets no second block.
func TestMaterialiseListSourceVariablesAndProviders(t *testing.T) {
	s, err := Parse([]byte(listSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	content := map[string]string{
		"main.tf":                   "provider \"kubernetes\" {\n  config_path = var.config_path\n}\nterraform {\n  required_providers {\n    kubernetes = { source = \"hashicorp/kubernetes\" }\n  }\n}\nmodule \"ns\" { source = \"./modules/ns\" }\n",
		"modules/ns/main.tf":        "resource \"kubernetes_namespace\" \"n\" {\n  metadata { name = \"ns\" }\n}\n",
		"examples/one/example_1.tf": "# one\n",
	}
	var fetched []Fetched
	for _, p := range s.Source.Pinned() {
		rel := strings.TrimPrefix(p.RepoPath, "root/")
		f := filepath.Join(src, strings.ReplaceAll(rel, "/", "_"))
		os.WriteFile(f, []byte(content[rel]), 0o644)
		fetched = append(fetched, Fetched{RootPath: p.RootPath, File: f})
	}
	dir := filepath.Join(t.TempDir(), "root")
	r, err := s.Materialise(dir, DefaultRoot, Materials{Fetched: fetched, Substrate: "local", Kubeconfig: "/run/side.kubeconfig",
		Providers: []ProviderPin{{Name: "kubernetes", Source: "hashicorp/kubernetes", Version: "3.2.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Main != "main.tf" {
		t.Errorf("main file %q", r.Main)
	}
	read := func(rel string) string { b, _ := os.ReadFile(filepath.Join(dir, rel)); return string(b) }
	if got := read("modules/ns/main.tf"); !strings.Contains(got, `"ns2"`) {
		t.Errorf("module file not materialised with its delta:\n%s", got)
	}
	if got := read("one.tf"); got != "# one\n" {
		t.Errorf("the example did not land at its `as`: %q", got)
	}
	var vars map[string]any
	if err := json.Unmarshal([]byte(read(varsFile)), &vars); err != nil {
		t.Fatal(err)
	}
	nested, _ := vars["nested"].(map[string]any)
	if vars["config_path"] != "/run/side.kubeconfig" || vars["name"] != "demo" || nested["paths"].([]any)[0] != "/run/side.kubeconfig" {
		t.Errorf("variables file: %v", vars)
	}
	prov := read(providersFile)
	if strings.Contains(prov, `provider "kubernetes"`) || strings.Contains(prov, "required_providers") {
		t.Errorf("the providers file duplicates what the root brings:\n%s", prov)
	}
	// BREAK of the check above: a root without its own block gets ours.
	os.WriteFile(filepath.Join(src, "main.tf"), []byte("module \"ns\" { source = \"./modules/ns\" }\n"), 0o644)
	dir2 := filepath.Join(t.TempDir(), "root")
	if _, err := s.Materialise(dir2, DefaultRoot, Materials{Fetched: fetched, Providers: []ProviderPin{{Name: "kubernetes", Source: "hashicorp/kubernetes", Version: "3.2.1"}}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir2, providersFile))
	if !strings.Contains(string(b), "provider \"kubernetes\" {}") || !strings.Contains(string(b), `version = "3.2.1"`) {
		t.Errorf("a root with no provider of its own got no pinned provider:\n%s", b)
	}
}

// Sensitive values never appear in what gauntlet prints: Redact takes
// them out of any text, nested values included, and an unknown name in
// sensitive is refused.
func TestSensitiveValuesAreRedacted(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(listSpecYAML, "sensitive: [token]", "sensitive: [token, nested]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Redact("apply failed: token s3cr3t-t0ken rejected; name demo; path ${kubeconfig}")
	if strings.Contains(got, "s3cr3t") || strings.Contains(got, "${kubeconfig}") || !strings.Contains(got, "(sensitive)") || !strings.Contains(got, "demo") {
		t.Errorf("Redact = %q", got)
	}
	// BREAK: without the sensitive list the value goes through.
	s.Sensitive = nil
	if got := s.Redact("token s3cr3t-t0ken"); !strings.Contains(got, "s3cr3t-t0ken") {
		t.Errorf("Redact removed a value no one marked sensitive: %q", got)
	}
	if _, err := Parse([]byte(strings.Replace(listSpecYAML, "sensitive: [token]", "sensitive: [absent]", 1))); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("an unknown sensitive name: %v", err)
	}
}

const rootsSpecYAML = `apiVersion: gauntlet/v1
name: ordered
title: Two roots in order
lane: kubernetes
set: growing
roots:
  - name: crd
    files: [crd.tf]
    variables: {plural: widgets}
  - name: cr
    files: [cr.tf]
    variables: {name: w1}
variables: {group: example.test}
namespace: default
prefix: od
kinds:
  - {group: "", version: v1, kind: ConfigMap}
`

func TestOrderedRoots(t *testing.T) {
	s, err := Parse([]byte(rootsSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	rs := s.RootSpecs()
	if len(rs) != 2 || rs[0].Name != "crd" || rs[1].Name != "cr" {
		t.Fatalf("roots %+v", rs)
	}
	if rs[0].Variables["group"] != "example.test" || rs[0].Variables["plural"] != "widgets" || rs[1].Variables["plural"] != nil {
		t.Errorf("variables merge: %+v", rs)
	}
	if s.ActedRoot(s.StageRoot()) != "cr" {
		t.Errorf("acted root %q, want the last", s.ActedRoot(s.StageRoot()))
	}
	for name, bad := range map[string]string{
		"roots and source": rootsSpecYAML + "files: [x.tf]\n",
		"unknown root":     rootsSpecYAML + "remove: {root: absent, address: a.b}\n",
		"two acted roots":  rootsSpecYAML + "remove: {root: crd, address: a.b}\nrename: {root: cr, from: a.b, to: a.c}\n",
		"duplicate names":  strings.Replace(rootsSpecYAML, "name: cr\n", "name: crd\n", 1),
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A BREAK's edit in a local module's file is undone by Put like one in
// the root's own files.
func TestSavePutCoversModuleFiles(t *testing.T) {
	r := &Root{Dir: t.TempDir(), Main: "main.tf"}
	os.MkdirAll(filepath.Join(r.Dir, "modules", "m"), 0o755)
	os.WriteFile(filepath.Join(r.Dir, "main.tf"), []byte("module \"m\" { source = \"./modules/m\" }\n"), 0o644)
	os.WriteFile(filepath.Join(r.Dir, "modules", "m", "main.tf"), []byte(mainTF), 0o644)
	saved, err := r.Save()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Edit(Edit{File: "modules/m/main.tf", Old: `"blue"`, New: `"red"`}); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(saved); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Dir, "modules", "m", "main.tf")); string(b) != mainTF {
		t.Errorf("the module file was not restored:\n%s", b)
	}
}

// A fence names the identity and the root whose records it closes; it
// counts as a stage section naming the acted root.
func TestFenceSection(t *testing.T) {
	s, err := Parse([]byte(rootsSpecYAML + "fence: {identity: cr-planner, root: cr, reads: {root: crd}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Fence.Identity != "cr-planner" || s.Fence.Reads.Root != "crd" || s.StageRoot() != "cr" {
		t.Errorf("fence %+v, stage root %q", s.Fence, s.StageRoot())
	}
	for name, bad := range map[string]string{
		"reads itself":    "fence: {identity: p, reads: {root: cr}}\n",
		"unknown reads":   "fence: {identity: p, reads: {root: absent}}\n",
		"bad identity":    "fence: {identity: P_1, reads: {root: crd}}\n",
		"two acted roots": "fence: {identity: p, root: crd, reads: {root: cr}}\nremove: {root: cr, address: a.b}\n",
		"unknown field":   "fence: {identity: p, reads: {root: crd, list: true}}\n",
	} {
		if _, err := Parse([]byte(rootsSpecYAML + bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A root in a module's examples/ calls the module at "../..": an edit to
// the module's block is outside the root's folder, and Put undoes it all
// the same (the remove stage's keep_block BREAK could not fail on such a
// root, and the put-back after a failed stage left the block removed).
func TestSavePutCoversModulesOutsideTheRoot(t *testing.T) {
	top := t.TempDir()
	r := &Root{Dir: filepath.Join(top, "examples", "default"), Main: "main.tf"}
	os.MkdirAll(r.Dir, 0o755)
	os.WriteFile(filepath.Join(r.Dir, "main.tf"), []byte("module \"m\" { source = \"../..\" }\n"), 0o644)
	os.WriteFile(filepath.Join(top, "main.tf"), []byte(mainTF), 0o644)
	saved, err := r.Save()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "main.tf"), []byte("# the block removed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(saved); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(top, "main.tf")); string(b) != mainTF {
		t.Errorf("the module file outside the root was not restored:\n%s", b)
	}
}

// A written root keeps its layout: the first file's folder is the root's,
// and a module it calls from beside it lands where its source says.
func TestWrittenFilesKeepTheirPaths(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "demo")
	noDeltas := specYAML[:strings.Index(specYAML, "deltas:")]
	s := loadDemo(t, root, map[string]string{
		"estate.yaml":             strings.Replace(noDeltas, "files: [main.tf]", "files: [app/main.tf, modules/cm/main.tf]", 1),
		"app/main.tf":             "module \"cm\" {\n  source = \"../modules/cm\"\n}\n",
		"modules/cm/main.tf":      mainTF,
		"modules/cm/unlisted.txt": "not taken",
	})
	base := filepath.Join(t.TempDir(), "root")
	r, err := s.Materialise(base, DefaultRoot, Materials{Substrate: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir != filepath.Join(base, "app") || r.Main != "main.tf" {
		t.Errorf("root at %s (main %s), want %s/app", r.Dir, r.Main, base)
	}
	if b, err := os.ReadFile(filepath.Join(base, "modules", "cm", "main.tf")); err != nil || string(b) != mainTF {
		t.Errorf("the module is not beside the root: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(base, "modules", "cm", "unlisted.txt")); err == nil {
		t.Error("a file estate.yaml does not list was taken")
	}
	// A path that leaves estate.yaml's folder is refused when loading.
	os.WriteFile(filepath.Join(dir, "estate.yaml"), []byte(strings.Replace(specYAML, "files: [main.tf]", "files: [../main.tf]", 1)), 0o644)
	if _, err := Load(root, "demo"); err == nil || !strings.Contains(err.Error(), "inside estate.yaml's folder") {
		t.Errorf("a file outside the estate's folder: %v", err)
	}
}

// A structured edit finds its block by address, in a local module too,
// and sets an attribute through nested blocks whatever the whitespace.
func TestHCLEditSetsAnAttributeByAddress(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "demo")
	noDeltas := specYAML[:strings.Index(specYAML, "deltas:")]
	deltas := `deltas:
  - {name: one-replica, why: testing, hcl: {resource: module.web.kubernetes_deployment_v1.web, set: spec.replicas, value: "1"}}
  - {name: no-wait, why: testing, hcl: {resource: module.web.kubernetes_deployment_v1.web, set: wait_for_rollout, value: "false"}}
  - {name: colour, why: testing, hcl: {resource: kubernetes_config_map_v1.a, set: data, value: '{ colour = "green" }'}}
`
	s := loadDemo(t, root, map[string]string{
		"estate.yaml": strings.Replace(noDeltas, "files: [main.tf]", "files: [main.tf, web/main.tf]", 1) + deltas,
		"main.tf":     mainTF + "module \"web\" {\n  source = \"./web\"\n}\n",
		"web/main.tf": "resource \"kubernetes_deployment_v1\" \"web\" {\n  metadata {\n    name = \"web\"\n  }\n  spec {\n    replicas    =    3 # many\n    template {}\n  }\n}\n",
	})
	r, err := s.Materialise(filepath.Join(t.TempDir(), "root"), DefaultRoot, Materials{Substrate: "local"})
	if err != nil {
		t.Fatal(err)
	}
	web, _ := os.ReadFile(filepath.Join(r.Dir, "web", "main.tf"))
	if !strings.Contains(string(web), "replicas = 1") || !strings.Contains(string(web), "wait_for_rollout = false") || strings.Contains(string(web), "3") {
		t.Errorf("the module's deployment is not edited:\n%s", web)
	}
	main, _ := os.ReadFile(filepath.Join(r.Dir, "main.tf"))
	if !strings.Contains(string(main), `data = { colour = "green" }`) || !strings.Contains(string(main), `name = "b"`) {
		t.Errorf("the root's ConfigMap is not edited:\n%s", main)
	}
	// What the edit cannot find, or is not told right, is refused by name.
	if err := r.SetAttribute(HCLEdit{Resource: "module.web.kubernetes_deployment_v1.web", Set: "spec.template.x.y", Value: "1"}); err == nil || !strings.Contains(err.Error(), "0 x blocks at spec.template") {
		t.Errorf("a nested block that is not there: %v", err)
	}
	if err := r.SetAttribute(HCLEdit{Resource: "kubernetes_config_map_v1.absent", Set: "data", Value: "1"}); err == nil {
		t.Error("a resource that is not there was edited")
	}
	for yaml, want := range map[string]string{
		`{name: both, why: t, old: x, hcl: {resource: a.b, set: c, value: "1"}}`:  "exactly one of old",
		`{name: bad, why: t, hcl: {resource: a.b, set: c, value: "1 +"}}`:         "not one HCL expression",
		`{name: file, why: t, hcl: {resource: a.b, set: c, value: "1"}, file: x}`: "finds its block by address",
	} {
		os.WriteFile(filepath.Join(dir, "estate.yaml"), []byte(strings.Replace(noDeltas, "files: [main.tf]", "files: [main.tf, web/main.tf]", 1)+"deltas:\n  - "+yaml+"\n"), 0o644)
		if _, err := Load(root, "demo"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yaml, err, want)
		}
	}
}

// loadDemo writes the demo estate's files under root and loads it.
func loadDemo(t *testing.T, root string, files map[string]string) *Spec {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, "demo", filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(body), 0o644)
	}
	s, err := Load(root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
