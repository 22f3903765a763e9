package derive

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Any root text - malformed HCL, odd counts, manifests of any shape - is
// derived from or refused with an error, never a panic: a new user's
// root reaches Derive and Preview before any cluster starts.
func FuzzDerive(f *testing.F) {
	f.Add(rootTF)
	f.Add(`resource "kubernetes_config_map_v1" "c" {
  for_each = toset(["a", "b"])
  metadata {
    name   = each.key
    labels = { app = "x" }
  }
  data = { k = "v" }
}
module "m" { source = "./m" }
`)
	f.Add(`resource "kubernetes_manifest" "m" { manifest = { kind = "ConfigMap", metadata = { labels = {} }, data = 1 } }`)
	f.Fuzz(func(t *testing.T, root string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(root), 0o644); err != nil {
			t.Fatal(err)
		}
		in := Input{Dir: dir, Live: map[string]*unstructured.Unstructured{}}
		for _, x := range []struct{ addr, kind, name string }{
			{"kubernetes_config_map_v1.c[\"a\"]", "ConfigMap", "a"},
			{"kubernetes_manifest.m", "ConfigMap", "m"},
			{"module.m.kubernetes_config_map_v1.x", "ConfigMap", "x"},
		} {
			o, u := obj(x.addr, "t", "", x.kind, "default", x.name, map[string]string{"app": "x"})
			in.Objects = append(in.Objects, o)
			in.Live[o.Address] = u
		}
		_, _ = Derive(in)
		_, _, _ = Preview(dir)
	})
}
