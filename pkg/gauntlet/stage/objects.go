package stage

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	tfjson "github.com/hashicorp/terraform-json"
)

// Object is one live object an estate manages, known by its address.
type Object struct {
	Address string
	// Type is the provider resource type, e.g. "kubernetes_deployment".
	Type string
	Ref  estate.Object
}

// kinds maps the kubernetes provider's resource types (with and without
// the _v1/_v2 suffix) to the objects they manage.
var kinds = map[string]estate.Kind{
	"kubernetes_config_map":                {Version: "v1", Kind: "ConfigMap"},
	"kubernetes_secret":                    {Version: "v1", Kind: "Secret"},
	"kubernetes_service_account":           {Version: "v1", Kind: "ServiceAccount"},
	"kubernetes_service":                   {Version: "v1", Kind: "Service"},
	"kubernetes_namespace":                 {Version: "v1", Kind: "Namespace"},
	"kubernetes_deployment":                {Group: "apps", Version: "v1", Kind: "Deployment"},
	"kubernetes_daemonset":                 {Group: "apps", Version: "v1", Kind: "DaemonSet"},
	"kubernetes_stateful_set":              {Group: "apps", Version: "v1", Kind: "StatefulSet"},
	"kubernetes_cluster_role":              {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	"kubernetes_cluster_role_binding":      {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	"kubernetes_role":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	"kubernetes_role_binding":              {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	"kubernetes_api_service":               {Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
	"kubernetes_network_policy":            {Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	"kubernetes_horizontal_pod_autoscaler": {Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
}

// kindOf resolves a resource type, dropping a _v1/_v2 suffix.
func kindOf(typ string) (estate.Kind, bool) {
	base := typ
	for _, suf := range []string{"_v1", "_v2"} {
		base = strings.TrimSuffix(base, suf)
	}
	k, ok := kinds[base]
	return k, ok
}

// objectsFromState lists the managed kubernetes objects in a state, by
// address. Resources of other providers (random_...) are not objects.
func objectsFromState(st *tfjson.State) ([]Object, error) {
	if st == nil || st.Values == nil {
		return nil, nil
	}
	var out []Object
	var walk func(m *tfjson.StateModule) error
	walk = func(m *tfjson.StateModule) error {
		for _, res := range m.Resources {
			if res.Mode != tfjson.ManagedResourceMode || !strings.HasPrefix(res.Type, "kubernetes_") {
				continue
			}
			k, ok := kindOf(res.Type)
			if !ok {
				return fmt.Errorf("%s: resource type %s is not mapped to a kind yet", res.Address, res.Type)
			}
			ns, name := metadataOf(res.AttributeValues)
			if name == "" {
				return fmt.Errorf("%s: no metadata name in state", res.Address)
			}
			out = append(out, Object{Address: res.Address, Type: res.Type, Ref: estate.Object{
				Group: k.Group, Version: k.Version, Kind: k.Kind, Namespace: ns, Name: name,
			}})
		}
		for _, c := range m.ChildModules {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(st.Values.RootModule); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out, nil
}

func metadataOf(attrs map[string]any) (namespace, name string) {
	md, _ := attrs["metadata"].([]any)
	if len(md) == 0 {
		return "", ""
	}
	m, _ := md[0].(map[string]any)
	ns, _ := m["namespace"].(string)
	n, _ := m["name"].(string)
	return ns, n
}

// importID is the kubernetes provider's import ID: namespace/name for
// namespaced objects, name otherwise.
func importID(o Object) string {
	if o.Ref.Namespace == "" {
		return o.Ref.Name
	}
	return o.Ref.Namespace + "/" + o.Ref.Name
}

// describe lists objects for a detail sentence: "two ClusterRoles, ... and
// the APIService v1beta1.metrics.k8s.io".
func describe(objs []Object) string {
	count := map[string]int{}
	var order []string
	for _, o := range objs {
		if count[o.Ref.Kind] == 0 {
			order = append(order, o.Ref.Kind)
		}
		count[o.Ref.Kind]++
	}
	words := []string{"", "a", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	var parts []string
	for _, k := range order {
		n := count[k]
		w := fmt.Sprint(n)
		if n < len(words) {
			w = words[n]
		}
		name := k
		if n > 1 {
			name += "s"
		} else if k == "APIService" {
			for _, o := range objs {
				if o.Ref.Kind == k {
					w, name = "the", "APIService "+o.Ref.Name
				}
			}
		}
		if w == "a" && strings.ContainsAny(k[:1], "AEIOU") {
			w = "an"
		}
		parts = append(parts, w+" "+name)
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}
