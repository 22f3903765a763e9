package identity

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

func TestTypeKindBothGenerations(t *testing.T) {
	for typ, want := range map[string]estate.Kind{
		"kubernetes_deployment":                   {Group: "apps", Version: "v1", Kind: "Deployment"},
		"kubernetes_deployment_v1":                {Group: "apps", Version: "v1", Kind: "Deployment"},
		"kubernetes_daemonset":                    {Group: "apps", Version: "v1", Kind: "DaemonSet"},
		"kubernetes_daemon_set_v1":                {Group: "apps", Version: "v1", Kind: "DaemonSet"},
		"kubernetes_horizontal_pod_autoscaler":    {Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"},
		"kubernetes_horizontal_pod_autoscaler_v1": {Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"},
		"kubernetes_horizontal_pod_autoscaler_v2": {Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
		"kubernetes_cron_job_v1":                  {Group: "batch", Version: "v1", Kind: "CronJob"},
		"kubernetes_pod_disruption_budget_v1":     {Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
		"kubernetes_priority_class_v1":            {Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
		"kubernetes_endpoint_slice_v1":            {Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
		"kubernetes_runtime_class_v1":             {Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"},
		"kubernetes_api_service":                  {Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
	} {
		got, role := TypeKind(typ)
		if role != Owns || got != want {
			t.Errorf("%s: %+v %v, want %+v Owns", typ, got, role, want)
		}
	}
	for typ, want := range map[string]Role{
		"kubernetes_labels": Patches, "kubernetes_annotations": Patches, "kubernetes_config_map_v1_data": Patches,
		"kubernetes_token_request_v1": NoObject, "kubernetes_manifest": Owns, "kubernetes_frobnicator_v1": Unknown,
	} {
		if _, role := TypeKind(typ); role != want {
			t.Errorf("%s: role %v, want %v", typ, role, want)
		}
	}
}

func TestOf(t *testing.T) {
	typedAttrs := map[string]any{"metadata": []any{map[string]any{"name": "web", "namespace": "apps"}}}
	o, ok, err := Of("kubernetes_deployment_v1.web", "kubernetes_deployment_v1", typedAttrs)
	if err != nil || !ok || o != (estate.Object{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "web"}) {
		t.Errorf("typed: %+v %v %v", o, ok, err)
	}
	manifest := map[string]any{"manifest": map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "tab"},
	}}
	o, ok, err = Of("kubernetes_manifest.cr", "kubernetes_manifest", manifest)
	if err != nil || !ok || o != (estate.Object{Group: "stable.example.com", Version: "v1", Kind: "CronTab", Name: "tab"}) {
		t.Errorf("manifest: %+v %v %v", o, ok, err)
	}
	if got := ImportID("kubernetes_manifest", Scope(o, true)); got != "apiVersion=stable.example.com/v1,kind=CronTab,namespace=default,name=tab" {
		t.Errorf("manifest import id %q", got)
	}
	if _, ok, err := Of("null_resource.x", "null_resource", nil); ok || err != nil {
		t.Errorf("null_resource: %v %v", ok, err)
	}
	if _, ok, err := Of("kubernetes_labels.l", "kubernetes_labels", nil); ok || err != nil {
		t.Errorf("kubernetes_labels owns nothing: %v %v", ok, err)
	}
	if _, _, err := Of("kubernetes_manifest.bad", "kubernetes_manifest", map[string]any{"manifest": map[string]any{"kind": "X"}}); err == nil {
		t.Error("a manifest without apiVersion and name resolved")
	}
	if _, _, err := Of("kubernetes_frob.x", "kubernetes_frob", typedAttrs); err == nil {
		t.Error("an unknown type resolved")
	}
}

func TestScope(t *testing.T) {
	o := estate.Object{Version: "v1", Kind: "ConfigMap", Name: "c"}
	if got := Scope(o, true); got.Namespace != "default" {
		t.Errorf("namespaced with no namespace: %q", got.Namespace)
	}
	o.Namespace = "x"
	if got := Scope(o, false); got.Namespace != "" {
		t.Errorf("cluster-scoped keeps namespace %q", got.Namespace)
	}
	if got := Scope(o, true); got.Namespace != "x" {
		t.Errorf("namespaced lost its namespace: %q", got.Namespace)
	}
}

func TestKinds(t *testing.T) {
	got := Kinds([]estate.Object{
		{Group: "apps", Version: "v1", Kind: "Deployment", Name: "a"},
		{Version: "v1", Kind: "Service", Name: "a"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Name: "b"},
	})
	if len(got) != 2 || got[0].Kind != "Service" || got[1].Kind != "Deployment" {
		t.Errorf("%+v", got)
	}
}
