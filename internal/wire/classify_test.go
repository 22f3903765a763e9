package wire_test

import (
	"net/url"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
)

// TestClassify pins the request semantics the counts and triggers rest
// on: the verb RBAC would see, the resource with its group and
// subresource, the namespace and the name, for every shape of path the
// API server serves.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, target                  string
		verb, resource, namespace, name string
	}{
		// Core group, namespaced.
		{"POST", "/api/v1/namespaces/ns/configmaps", "create", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps/a", "get", "configmaps", "ns", "a"},
		{"HEAD", "/api/v1/namespaces/ns/configmaps/a", "get", "configmaps", "ns", "a"},
		{"GET", "/api/v1/namespaces/ns/configmaps", "list", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?limit=500&resourceVersion=0", "list", "configmaps", "ns", ""},
		{"PUT", "/api/v1/namespaces/ns/configmaps/a", "update", "configmaps", "ns", "a"},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/a?fieldManager=x", "patch", "configmaps", "ns", "a"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/a", "delete", "configmaps", "ns", "a"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps", "deletecollection", "configmaps", "ns", ""},
		{"DELETE", "/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db", "deletecollection", "configmaps", "ns", ""},
		// All namespaces.
		{"GET", "/api/v1/configmaps", "list", "configmaps", "", ""},
		// Watches: the query form, its false and odd values, the legacy
		// path prefix, and one object pinned by a field selector.
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=5", "watch", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=1", "watch", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=", "watch", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=false", "list", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=0", "list", "configmaps", "ns", ""},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps", "watch", "configmaps", "ns", ""},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps/a", "watch", "configmaps", "ns", "a"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true&fieldSelector=metadata.name%3Da", "watch", "configmaps", "ns", "a"},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3D%3Da", "list", "configmaps", "ns", "a"},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%21%3Da", "list", "configmaps", "ns", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.namespace%3Dns", "list", "configmaps", "ns", ""},
		// Named groups; cluster-scoped resources; subresources.
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", "create", "deployments.apps", "ns", ""},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", "get", "deployments.apps", "ns", "web"},
		{"PUT", "/apis/apps/v1/namespaces/ns/deployments/web/status", "update", "deployments.apps/status", "ns", "web"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/web/scale", "patch", "deployments.apps/scale", "ns", "web"},
		{"GET", "/apis/apps/v1/deployments?watch=true", "watch", "deployments.apps", "", ""},
		{"GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps", "get", "apiservices.apiregistration.k8s.io", "", "v1.apps"},
		{"POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "create", "clusterroles.rbac.authorization.k8s.io", "", ""},
		{"DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/r", "delete", "clusterroles.rbac.authorization.k8s.io", "", "r"},
		{"GET", "/api/v1/nodes/n1/status", "get", "nodes/status", "", "n1"},
		{"POST", "/api/v1/namespaces/ns/pods/p/eviction", "create", "pods/eviction", "ns", "p"},
		{"POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", "create", "serviceaccounts/token", "ns", "sa"},
		{"GET", "/api/v1/namespaces/ns/pods/p/log?follow=true", "get", "pods/log", "ns", "p"},
		{"GET", "/api/v1/namespaces/ns/pods/p/proxy/metrics", "get", "pods/proxy", "ns", "p"},
		{"GET", "/api/v1/proxy/namespaces/ns/pods/p/metrics", "proxy", "pods", "ns", "p"},
		// Namespaces are their own namespace, and have subresources of
		// their own where other resources would start.
		{"POST", "/api/v1/namespaces", "create", "namespaces", "", ""},
		{"GET", "/api/v1/namespaces", "list", "namespaces", "", ""},
		{"GET", "/api/v1/namespaces/ns", "get", "namespaces", "ns", "ns"},
		{"DELETE", "/api/v1/namespaces/ns", "delete", "namespaces", "ns", "ns"},
		{"PUT", "/api/v1/namespaces/ns/finalize", "update", "namespaces/finalize", "ns", "ns"},
		{"PUT", "/api/v1/namespaces/ns/status", "update", "namespaces/status", "ns", "ns"},
		// Non-resource requests: discovery, version, OpenAPI, health.
		{"GET", "/api", "get", "nonresource:/api", "", ""},
		{"GET", "/api/v1", "get", "nonresource:/api/v1", "", ""},
		{"GET", "/apis", "get", "nonresource:/apis", "", ""},
		{"GET", "/apis/apps", "get", "nonresource:/apis/apps", "", ""},
		{"GET", "/apis/apps/v1", "get", "nonresource:/apis/apps/v1", "", ""},
		{"GET", "/version", "get", "nonresource:/version", "", ""},
		{"GET", "/openapi/v3", "get", "nonresource:/openapi/v3", "", ""},
		{"GET", "/openapi/v3/apis/apps/v1?hash=ABC", "get", "nonresource:/openapi/v3/apis/apps/v1", "", ""},
		{"GET", "/", "get", "nonresource:/", "", ""},
		{"POST", "/livez", "post", "nonresource:/livez", "", ""},
	} {
		u, err := url.Parse(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		got := wire.Classify(tc.method, u)
		want := wire.Request{Verb: tc.verb, Resource: tc.resource, Namespace: tc.namespace, Name: tc.name, Method: tc.method, Path: u.Path}
		if got != want {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.method, tc.target, got, want)
		}
	}
}

func TestKeyString(t *testing.T) {
	if got := (wire.Key{Verb: "create", Resource: "configmaps"}).String(); got != "create configmaps" {
		t.Errorf("Key.String() = %q", got)
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b wire.Request
		want bool
	}{
		{wire.Request{Seq: 1, Done: 1}, wire.Request{Seq: 2, Done: 2}, false}, // one after the other
		{wire.Request{Seq: 1, Done: 2}, wire.Request{Seq: 2, Done: 3}, true},  // 2 taken in before 1 was sent
		{wire.Request{Seq: 1}, wire.Request{Seq: 5, Done: 5}, true},           // 1 still in flight
		{wire.Request{Seq: 3, Done: 4}, wire.Request{Seq: 4, Done: 4}, true},  // either order
		{wire.Request{Seq: 3, Done: 3}, wire.Request{Seq: 3, Done: 3}, false}, // itself
	} {
		if got := wire.Overlap(tc.a, tc.b); got != tc.want {
			t.Errorf("Overlap(%+v, %+v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := wire.Overlap(tc.b, tc.a); got != tc.want {
			t.Errorf("Overlap(%+v, %+v) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
