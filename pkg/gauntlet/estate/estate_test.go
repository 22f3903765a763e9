package estate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const specYAML = `name: demo
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
	r, err := s.Materialise(filepath.Join(t.TempDir(), "root"), "", "local", "# providers\n")
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
	s, err := Parse([]byte("name: demo\ntitle: A demo\nfiles: [main.tf]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Lane != "kubernetes" || s.Set != "growing" || s.Namespace != "default" || s.Prefix != "gauntlet" || len(s.WritesInto) != 1 || s.WritesInto[0] != "default" {
		t.Errorf("defaults: %+v", s)
	}
}

func TestParseRejects(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, want string }{
		"unknown field":   {"set: growing", "set: growing\nsurprise: 1", "surprise"},
		"bad name":        {"name: demo", "name: Demo_1", "lowercase"},
		"no source":       {"files: [main.tf]", "", "exactly one of source"},
		"kind no version": {"kinds:\n  - {group: \"\", version: v1, kind: ConfigMap}", "kinds:\n  - {group: \"\", kind: ConfigMap}", "kinds"},
		"delta no why":    {"why: testing, old: '\"blue\"'", "why: '', old: '\"blue\"'", "name, why and old"},
		"short sha":       {"files: [main.tf]", "source: {repository: https://h/o/r, commit: '0123456789012345678901234567890123456789', path: a.tf, sha256: abc}", "sha256"},
		"bad prefix":      {"prefix: dm", "prefix: Dm_", "prefix"},
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
