package derive

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The preview takes a block whose count is 0, or whose for_each is empty,
// with the variables' defaults as making no object: it is neither counted
// nor chosen (as the removal's neighbour, say).
func TestPreviewLeavesOutBlocksThatMakeNothing(t *testing.T) {
	dir := t.TempDir()
	main := `resource "kubernetes_config_map_v1" "kept" {
  metadata {
    name   = "kept"
    labels = { app = "a" }
  }
}
resource "kubernetes_secret_v1" "leaf" {
  metadata {
    name   = "leaf"
    labels = { app = "a" }
  }
}
resource "kubernetes_config_map_v1" "off" {
  count = var.enabled ? 1 : 0
  metadata {
    name   = "off"
    labels = { app = "a" }
  }
}
resource "kubernetes_config_map_v1" "none" {
  for_each = var.extra
  metadata {
    name = each.key
  }
}
resource "kubernetes_config_map_v1" "on" {
  count = var.replicas
  metadata {
    name = "on"
  }
}
`
	// The variables live in a file read after main.tf.
	vars := `variable "enabled" {
  default = false
}
variable "extra" {
  default = {}
}
variable "replicas" {
  default = 2
}
`
	for name, body := range map[string]string{"main.tf": main, "variables.tf": vars} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, objs, err := Preview(dir)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, o := range objs {
		addrs = append(addrs, o.Address)
	}
	// var.replicas defaults to 2: the preview lists the two instances a
	// run's state would hold.
	if want := []string{"kubernetes_config_map_v1.kept", "kubernetes_secret_v1.leaf", "kubernetes_config_map_v1.on[0]", "kubernetes_config_map_v1.on[1]"}; !slices.Equal(addrs, want) {
		t.Errorf("preview objects %v, want %v", addrs, want)
	}
	if p.Remove != nil && (p.Remove.Neighbour.Name == "off" || p.Remove.Neighbour.Name == "none") {
		t.Errorf("the removal's neighbour is an object the configuration does not make: %+v", p.Remove.Neighbour)
	}
}

// A module call whose count is 0 makes none of its module's objects; a
// literal count or for_each makes one per instance.
func TestPreviewModulesAndInstances(t *testing.T) {
	dir := tree(t, map[string]string{
		"main.tf": `module "off" {
  source = "./modules/m"
  count  = 0
}
module "on" {
  source = "./modules/m"
}
resource "kubernetes_config_map_v1" "c" {
  count = 2
  metadata {
    name = "c"
  }
}
`,
		"modules/m/main.tf": `resource "kubernetes_secret_v1" "s" {
  for_each = toset(["a", "b"])
  metadata {
    name = each.key
  }
}
`})
	_, objs, err := Preview(dir)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, o := range objs {
		addrs = append(addrs, o.Address)
	}
	want := []string{"kubernetes_config_map_v1.c[0]", "kubernetes_config_map_v1.c[1]", `module.on.kubernetes_secret_v1.s["a"]`, `module.on.kubernetes_secret_v1.s["b"]`}
	if !slices.Equal(addrs, want) {
		t.Errorf("preview objects %v, want %v", addrs, want)
	}
}
