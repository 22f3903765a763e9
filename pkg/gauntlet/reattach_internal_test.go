package gauntlet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// The kubernetes provider stays per call exactly where a root, or a
// module under it, declares a kubernetes_manifest resource or a
// kubernetes_resource(s) data source: a mention in a comment, a string
// or another block's name is not one.
func TestDeclaresManifestFindsOnlyTheResource(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		text string
		want bool
	}{
		{"a typed root", "main.tf", "resource \"kubernetes_config_map_v1\" \"c\" {}\n# kubernetes_manifest is not used here\n", false},
		{"a string naming it", "main.tf", "locals {\n  kind = \"kubernetes_manifest\"\n}\n", false},
		{"a module declaring one", "modules/crd/main.tf", "resource \"kubernetes_config_map_v1\" \"c\" {}\n\n  resource \"kubernetes_manifest\" \"crd\" {\n  manifest = {}\n}\n", true},
		{"a kubernetes_resource data source (corpus-rbac-example)", "modules/rbac/main.tf", "data \"kubernetes_resource\" \"role\" {\n  api_version = \"rbac.authorization.k8s.io/v1\"\n}\n", true},
		{"a kubernetes_resources data source", "main.tf", "data \"kubernetes_resources\" \"all\" {}\n", true},
		{"a typed data source", "main.tf", "data \"kubernetes_namespace_v1\" \"n\" {}\n", false},
		{"not a .tf file", "notes.md", "resource \"kubernetes_manifest\" \"x\" {}\n", false},
	} {
		got, err := declaresManifest(oneFile(t, tc.file, tc.text))
		if err != nil || got != tc.want {
			t.Errorf("%s: declaresManifest = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// The decision itself: any kubernetes_manifest keeps the kubernetes
// provider per call, and the reason says why; typed resources, an
// APIService among them, do not.
func TestReattachKeepsKubernetesPerCallBesideAManifest(t *testing.T) {
	manifest := "resource \"kubernetes_manifest\" \"c\" {\n  manifest = { kind = \"ConfigMap\" }\n}\n"
	for _, tc := range []struct {
		name, text string
		perCall    bool
	}{
		{"a ConfigMap manifest", manifest, true},
		{"typed resources and an APIService", "resource \"kubernetes_api_service\" \"m\" {}\n", false},
	} {
		why, err := reattachProviders([]*stage.Side{{Root: &estate.Root{Dir: oneFile(t, "main.tf", tc.text)}}}, &teardown{})
		if err != nil {
			t.Fatal(err)
		}
		if perCall := strings.Contains(why, "kubernetes provider started with each call"); perCall != tc.perCall {
			t.Errorf("%s: reason %q; want the kubernetes provider per call: %v", tc.name, why, tc.perCall)
		}
	}
	// A module beside the root, outside its folder but inside the tree
	// it landed in (corpus-rbac-example: examples/rbac calling
	// ../../modules/rbac).
	base := oneFile(t, "modules/rbac/main.tf", "data \"kubernetes_resource\" \"role\" {}\n")
	dir := filepath.Join(base, "examples", "rbac")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	why, err := reattachProviders([]*stage.Side{{Root: &estate.Root{Dir: dir, Base: base}}}, &teardown{})
	if err != nil || !strings.Contains(why, "kubernetes provider started with each call") {
		t.Errorf("a module outside the root's folder: reason %q, %v; want the kubernetes provider per call", why, err)
	}
}

// oneFile is a fresh folder holding text at the slash path file.
func oneFile(t *testing.T, file, text string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
