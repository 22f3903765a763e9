// Package identity says which live Kubernetes object a kubernetes provider
// resource manages: its group, version and kind from the resource type
// (both name generations, kubernetes_deployment and
// kubernetes_deployment_v1) or, for kubernetes_manifest, from the manifest
// itself; its namespace and name from the resource's attributes. Whether a
// kind is namespaced is the API server's to say (Scope), so custom
// resources of CRDs an estate installs resolve like any other object.
package identity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// Role is what a provider resource type does to the cluster.
type Role int

const (
	// Unknown types are not in the table: callers fail rather than guess.
	Unknown Role = iota
	// Owns: the resource creates, updates and deletes one object.
	Owns
	// Patches: the resource edits an object it does not own (labels,
	// annotations, data of an existing ConfigMap, a node taint, ...).
	Patches
	// NoObject: the resource keeps nothing on the cluster (a token request).
	NoObject
)

const (
	rbac  = "rbac.authorization.k8s.io"
	admit = "admissionregistration.k8s.io"
)

// typed maps the typed resource types, without a version suffix, to the
// kind they manage; versioned lists the suffixed names whose API version
// differs from the base name's.
var typed = map[string]estate.Kind{
	"kubernetes_api_service":                      {Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
	"kubernetes_certificate_signing_request":      {Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"},
	"kubernetes_cluster_role":                     {Group: rbac, Version: "v1", Kind: "ClusterRole"},
	"kubernetes_cluster_role_binding":             {Group: rbac, Version: "v1", Kind: "ClusterRoleBinding"},
	"kubernetes_config_map":                       {Version: "v1", Kind: "ConfigMap"},
	"kubernetes_cron_job":                         {Group: "batch", Version: "v1", Kind: "CronJob"},
	"kubernetes_csi_driver":                       {Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver"},
	"kubernetes_daemonset":                        {Group: "apps", Version: "v1", Kind: "DaemonSet"},
	"kubernetes_daemon_set":                       {Group: "apps", Version: "v1", Kind: "DaemonSet"},
	"kubernetes_default_service_account":          {Version: "v1", Kind: "ServiceAccount"},
	"kubernetes_deployment":                       {Group: "apps", Version: "v1", Kind: "Deployment"},
	"kubernetes_endpoints":                        {Version: "v1", Kind: "Endpoints"},
	"kubernetes_endpoint_slice":                   {Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
	"kubernetes_horizontal_pod_autoscaler":        {Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"},
	"kubernetes_ingress":                          {Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	"kubernetes_ingress_class":                    {Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"},
	"kubernetes_job":                              {Group: "batch", Version: "v1", Kind: "Job"},
	"kubernetes_limit_range":                      {Version: "v1", Kind: "LimitRange"},
	"kubernetes_mutating_webhook_configuration":   {Group: admit, Version: "v1", Kind: "MutatingWebhookConfiguration"},
	"kubernetes_namespace":                        {Version: "v1", Kind: "Namespace"},
	"kubernetes_network_policy":                   {Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	"kubernetes_persistent_volume":                {Version: "v1", Kind: "PersistentVolume"},
	"kubernetes_persistent_volume_claim":          {Version: "v1", Kind: "PersistentVolumeClaim"},
	"kubernetes_pod":                              {Version: "v1", Kind: "Pod"},
	"kubernetes_pod_disruption_budget":            {Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	"kubernetes_priority_class":                   {Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
	"kubernetes_replication_controller":           {Version: "v1", Kind: "ReplicationController"},
	"kubernetes_resource_quota":                   {Version: "v1", Kind: "ResourceQuota"},
	"kubernetes_role":                             {Group: rbac, Version: "v1", Kind: "Role"},
	"kubernetes_role_binding":                     {Group: rbac, Version: "v1", Kind: "RoleBinding"},
	"kubernetes_runtime_class":                    {Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"},
	"kubernetes_secret":                           {Version: "v1", Kind: "Secret"},
	"kubernetes_service":                          {Version: "v1", Kind: "Service"},
	"kubernetes_service_account":                  {Version: "v1", Kind: "ServiceAccount"},
	"kubernetes_stateful_set":                     {Group: "apps", Version: "v1", Kind: "StatefulSet"},
	"kubernetes_storage_class":                    {Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"},
	"kubernetes_validating_webhook_configuration": {Group: admit, Version: "v1", Kind: "ValidatingWebhookConfiguration"},
	"kubernetes_validating_admission_policy":      {Group: admit, Version: "v1", Kind: "ValidatingAdmissionPolicy"},
}

// versioned are suffixed types whose API version is not the base type's.
var versioned = map[string]string{
	"kubernetes_horizontal_pod_autoscaler_v2":      "v2",
	"kubernetes_horizontal_pod_autoscaler_v2beta2": "v2",
}

// patches act on objects they do not own; noObject keep nothing.
var (
	patches  = []string{"kubernetes_annotations", "kubernetes_labels", "kubernetes_config_map_v1_data", "kubernetes_secret_v1_data", "kubernetes_env", "kubernetes_node_taint"}
	noObject = []string{"kubernetes_token_request_v1"}
)

// Manifest is the provider's untyped resource: its kind is in the manifest.
const Manifest = "kubernetes_manifest"

// TypeKind resolves a typed resource type to the kind it manages and says
// what the type does. kubernetes_manifest is Owns with an empty kind: the
// kind comes from each resource's manifest (see Of).
func TypeKind(typ string) (estate.Kind, Role) {
	switch {
	case typ == Manifest:
		return estate.Kind{}, Owns
	case contains(patches, typ):
		return estate.Kind{}, Patches
	case contains(noObject, typ):
		return estate.Kind{}, NoObject
	}
	base := typ
	for _, suf := range []string{"_v2beta2", "_v1", "_v2"} {
		if strings.HasSuffix(base, suf) {
			base = strings.TrimSuffix(base, suf)
			break
		}
	}
	k, ok := typed[base]
	if !ok {
		return estate.Kind{}, Unknown
	}
	if v, ok := versioned[typ]; ok {
		k.Version = v
	}
	return k, Owns
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Of returns the object a managed resource owns, from its type and its
// attribute values (state or planned values). ok is false for types that
// own no object (kubernetes_labels, random_..., null_resource). The
// namespace is as the attributes say; Scope settles it with discovery.
func Of(address, typ string, attrs map[string]any) (obj estate.Object, ok bool, err error) {
	if !strings.HasPrefix(typ, "kubernetes_") {
		return obj, false, nil
	}
	k, role := TypeKind(typ)
	switch role {
	case Unknown:
		return obj, false, fmt.Errorf("%s: resource type %s is not mapped to a kind yet", address, typ)
	case Patches, NoObject:
		return obj, false, nil
	}
	if typ == Manifest {
		return ofManifest(address, attrs)
	}
	ns, name := metadataOf(attrs)
	if name == "" {
		return obj, false, fmt.Errorf("%s: no metadata name", address)
	}
	return estate.Object{Group: k.Group, Version: k.Version, Kind: k.Kind, Namespace: ns, Name: name}, true, nil
}

// ofManifest reads apiVersion, kind, metadata.namespace and metadata.name
// from a kubernetes_manifest's manifest attribute.
func ofManifest(address string, attrs map[string]any) (estate.Object, bool, error) {
	m, _ := attrs["manifest"].(map[string]any)
	if m == nil {
		return estate.Object{}, false, fmt.Errorf("%s: no manifest attribute", address)
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return estate.Object{}, false, fmt.Errorf("%s: manifest has apiVersion %q, kind %q, metadata.name %q: all three are needed", address, apiVersion, kind, name)
	}
	group, version := SplitAPIVersion(apiVersion)
	return estate.Object{Group: group, Version: version, Kind: kind, Namespace: ns, Name: name}, true, nil
}

// SplitAPIVersion splits "apps/v1" into "apps", "v1" and "v1" into "", "v1".
func SplitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// APIVersion joins a group and a version as a manifest writes them.
func APIVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
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

// Scope settles an object's namespace once discovery says whether its
// kind is namespaced: a namespaced object with no namespace is in
// "default" (as the provider and kubectl place it); a cluster-scoped one
// has none.
func Scope(o estate.Object, namespaced bool) estate.Object {
	switch {
	case namespaced && o.Namespace == "":
		o.Namespace = "default"
	case !namespaced:
		o.Namespace = ""
	}
	return o
}

// ImportID is the ID the provider imports an object of type typ by:
// namespace/name (name alone when cluster-scoped) for typed resources,
// "apiVersion=...,kind=...,namespace=...,name=..." for kubernetes_manifest.
func ImportID(typ string, o estate.Object) string {
	if typ == Manifest {
		parts := []string{"apiVersion=" + APIVersion(o.Group, o.Version), "kind=" + o.Kind}
		if o.Namespace != "" {
			parts = append(parts, "namespace="+o.Namespace)
		}
		return strings.Join(append(parts, "name="+o.Name), ",")
	}
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Kinds lists the distinct kinds of objs, sorted by group then kind.
func Kinds(objs []estate.Object) []estate.Kind {
	seen := map[estate.Kind]bool{}
	var out []estate.Kind
	for _, o := range objs {
		k := estate.Kind{Group: o.Group, Version: o.Version, Kind: o.Kind}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
