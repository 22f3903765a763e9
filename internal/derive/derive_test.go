package derive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const rootTF = `resource "kubernetes_namespace_v1" "ns" {
  metadata {
    name   = "demo"
    labels = { team = "a" }
  }
}

resource "kubernetes_role_v1" "role" {
  metadata {
    name      = "reader"
    namespace = kubernetes_namespace_v1.ns.metadata[0].name
    labels    = { test = "MyRole", owner = var.owner }
  }
}

resource "kubernetes_role_binding_v1" "rb" {
  count = 1
  metadata {
    name      = "rb"
    namespace = kubernetes_namespace_v1.ns.metadata[0].name
  }
  subject {
    kind      = "ServiceAccount"
    name      = "robot"
    namespace = kubernetes_namespace_v1.ns.metadata[0].name
  }
}

resource "kubernetes_config_map_v1" "shards" {
  count = 2
  metadata { name = "shard-${count.index}" }
}

resource "kubernetes_manifest" "sa" {
  manifest = {
    apiVersion = "v1"
    kind       = "ServiceAccount"
    metadata = {
      name      = "robot"
      namespace = "demo"
      labels    = { "app.kubernetes.io/name" = "robot" }
    }
  }
}
`

func obj(addr, typ, group, kind, ns, name string, labels map[string]string) (Object, *unstructured.Unstructured) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetLabels(labels)
	return Object{Address: addr, Type: typ, Ref: estate.Object{Group: group, Version: "v1", Kind: kind, Namespace: ns, Name: name}}, u
}

func input(t *testing.T) Input {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(rootTF), 0o644); err != nil {
		t.Fatal(err)
	}
	in := Input{Dir: dir, Live: map[string]*unstructured.Unstructured{}}
	for _, x := range []struct {
		addr, typ, group, kind, ns, name string
		labels                           map[string]string
	}{
		{"kubernetes_namespace_v1.ns", "kubernetes_namespace_v1", "", "Namespace", "", "demo", map[string]string{"team": "a"}},
		{"kubernetes_role_v1.role", "kubernetes_role_v1", "rbac.authorization.k8s.io", "Role", "demo", "reader", map[string]string{"test": "MyRole", "owner": "x"}},
		{"kubernetes_manifest.sa", "kubernetes_manifest", "", "ServiceAccount", "demo", "robot", map[string]string{"app.kubernetes.io/name": "robot"}},
	} {
		o, u := obj(x.addr, x.typ, x.group, x.kind, x.ns, x.name, x.labels)
		in.Objects = append(in.Objects, o)
		in.Live[o.Address] = u
	}
	return in
}

func TestDerive(t *testing.T) {
	p, err := Derive(input(t))
	if err != nil {
		t.Fatal(err)
	}
	// Drift: the most stable kind with a literal label first (the
	// ServiceAccount), the Role's literal label for the BREAK; owner is
	// set from a variable and never chosen.
	d := p.Drift
	if d == nil || d.Address != "kubernetes_manifest.sa" || d.Field != `metadata.labels["app.kubernetes.io/name"]` || d.Want != "robot" ||
		!strings.Contains(d.Patch, `"path":"/metadata/labels/app.kubernetes.io~1name"`) || d.Break.Object.Kind != "Role" || !strings.Contains(d.Break.Patch, "/metadata/labels/test") {
		t.Errorf("drift %+v (%s)", d, p.Why["drift_reconverge"])
	}
	// Rename: the most referenced resource.
	if rn := p.Rename; rn == nil || rn.From != "kubernetes_namespace_v1.ns" || rn.To != "kubernetes_namespace_v1.ns_renamed" || !strings.Contains(p.Why["day2_rename"], "its 3 reference(s)") {
		t.Errorf("rename %+v", rn)
	}
	// Remove: a leaf that is not a Namespace, neighbour of a stable kind.
	if rm := p.Remove; rm == nil || rm.Address != "kubernetes_manifest.sa" || rm.Neighbour.Kind != "Role" {
		t.Errorf("remove %+v (%s)", rm, p.Why["day2_remove"])
	}
	// Plan approval: neither renamed nor removed; the move on another object with labels.
	if pa := p.PlanApproval; pa == nil || pa.Address != "kubernetes_role_v1.role" || pa.Move.Object.Kind != "Namespace" {
		t.Errorf("plan approval %+v (%s)", pa, p.Why["plan_approval"])
	}
}

func TestDeriveNothing(t *testing.T) {
	in := input(t)
	in.Live["kubernetes_namespace_v1.ns"].SetLabels(map[string]string{"team": "b"})
	in.Live["kubernetes_manifest.sa"].SetLabels(map[string]string{"app.kubernetes.io/name": "changed"})
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Drift != nil || !strings.Contains(p.Why["drift_reconverge"], "no drift derived") {
		t.Errorf("drift with one candidate: %+v %q", p.Drift, p.Why["drift_reconverge"])
	}
}

// TestDeriveSkipsVersionReferenced: an object whose resource version
// another object copies (here the ServiceAccount's, in the Role's
// annotation) is never a victim - its tamper and undo would move what the
// configuration reads - so the drift falls to the next candidates.
func TestDeriveSkipsVersionReferenced(t *testing.T) {
	in := input(t)
	in.Live["kubernetes_manifest.sa"].SetResourceVersion("518")
	in.Live["kubernetes_role_v1.role"].SetAnnotations(map[string]string{"robot_version": "518"})
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Drift; d == nil || d.Address == "kubernetes_manifest.sa" || d.Break.Object.Kind == "ServiceAccount" {
		t.Errorf("drift chose the copied object: %+v (%s)", d, p.Why["drift_reconverge"])
	}
	if rm := p.Remove; rm != nil && (rm.Address == "kubernetes_manifest.sa" || rm.Neighbour.Kind == "ServiceAccount") {
		t.Errorf("remove chose the copied object: %+v", rm)
	}
}

// TestDriftOnAnnotationsAndData: with no literal label live, the drift
// takes an annotation or a ConfigMap's data entry the configuration sets
// literally (a root of ConfigMaps with data and no labels had no drift).
func TestDriftOnAnnotationsAndData(t *testing.T) {
	dir := t.TempDir()
	root := `resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "settings"
    namespace = "default"
  }
  data = { "log.level" = "info", body = "line one\nline two" }
}

resource "kubernetes_service_v1" "web" {
  metadata {
    name        = "web"
    namespace   = "default"
    annotations = { owner = "team-a" }
  }
  spec {
    port {
      port = 80
    }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	in := Input{Dir: dir, Live: map[string]*unstructured.Unstructured{}}
	cm, cu := obj("kubernetes_config_map_v1.settings", "kubernetes_config_map_v1", "", "ConfigMap", "default", "settings", nil)
	cu.Object["data"] = map[string]any{"log.level": "info", "body": "line one\nline two"}
	svc, su := obj("kubernetes_service_v1.web", "kubernetes_service_v1", "", "Service", "default", "web", nil)
	su.SetAnnotations(map[string]string{"owner": "team-a"})
	in.Objects = []Object{cm, svc}
	in.Live[cm.Address], in.Live[svc.Address] = cu, su
	p, err := Derive(in)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Drift
	if d == nil || d.Address != "kubernetes_config_map_v1.settings" || d.Field != `data["log.level"]` || d.Want != "info" ||
		!strings.Contains(d.Patch, `"path":"/data/log.level"`) || d.Break.Object.Kind != "Service" || !strings.Contains(d.Break.Patch, "/metadata/annotations/owner") {
		t.Errorf("drift %+v (%s)", d, p.Why["drift_reconverge"])
	}
}
