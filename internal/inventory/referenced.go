package inventory

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// VersionReferenced returns the objects of objs whose resourceVersion or
// uid another object of objs holds as a whole string value (an
// annotation that copies a Secret's resource_version to roll pods when it
// changes). Touching such an object out of band - even a label put back
// at once - moves a value the configuration reads, so the next plan
// updates its reader: it is no victim for a corruption whose undo must
// leave the configuration's view unchanged.
func VersionReferenced(objs []*unstructured.Unstructured) map[Ref]bool {
	values := map[string]Ref{}
	for _, u := range objs {
		for _, v := range []string{u.GetResourceVersion(), string(u.GetUID())} {
			if v != "" {
				values[v] = RefOf(u)
			}
		}
	}
	out := map[Ref]bool{}
	for _, u := range objs {
		self := RefOf(u)
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch t := v.(type) {
			case string:
				if ref, ok := values[t]; ok && ref != self {
					out[ref] = true
				}
			case map[string]any:
				for k, e := range t {
					if path == "metadata" && (k == "resourceVersion" || k == "uid" || k == "ownerReferences" || k == "managedFields") {
						continue
					}
					walk(k, e)
				}
			case []any:
				for _, e := range t {
					walk(path, e)
				}
			}
		}
		walk("", u.Object)
	}
	return out
}
