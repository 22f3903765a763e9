package inventory

import (
	"github.com/gauntlet-k8s/gauntlet/internal/secret"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Normalize returns a copy of u reduced to what a configuration declares:
// what the server or a controller writes dropped (serverWritten), ignored labels and annotations
// dropped (empty maps with them), and every rule in force applied; a
// Secret's data, stringData and binaryData values become their digests
// (secret.Object). u is not changed.
//
// A terminating object keeps metadata.deletionTimestamp, with its value
// replaced by "set": the time differs between clusters, but an object
// stuck terminating on one side only is a real difference.
//
// It panics if a rule's path is malformed, as regexp.MustCompile does: a
// rule is code, and one that can never match must not pass silently.
func Normalize(u *unstructured.Unstructured, opts ...Option) *unstructured.Unstructured {
	return newOptions(opts).normalize(u, nil)
}

// normalize is Normalize with gen, one side's provider-generated values
// (Generated), replaced by their names before a Secret's values become
// digests: a digest of a value holding a password would differ between
// sides by construction.
func (o *options) normalize(u *unstructured.Unstructured, gen map[string]string) *unstructured.Unstructured {
	u = u.DeepCopy()
	kind := u.GetKind()
	for _, w := range serverWritten() {
		w.drop(u.Object, kind, o.sameCluster)
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		if _, ok := md["deletionTimestamp"]; ok {
			md["deletionTimestamp"] = "set"
		}
		o.trimMap(md, "labels", o.ignoredLabels)
		o.trimMap(md, "annotations", o.ignoredAnnots)
	}
	for _, r := range o.parsed {
		if r.kind == "" || r.kind == kind {
			r.apply(u.Object)
		}
	}
	substituteGenerated(u.Object, kind, gen)
	// Last, after every rule: a Secret's values are compared, and shown,
	// by digest only, so no difference report ever prints one.
	secret.Object(u.Object)
	return u
}

// trimMap drops ignored keys from md[field], and the field itself when
// that leaves it empty: a configuration that declares no labels and one
// whose only labels were ignored declare the same thing.
func (o *options) trimMap(md map[string]any, field string, ignored map[string]bool) {
	if o.dropMetaMaps {
		delete(md, field)
		return
	}
	m, ok := md[field].(map[string]any)
	if !ok {
		return
	}
	for k := range m {
		if ignored[k] {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		delete(md, field)
	}
}
