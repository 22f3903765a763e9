package inventory

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/restmapper"
	k8stesting "k8s.io/client-go/testing"
)

// An object being deleted reads as absent, named or listed: a Ref to it
// is Missing, and a kind's list leaves it out.
func TestTerminatingObjectsReadAsAbsent(t *testing.T) {
	cm := func(name string, terminating bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName(name)
		if terminating {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
			u.SetFinalizers([]string{"example.com/hold"})
		}
		return u
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"},
		cm("live", false), cm("going", true))
	disc := &discoveryfake.FakeDiscovery{Fake: &k8stesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"get", "list"}}},
	}}}}
	r := &reader{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
	live := Ref{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "live"}
	going := Ref{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "going"}

	inv, err := r.read(context.Background(), Selection{Refs: []Ref{live, going}})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Objects) != 1 || inv.Objects[0].GetName() != "live" || !slices.Equal(inv.Missing, []Ref{going}) {
		t.Errorf("by ref: objects %v, missing %v; want live read, going missing", names(inv), inv.Missing)
	}
	inv, err = r.read(context.Background(), Selection{Kinds: []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(inv); !slices.Equal(got, []string{"live"}) {
		t.Errorf("by kind: %v, want live alone", got)
	}
}

func names(inv Inventory) []string {
	var out []string
	for _, u := range inv.Objects {
		out = append(out, u.GetName())
	}
	return out
}
