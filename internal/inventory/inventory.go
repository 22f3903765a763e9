// Package inventory reads live Kubernetes objects and compares two sets of
// them exactly, field by field, after normalising both to what a Terraform
// configuration declares.
//
// Objects are read through the dynamic client with a RESTMapper built from
// the server's own discovery, so aggregated and custom groups the client-go
// scheme knows nothing about (apiregistration.k8s.io APIServices, CRDs)
// read like any other kind.
package inventory

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Ref names one object.
type Ref struct {
	// Group is the API group, "" for the core group.
	Group string
	// Version is the API version to read it at; "" means the server's
	// preferred version. Objects are matched across inventories without it.
	Version string
	// Kind is the object's kind, e.g. "Deployment".
	Kind string
	// Namespace is empty for cluster-scoped kinds.
	Namespace string
	// Name is the object's name.
	Name string
}

// RefOf returns the Ref of an object as read.
func RefOf(u *unstructured.Unstructured) Ref {
	gvk := u.GroupVersionKind()
	return Ref{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// GroupVersionKind returns the Ref's kind.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// String is "Kind namespace/name", or "Kind name" when cluster-scoped.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// key identifies an object across inventories: the version it was read
// at is left out because the same object served at two versions is still
// one object (a version difference shows up in apiVersion).
type key struct{ group, kind, namespace, name string }

func (r Ref) key() key { return key{r.Group, r.Kind, r.Namespace, r.Name} }

func compareKeys(a, b key) int {
	return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.group, b.group),
		cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
}

// Selection says what Read reads. Refs and Kinds may both be set; an
// object selected twice is read once.
type Selection struct {
	// Refs are objects named one by one. One that does not exist is
	// listed in Inventory.Missing, not returned as an error.
	Refs []Ref
	// Kinds are kinds whose objects are listed (Version "" means the
	// server's preferred version).
	Kinds []schema.GroupVersionKind
	// LabelSelector filters the objects of Kinds, e.g. "app=web". Empty
	// selects every object.
	LabelSelector string
	// Namespaces limits the namespaced Kinds to these namespaces. Empty
	// means every namespace. Cluster-scoped Kinds ignore it.
	Namespaces []string
}

// Inventory is a set of live objects as read, before normalisation.
type Inventory struct {
	// Objects are sorted by kind, group, namespace and name.
	Objects []*unstructured.Unstructured
	// Missing are the selected Refs that do not exist (including those of
	// a kind the server does not serve, and those being deleted), in the
	// order selected.
	Missing []Ref
	// Unserved are selected Kinds the server does not serve; they are
	// read as having no objects. A CRD not yet (or no longer) installed is
	// the usual reason, an aggregated API whose backend is down another.
	Unserved []schema.GroupVersionKind
}

// Counts returns how many objects of each kind the inventory holds.
func (inv Inventory) Counts() map[string]int {
	n := map[string]int{}
	for _, o := range inv.Objects {
		n[o.GetKind()]++
	}
	return n
}

// sortObjects orders objects by their key, which makes inventories, and so
// reports, deterministic whatever order the server listed them in.
func sortObjects(objs []*unstructured.Unstructured) {
	slices.SortFunc(objs, func(a, b *unstructured.Unstructured) int {
		return compareKeys(RefOf(a).key(), RefOf(b).key())
	})
}
