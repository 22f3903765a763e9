package inventory_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	estateNS    = "estate"
	estateLabel = "gauntlet.test/estate"
	// engineLabel stands for an engine's own marker label: its value
	// differs between the two clusters.
	engineLabel = "gauntlet.test/engine"
)

var apiServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// estateRefs are the objects createEstate makes, plus one it does not.
func estateRefs() []inventory.Ref {
	return []inventory.Ref{
		{Version: "v1", Kind: "Namespace", Name: estateNS},
		{Version: "v1", Kind: "ConfigMap", Namespace: estateNS, Name: "cfg"},
		{Version: "v1", Kind: "Secret", Namespace: estateNS, Name: "sec"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: estateNS, Name: "sa"},
		{Version: "v1", Kind: "Service", Namespace: estateNS, Name: "web"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "estate-reader"},
		{Group: apiServiceGVK.Group, Version: apiServiceGVK.Version, Kind: apiServiceGVK.Kind, Name: "v1beta1.metrics.estate.example"},
		{Version: "v1", Kind: "ConfigMap", Namespace: estateNS, Name: "never-created"},
	}
}

// createEstate creates the same small estate an engine would, with the
// engine marker set to engine and the Service at clusterIP.
func createEstate(t *testing.T, ctx context.Context, cfg *rest.Config, engine, clusterIP string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	labels := map[string]string{estateLabel: "yes", engineLabel: engine}
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: map[string]string{"estate/note": "declared"}}
	}
	must(t, "namespace", func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta(estateNS, "")}, metav1.CreateOptions{})
		return err
	})
	must(t, "configmap", func() error {
		_, err := cs.CoreV1().ConfigMaps(estateNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cfg", estateNS),
			Data: map[string]string{"config.yaml": "level: info\n"}}, metav1.CreateOptions{})
		return err
	})
	must(t, "secret", func() error {
		_, err := cs.CoreV1().Secrets(estateNS).Create(ctx, &corev1.Secret{ObjectMeta: meta("sec", estateNS),
			StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
		return err
	})
	must(t, "serviceaccount", func() error {
		_, err := cs.CoreV1().ServiceAccounts(estateNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta("sa", estateNS)}, metav1.CreateOptions{})
		return err
	})
	must(t, "service", func() error {
		_, err := cs.CoreV1().Services(estateNS).Create(ctx, &corev1.Service{ObjectMeta: meta("web", estateNS), Spec: corev1.ServiceSpec{
			ClusterIP: clusterIP, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}},
		}}, metav1.CreateOptions{})
		return err
	})
	must(t, "clusterrole", func() error {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta("estate-reader", ""), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}},
		}}, metav1.CreateOptions{})
		return err
	})
	// An APIService, through the dynamic client: its group is not in
	// client-go's scheme, which is what inventory must cope with.
	must(t, "apiservice", func() error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{
				"group": "metrics.estate.example", "version": "v1beta1",
				"groupPriorityMinimum": int64(100), "versionPriority": int64(100), "insecureSkipTLSVerify": true,
				"service": map[string]any{"namespace": estateNS, "name": "web", "port": int64(443)},
			},
		}}
		u.SetGroupVersionKind(apiServiceGVK)
		u.SetName("v1beta1.metrics.estate.example")
		u.SetLabels(labels)
		u.SetAnnotations(map[string]string{"estate/note": "declared"})
		_, err := dynamic.NewForConfigOrDie(cfg).Resource(apiServiceGVK.GroupVersion().WithResource("apiservices")).Create(ctx, u, metav1.CreateOptions{})
		return err
	})
}

func read(t *testing.T, ctx context.Context, cfg *rest.Config, sel inventory.Selection) inventory.Inventory {
	t.Helper()
	inv, err := inventory.Read(ctx, cfg, sel)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return inv
}

