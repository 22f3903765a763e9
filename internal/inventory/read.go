package inventory

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// pageSize bounds one List response; kube-system of a real cluster can
// hold thousands of objects of a kind.
const pageSize = 500

// Read reads the selected objects from the cluster cfg points at. Every
// request is bounded by ctx. An object being deleted (a deletionTimestamp
// set, its finalizers still at work) is read as absent: it is on its way
// out, and every question an inventory answers is "is it there?".
func Read(ctx context.Context, cfg *rest.Config, sel Selection) (Inventory, error) {
	r, err := newReader(cfg)
	if err != nil {
		return Inventory{}, err
	}
	return r.read(ctx, sel)
}

// terminating says an object is being deleted.
func terminating(u *unstructured.Unstructured) bool { return u.GetDeletionTimestamp() != nil }

func (r *reader) read(ctx context.Context, sel Selection) (Inventory, error) {
	if sel.LabelSelector != "" {
		if _, err := labels.Parse(sel.LabelSelector); err != nil {
			return Inventory{}, fmt.Errorf("inventory: label selector %q: %w", sel.LabelSelector, err)
		}
	}
	var inv Inventory
	seen := map[key]bool{}
	add := func(u *unstructured.Unstructured) {
		if k := RefOf(u).key(); !seen[k] {
			seen[k] = true
			inv.Objects = append(inv.Objects, u)
		}
	}
	for _, ref := range sel.Refs {
		u, err := r.get(ctx, ref)
		if err != nil {
			return Inventory{}, err
		}
		if u == nil || terminating(u) {
			inv.Missing = append(inv.Missing, ref)
			continue
		}
		add(u)
	}
	for _, gvk := range sel.Kinds {
		objs, served, err := r.list(ctx, gvk, sel.LabelSelector, sel.Namespaces)
		if err != nil {
			return Inventory{}, err
		}
		if !served {
			inv.Unserved = append(inv.Unserved, gvk)
		}
		for _, u := range objs {
			if !terminating(u) {
				add(u)
			}
		}
	}
	sortObjects(inv.Objects)
	return inv, nil
}

// reader holds one Read's clients. Discovery is cached for the reader's
// life only: a long-lived cache would miss CRDs an estate installs later.
type reader struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newReader(cfg *rest.Config) (*reader, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("inventory: discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("inventory: dynamic client: %w", err)
	}
	return &reader{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapperWithContext(memory.NewMemCacheClientWithContext(dc))}, nil
}

// mapping resolves a kind to its resource; nil (and no error) when the
// server does not serve the kind.
func (r *reader) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	var versions []string
	if gvk.Version != "" {
		versions = []string{gvk.Version}
	}
	m, err := r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), versions...)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inventory: map %s: %w", gvk, err)
	}
	return m, nil
}

// get reads one object; nil (and no error) when it does not exist.
func (r *reader) get(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	m, err := r.mapping(ctx, ref.GroupVersionKind())
	if err != nil || m == nil {
		return nil, err
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespaced && ref.Namespace == "":
		return nil, fmt.Errorf("inventory: %s: %s is namespaced but the ref has no namespace", ref, ref.Kind)
	case !namespaced && ref.Namespace != "":
		return nil, fmt.Errorf("inventory: %s: %s is cluster-scoped but the ref has a namespace", ref, ref.Kind)
	}
	u, err := r.dyn.Resource(m.Resource).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inventory: get %s: %w", ref, err)
	}
	return u, nil
}

// list reads every object of a kind matching selector in namespaces (all
// when empty); served is false when the server does not serve the kind.
func (r *reader) list(ctx context.Context, gvk schema.GroupVersionKind, selector string, namespaces []string) (_ []*unstructured.Unstructured, served bool, _ error) {
	m, err := r.mapping(ctx, gvk)
	if err != nil || m == nil {
		return nil, false, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace || len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var out []*unstructured.Unstructured
	for _, ns := range namespaces {
		opts := metav1.ListOptions{LabelSelector: selector, Limit: pageSize}
		for {
			l, err := r.dyn.Resource(m.Resource).Namespace(ns).List(ctx, opts)
			if err != nil {
				return nil, true, fmt.Errorf("inventory: list %s in %q: %w", m.Resource, ns, err)
			}
			for i := range l.Items {
				u := &l.Items[i]
				// List items carry no kind of their own on the wire;
				// the decoder usually fills it from the list, but the
				// kind is what keys the object, so make sure.
				if u.GetKind() == "" {
					u.SetGroupVersionKind(m.GroupVersionKind)
				}
				out = append(out, u)
			}
			if opts.Continue = l.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
	return out, true, nil
}
