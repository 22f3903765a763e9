package estate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHandoffSection(t *testing.T) {
	s, err := Parse([]byte(rootsSpecYAML + "handoff: {address: kubernetes_manifest.x, from: cr, to: crd}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Handoff; h == nil || h.Address != "kubernetes_manifest.x" || h.From != "cr" || h.To != "crd" {
		t.Fatalf("handoff %+v", s.Handoff)
	}
	for name, tc := range map[string]struct{ section, want string }{
		"unknown root": {"handoff: {address: a.b, from: cr, to: absent}", `no root "absent"`},
		"same root":    {"handoff: {address: a.b, from: cr, to: cr}", "between two roots"},
		"bad address":  {"handoff: {address: module.m.a.b, from: cr, to: crd}", "type.name"},
		"unknown key":  {"handoff: {address: a.b, from: cr, to: crd, id: x}", "id"},
	} {
		if _, err := Parse([]byte(rootsSpecYAML + tc.section + "\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

// A block taken from one root and adopted by another is the same block;
// the removed and import blocks parse and say what the hand-off needs.
func TestTakeAndAdoptResource(t *testing.T) {
	from := hclRoot(t)
	to := &Root{Dir: t.TempDir(), Main: "main.tf"}
	if err := os.WriteFile(filepath.Join(to.Dir, "main.tf"), []byte(backendTF), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := from.TakeResource("kubernetes_manifest.cm")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, from, "manifest.tf"); strings.Contains(got, `"kubernetes_manifest" "cm"`) || !strings.Contains(got, `output "sa"`) {
		t.Errorf("the block stayed, or its neighbour went:\n%s", got)
	}
	if !strings.HasPrefix(text, `resource "kubernetes_manifest" "cm" {`) || !strings.Contains(text, `"name"      = "${var.name}-cfg"`) {
		t.Errorf("taken text:\n%s", text)
	}
	if err := to.AdoptResource("kubernetes_manifest.cm", text); err != nil {
		t.Fatal(err)
	}
	got := read(t, to, "main.tf")
	if !strings.Contains(got, backendTF) || !strings.Contains(got, strings.TrimSpace(text)) {
		t.Errorf("adopted:\n%s", got)
	}
	if err := to.AdoptResource("kubernetes_manifest.cm", text); err == nil {
		t.Error("a second adoption of the same block was accepted")
	}
	if _, err := from.TakeResource("kubernetes_manifest.cm"); err == nil {
		t.Error("a block taken twice")
	}
}

const backendTF = `terraform {
  backend "kubernetes" {
    secret_suffix = "network"
    namespace     = "state-network"
  }
}
`
