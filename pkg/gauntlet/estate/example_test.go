package estate_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// An estate is a folder with an estate.yaml; a root of your own keeps its
// .tf files beside it.
func ExampleLoad() {
	root, _ := os.MkdirTemp("", "estates")
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "my-root")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "kubernetes_namespace_v1" "n" {
  metadata { name = "mine" }
}
`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "estate.yaml"), []byte("apiVersion: gauntlet/v1\nname: my-root\ntitle: My root\nfiles: [main.tf]\n"), 0o644)
	spec, err := estate.Load(root, "my-root")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spec.Name, spec.Files)
	// Output:
	// my-root [main.tf]
}