// TestTwoClustersCompare creates the same estate on two real control
// planes and checks that they compare equal; that the engine marker label
// and the clusterIP (pinned to differ) are what the label option and the
// Service rule hide; that one field changed on one cluster is reported
// as exactly that object, path and values; and that a deleted object is
// reported missing.
func TestTwoClustersCompare(t *testing.T) {
	oracle := testenv.LocalCluster(t, "oracle", local.WithPods(false))
	subject := testenv.LocalCluster(t, "subject", local.WithPods(false))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Allocated addresses are random and could coincide; pinning two
	// different ones proves the rule is what makes them compare equal.
	createEstate(t, ctx, oracle.RESTConfig(), "terraform", "10.96.200.2")
	createEstate(t, ctx, subject.RESTConfig(), "tofu", "10.96.200.3")
	refs := estateRefs()
	missing := refs[len(refs)-1]
	want := read(t, ctx, oracle.RESTConfig(), inventory.Selection{Refs: refs})
	got := read(t, ctx, subject.RESTConfig(), inventory.Selection{Refs: refs})
	for name, inv := range map[string]inventory.Inventory{"oracle": want, "subject": got} {
		if len(inv.Objects) != len(refs)-1 || !reflect.DeepEqual(inv.Missing, []inventory.Ref{missing}) {
			t.Fatalf("%s: read %d objects, missing %v; want %d and [%v]", name, len(inv.Objects), inv.Missing, len(refs)-1, missing)
		}
	}
	ignoreEngine := inventory.IgnoreLabels(engineLabel)

	t.Run("same objects compare equal", func(t *testing.T) {
		if r := inventory.Compare(want, got, ignoreEngine); !r.Equal() || r.Compared != len(refs)-1 {
			t.Fatalf("want equal over %d objects, got %d compared:\n%s", len(refs)-1, r.Compared, r)
		}
	})
	t.Run("read by kinds and label selector across namespaces", func(t *testing.T) {
		unserved := schema.GroupVersionKind{Group: "estate.example", Version: "v1", Kind: "Widget"}
		sel := inventory.Selection{LabelSelector: estateLabel + "=yes", Kinds: []schema.GroupVersionKind{
			{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"},
			{Version: "v1", Kind: "ServiceAccount"}, {Kind: "Service"}, // no version: the preferred one
			{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, apiServiceGVK, unserved,
		}}
		w, g := read(t, ctx, oracle.RESTConfig(), sel), read(t, ctx, subject.RESTConfig(), sel)
		if len(w.Objects) != len(refs)-1 || !reflect.DeepEqual(w.Unserved, []schema.GroupVersionKind{unserved}) {
			t.Fatalf("read %d objects (want %d), unserved %v", len(w.Objects), len(refs)-1, w.Unserved)
		}
		if r := inventory.Compare(w, g, ignoreEngine); !r.Equal() {
			t.Fatalf("want equal:\n%s", r)
		}
	})
	t.Run("the engine label differs unless ignored or excluded", func(t *testing.T) {
		r := inventory.Compare(want, got)
		if len(r.Differences) != len(refs)-1 {
			t.Fatalf("want one label difference per object, got:\n%s", r)
		}
		for _, d := range r.Differences {
			if d.Path != `metadata.labels["`+engineLabel+`"]` || d.Want != `"terraform"` || d.Got != `"tofu"` {
				t.Errorf("unexpected difference %s", d)
			}
		}
		if r := inventory.Compare(want, got, inventory.WithoutLabelsAndAnnotations()); !r.Equal() {
			t.Errorf("WithoutLabelsAndAnnotations: want equal:\n%s", r)
		}
	})
	t.Run("the clusterIP differs unless the Service rule drops it", func(t *testing.T) {
		r := inventory.Compare(want, got, ignoreEngine, inventory.ReplaceRules())
		svc := inventory.Ref{Version: "v1", Kind: "Service", Namespace: estateNS, Name: "web"}
		wantDiffs := []inventory.Difference{
			{Object: svc, Path: "spec.clusterIP", Want: `"10.96.200.2"`, Got: `"10.96.200.3"`},
			{Object: svc, Path: "spec.clusterIPs[0]", Want: `"10.96.200.2"`, Got: `"10.96.200.3"`},
		}
		if !reflect.DeepEqual(r.Differences, wantDiffs) {
			t.Fatalf("without rules, want exactly the clusterIP differences, got:\n%s", r)
		}
	})

	cs := kubernetes.NewForConfigOrDie(subject.RESTConfig())
	must(t, "edit clusterrole", func() error {
		cr, err := cs.RbacV1().ClusterRoles().Get(ctx, "estate-reader", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cr.Rules[0].Verbs[1] = "watch"
		_, err = cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
		return err
	})
	role := inventory.Difference{
		Object: inventory.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "estate-reader"},
		Path:   "rules[0].verbs[1]", Want: `"list"`, Got: `"watch"`,
	}
	t.Run("one changed field is named exactly", func(t *testing.T) {
		r := inventory.Compare(want, read(t, ctx, subject.RESTConfig(), inventory.Selection{Refs: refs}), ignoreEngine)
		if !reflect.DeepEqual(r.Differences, []inventory.Difference{role}) {
			t.Fatalf("want exactly %s, got:\n%s", role, r)
		}
		if s := r.String(); s != `ClusterRole estate-reader: rules[0].verbs[1]: want "list", got "watch"` {
			t.Errorf("String() = %s", s)
		}
	})

	must(t, "delete secret", func() error {
		return cs.CoreV1().Secrets(estateNS).Delete(ctx, "sec", metav1.DeleteOptions{})
	})
	t.Run("a deleted object is reported missing", func(t *testing.T) {
		g := read(t, ctx, subject.RESTConfig(), inventory.Selection{Refs: refs})
		r := inventory.Compare(want, g, ignoreEngine)
		if len(r.Differences) != 2 || r.Differences[0] != role {
			t.Fatalf("want the ClusterRole change and the missing Secret, got:\n%s", r)
		}
		sec := r.Differences[1]
		if !sec.Missing() || sec.Object.String() != "Secret estate/sec" || sec.String() != "Secret estate/sec: missing (wanted, not found)" {
			t.Errorf("want Secret estate/sec missing, got %s", sec)
		}
	})

	t.Run("a namespaced ref without a namespace is an error", func(t *testing.T) {
		_, err := inventory.Read(ctx, subject.RESTConfig(), inventory.Selection{Refs: []inventory.Ref{{Version: "v1", Kind: "ConfigMap", Name: "cfg"}}})
		if err == nil || !strings.Contains(err.Error(), "namespaced") {
			t.Errorf("want an error saying the kind is namespaced, got %v", err)
		}
	})
}

// TestCountLabelled counts labelled objects across two namespaces, a
// cluster-scoped kind and an unserved kind, with decoys carrying another
// value or no label.
func TestCountLabelled(t *testing.T) {
	c := testenv.LocalCluster(t, "count", local.WithPods(false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	const label = "gauntlet.test/owner"
	mark := func(v string) map[string]string { return map[string]string{label: v} }
	for _, ns := range []string{"a", "b"} {
		must(t, "namespace "+ns, func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			return err
		})
	}
	for _, cm := range []struct {
		ns, name string
		labels   map[string]string
	}{{"a", "one", mark("estate")}, {"b", "two", mark("estate")}, {"b", "three", mark("other")}, {"a", "four", nil}} {
		must(t, "configmap "+cm.name, func() error {
			_, err := cs.CoreV1().ConfigMaps(cm.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name, Labels: cm.labels}}, metav1.CreateOptions{})
			return err
		})
	}
	must(t, "service", func() error {
		_, err := cs.CoreV1().Services("b").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Labels: mark("estate")},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		return err
	})
	must(t, "clusterrole", func() error {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cr", Labels: mark("estate")}}, metav1.CreateOptions{})
		return err
	})
	kinds := []schema.GroupVersionKind{
		{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Service"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},       // served, none labelled
		{Group: "estate.example", Version: "v1", Kind: "Widget"}, // not served
	}
	n, which, err := inventory.CountLabelled(ctx, c.RESTConfig(), kinds, label, "estate")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range which {
		names = append(names, r.String())
	}
	wantNames := []string{"ClusterRole cr", "ConfigMap a/one", "ConfigMap b/two", "Service b/svc"}
	if n != 4 || !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("CountLabelled = %d %v, want 4 %v", n, names, wantNames)
	}
	if n, _, err := inventory.CountLabelled(ctx, c.RESTConfig(), kinds, label, "nobody"); err != nil || n != 0 {
		t.Errorf("CountLabelled(nobody) = %d, %v; want 0, nil", n, err)
	}
	if _, _, err := inventory.CountLabelled(ctx, c.RESTConfig(), kinds, "bad label!", "x"); err == nil {
		t.Error("CountLabelled with an invalid label key: want an error")
	}
}

func must(t *testing.T, what string, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
