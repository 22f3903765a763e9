package stage

import (
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// Stage additions: small resources gauntlet writes beside the estate's own
// files, in the namespace the estate uses, for the stages whose shape the
// estate itself does not have (a count, a create_before_destroy replace, a
// dependent pair to crash between). Each lives in its own file and is
// destroyed with the rest.

func countFile(r *Run, n int) string { return countedConfigMaps(r, "change-count", "shard", n) }

// contractFile is the contract stage's ConfigMaps: independent, so an
// engine may create them all at once unless told -parallelism=1.
func contractFile(r *Run) string {
	return countedConfigMaps(r, "exit-code and parallelism", "contract", contractCount)
}

// countedConfigMaps is n ConfigMaps of one counted resource, named
// <prefix>-<name>-<index> in the estate's namespace.
func countedConfigMaps(r *Run, stage, name string, n int) string {
	return fmt.Sprintf(`# Written by gauntlet's %s stage.
resource "kubernetes_config_map_v1" %q {
  count = %d
  metadata {
    name      = "%s-%s-${count.index}"
    namespace = %q
  }
  data = {
    %s = tostring(count.index)
  }
}
`, stage, name, n, r.Spec.Prefix, name, r.Spec.Namespace, name)
}

func contractObject(r *Run, i int) Object { return countedObject(r, "contract", i) }

func shardObject(r *Run, i int) Object { return countedObject(r, "shard", i) }

// countedObject is instance i of countedConfigMaps(r, _, name, _).
func countedObject(r *Run, name string, i int) Object {
	return Object{Address: fmt.Sprintf("kubernetes_config_map_v1.%s[%d]", name, i), Type: "kubernetes_config_map_v1",
		Ref: estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: r.Spec.Namespace, Name: fmt.Sprintf("%s-%s-%d", r.Spec.Prefix, name, i)}}
}

// replaceFile names its ConfigMap after a hash of its content, so a content
// change is a name change, which the provider can only make by replacing.
func replaceFile(r *Run, content string) string {
	return hashedFile(r, "create_before_destroy", "hashed", "cfg", content, true)
}

// hashedFile is one ConfigMap named <prefix>-<part>-<8 hex of sha256 of
// content> (a content change is a replace), with or without
// create_before_destroy.
func hashedFile(r *Run, stage, resource, part, content string, cbd bool) string {
	lifecycle := ""
	if cbd {
		lifecycle = "\n  lifecycle {\n    create_before_destroy = true\n  }"
	}
	return fmt.Sprintf(`# Written by gauntlet's %[1]s stage.
locals {
  gauntlet_%[2]s_content = %[3]q
}

resource "kubernetes_config_map_v1" %[2]q {
  metadata {
    name      = "%[4]s-%[5]s-${substr(sha256(local.gauntlet_%[2]s_content), 0, 8)}"
    namespace = %[6]q
  }
  data = {
    content = local.gauntlet_%[2]s_content
  }%[7]s
}
`, stage, resource, content, r.Spec.Prefix, part, r.Spec.Namespace, lifecycle)
}

// crashFile is a Secret and a ConfigMap reading the Secret's name, so at
// -parallelism=1 the second create cannot start before the first commits.
func crashFile(r *Run) string {
	return fmt.Sprintf(`# Written by gauntlet's crash stage.
resource "kubernetes_secret_v1" "crash_first" {
  metadata {
    name      = "%[1]s-crash-first"
    namespace = %[2]q
  }
  data = {
    # A value no page carries otherwise: the run redacts every Secret value
    # it learns wherever it appears, and "gauntlet" is on every line.
    token = "crash-stage-token-not-a-word"
  }
}

resource "kubernetes_config_map_v1" "crash_second" {
  metadata {
    name      = "%[1]s-crash-second"
    namespace = %[2]q
  }
  data = {
    first = kubernetes_secret_v1.crash_first.metadata[0].name
  }
}
`, r.Spec.Prefix, r.Spec.Namespace)
}

func crashObjects(r *Run) (first, second Object) {
	ns := r.Spec.Namespace
	first = Object{Address: "kubernetes_secret_v1.crash_first", Type: "kubernetes_secret_v1",
		Ref: estate.Object{Version: "v1", Kind: "Secret", Namespace: ns, Name: r.Spec.Prefix + "-crash-first"}}
	second = Object{Address: "kubernetes_config_map_v1.crash_second", Type: "kubernetes_config_map_v1",
		Ref: estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: r.Spec.Prefix + "-crash-second"}}
	return first, second
}
