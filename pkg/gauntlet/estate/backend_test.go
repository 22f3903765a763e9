package estate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordsAndRemoteReads(t *testing.T) {
	dir := t.TempDir()
	const main = `terraform {
  backend "kubernetes" {
    secret_suffix = "app"
    namespace     = "state-app"
  }
}

data "terraform_remote_state" "network" {
  backend = "kubernetes"
  config = {
    secret_suffix = "network"
    namespace     = "state-network"
  }
}

data "terraform_remote_state" "elsewhere" {
  backend = "local"
  config  = { path = "x.tfstate" }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Root{Name: "app", Dir: dir}
	rec, err := r.Records()
	if err != nil || rec == nil || *rec != (Records{Namespace: "state-app", Suffix: "app"}) {
		t.Fatalf("Records() = %v, %v; want state-app/app", rec, err)
	}
	reads, err := r.RemoteReads()
	if err != nil || len(reads) != 1 || reads[0].Name != "network" || reads[0].Records != (Records{Namespace: "state-network", Suffix: "network"}) {
		t.Fatalf("RemoteReads() = %+v, %v; want only network's kubernetes read", reads, err)
	}
	if err := r.WriteLocalOverride(map[string]string{"network": "/work/network/terraform.tfstate"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, localOverride))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`backend "local" {}`, `data "terraform_remote_state" "network"`, `path = "/work/network/terraform.tfstate"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("override lacks %q:\n%s", want, b)
		}
	}
	// The override is gauntlet's own file: it never reads as the root's backend.
	if rec, err := r.Records(); err != nil || rec == nil {
		t.Errorf("Records() with the override in place = %v, %v", rec, err)
	}
	if err := r.RemoveLocalOverride(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, localOverride)); !os.IsNotExist(err) {
		t.Errorf("override still there: %v", err)
	}
}

func TestRecordsLocalState(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "kubernetes_namespace_v1" "a" {}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if rec, err := (&Root{Name: "root", Dir: dir}).Records(); err != nil || rec != nil {
		t.Fatalf("a root with no backend: Records() = %v, %v; want nil", rec, err)
	}
}
