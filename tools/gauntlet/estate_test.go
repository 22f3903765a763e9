package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

func TestCorpusLayout(t *testing.T) {
	r, c, d, ok := corpusLayout("/work/shared/corpus/hashicorp/terraform-provider-kubernetes/3a33fb6cc6055853584af1731b1369164c35ffc7/_examples/kubernetes_manifest/vault")
	if !ok || r != "https://github.com/hashicorp/terraform-provider-kubernetes" || c != "3a33fb6cc6055853584af1731b1369164c35ffc7" || d != "_examples/kubernetes_manifest/vault" {
		t.Errorf("%q %q %q %v", r, c, d, ok)
	}
	if _, _, _, ok := corpusLayout("/home/me/roots/app"); ok {
		t.Error("a plain folder read as a corpus layout")
	}
}

func TestNames(t *testing.T) {
	all := []string{"a/x.tf", "b/x.tf", "b/y.tf", "main.tf"}
	if got := flatName("a/x.tf", all); got != "a.tf" {
		t.Errorf("flatName a/x.tf = %q", got)
	}
	if got := flatName("b/y.tf", all); got != "b_y.tf" {
		t.Errorf("flatName b/y.tf = %q", got)
	}
	if got := commonDir([]string{"ex/res/a/x.tf", "ex/res/b/y.tf"}); got != "ex/res" {
		t.Errorf("commonDir = %q", got)
	}
}

// estate new on a folder outside any corpus layout: the files pinned, the
// provider's config_path variable set to the kubeconfig, and the estate
// refusing to load until repository and commit are filled in.
func TestEstateNewOffline(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "app")
	if err := os.MkdirAll(filepath.Join(src, "modules", "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"main.tf":           "variable \"kube\" {}\nvariable \"name\" {}\nprovider \"kubernetes\" {\n  config_path = var.kube\n}\nresource \"kubernetes_config_map_v1\" \"c\" {\n  metadata {\n    name = var.name\n    labels = { app = \"x\" }\n  }\n}\nmodule \"m\" {\n  source = \"./modules/m\"\n}\n",
		"modules/m/main.tf": "resource \"kubernetes_secret_v1\" \"s\" {\n  metadata { name = \"s\" }\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	estates := filepath.Join(root, "estates")
	if code, _, stderr := gauntletCLI(t, "estate", "new", "--dir", src, "--estates", estates, "--cache", filepath.Join(root, "cache")); code != 0 {
		t.Fatalf("estate new: exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(estates, "corpus-app", "estate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"path: main.tf, sha256: ", "path: modules/m/main.tf, sha256: ", `kube: "${kubeconfig}"`, "repository: TODO"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("estate.yaml lacks %q:\n%s", want, raw)
		}
	}
	if _, err := estate.Load(estates, "corpus-app"); err == nil || !strings.Contains(err.Error(), "TODO") {
		t.Errorf("an estate with TODO pins loaded: %v", err)
	}
	fixed := strings.NewReplacer("repository: TODO", "repository: https://github.com/example/app", `commit: "TODO"`, `commit: "0123456789012345678901234567890123456789"`).Replace(string(raw))
	if err := os.WriteFile(filepath.Join(estates, "corpus-app", "estate.yaml"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := estate.Load(estates, "corpus-app"); err != nil {
		t.Errorf("the filled-in estate does not load: %v", err)
	}
}
