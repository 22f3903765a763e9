package baseline_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/baseline"
	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	ks   = "kube-system"
	rbac = "rbac.authorization.k8s.io"
)

// TestBaselineOnALiveControlPlane snapshots kube-system and the
// cluster-scoped kinds of a real control plane (the default substrate,
// pods on) and checks that an estate which writes there and cleans up
// leaves no trace, while a deletion, a deletion its controller undoes,
// an addition and field edits each show as exactly what they are.
func TestBaselineOnALiveControlPlane(t *testing.T) {
	c := testenv.LocalCluster(t, "baseline")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := c.RESTConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	scope := baseline.DefaultScope()

	// The controller-manager creates objects in kube-system as each of
	// its controllers starts; the first snapshot waits for a quiet second
	// so none of them is later blamed on the estate.
	before, err := baseline.Take(ctx, cfg, scope, baseline.WithSettle(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("baseline: %s", before)
	counts, sum := before.Counts(), 0
	for _, kind := range []string{"APIService", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Role", "RoleBinding", "ServiceAccount"} {
		if counts[kind] == 0 {
			t.Errorf("no %s in the baseline: %s", kind, before)
		}
	}
	for _, n := range counts {
		sum += n
	}
	if sum != before.Len() || !strings.HasPrefix(before.String(), fmt.Sprintf("%d objects: ", before.Len())) {
		t.Errorf("counts %v do not add up to Len %d, or String is off: %s", counts, before.Len(), before)
	}

	t.Run("an estate that cleans up leaves no trace", func(t *testing.T) {
		estate := createEstate(t, ctx, cs)
		// Proof the control plane rewrote something of its own: the
		// aggregation controller put the estate's rule into "view".
		testenv.WaitUntil(t, ctx, "view aggregates the estate rule", func() (bool, error) {
			return viewHasEstateRule(ctx, cs)
		})
		during, err := baseline.Take(ctx, cfg, scope)
		if err != nil {
			t.Fatal(err)
		}
		if d := baseline.Compare(before, during); !reflect.DeepEqual(d, baseline.Diff{Appeared: estate}) {
			t.Fatalf("while the estate exists, want exactly its %d objects appeared (and no change to the aggregated roles), got:\n%s", len(estate), d)
		}
		deleteEstate(t, ctx, cs)
		after, err := baseline.Take(ctx, cfg, scope)
		if err != nil {
			t.Fatal(err)
		}
		if d := baseline.Compare(before, after); !d.Equal() {
			t.Fatalf("after the estate removed itself, want no change, got:\n%s", d)
		}
	})

	t.Run("a deleted kube-system ConfigMap vanished", func(t *testing.T) {
		// The apiserver's legacy-token-tracking controller recreates this
		// ConfigMap at most once per 30 minutes, and used that allowance
		// creating it at start: in a fresh cluster it stays deleted.
		const name = "kube-apiserver-legacy-service-account-token-tracking"
		base := take(t, ctx, cfg, scope)
		must(t, "delete", cs.CoreV1().ConfigMaps(ks).Delete(ctx, name, metav1.DeleteOptions{}))
		want := baseline.Diff{Vanished: []inventory.Ref{{Version: "v1", Kind: "ConfigMap", Namespace: ks, Name: name}}}
		if d := baseline.Compare(base, take(t, ctx, cfg, scope)); !reflect.DeepEqual(d, want) {
			t.Fatalf("want exactly:\n%s\ngot:\n%s", want, d)
		}
	})

	t.Run("a ConfigMap its controller recreates is reported replaced", func(t *testing.T) {
		// The apiserver recreates extension-apiserver-authentication within
		// a second; the deletion must still show, as a replacement.
		const name = "extension-apiserver-authentication"
		base := take(t, ctx, cfg, scope)
		old, err := cs.CoreV1().ConfigMaps(ks).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		must(t, "delete", cs.CoreV1().ConfigMaps(ks).Delete(ctx, name, metav1.DeleteOptions{}))
		testenv.WaitUntil(t, ctx, name+" recreated", func() (bool, error) {
			cm, err := cs.CoreV1().ConfigMaps(ks).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && cm.UID != old.UID, err
		})
		want := baseline.Diff{Replaced: []inventory.Ref{{Version: "v1", Kind: "ConfigMap", Namespace: ks, Name: name}}}
		if d := baseline.Compare(base, take(t, ctx, cfg, scope)); !reflect.DeepEqual(d, want) {
			t.Fatalf("want exactly:\n%s\ngot:\n%s", want, d)
		}
	})

	t.Run("an added object appeared", func(t *testing.T) {
		base := take(t, ctx, cfg, scope)
		_, err := cs.CoreV1().ConfigMaps(ks).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "left-behind"}}, metav1.CreateOptions{})
		must(t, "create", err)
		want := baseline.Diff{Appeared: []inventory.Ref{{Version: "v1", Kind: "ConfigMap", Namespace: ks, Name: "left-behind"}}}
		if d := baseline.Compare(base, take(t, ctx, cfg, scope)); !reflect.DeepEqual(d, want) {
			t.Fatalf("want exactly:\n%s\ngot:\n%s", want, d)
		}
	})

	t.Run("edited objects changed, with their paths", func(t *testing.T) {
		base := take(t, ctx, cfg, scope)
		cr, err := cs.RbacV1().ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
		must(t, "get clusterrole", err)
		cr.Labels["gauntlet.test/touched"] = "yes"
		_, err = cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
		must(t, "label clusterrole", err)
		role, err := cs.RbacV1().Roles(ks).Get(ctx, "system:controller:token-cleaner", metav1.GetOptions{})
		must(t, "get role", err)
		n := len(role.Rules[0].Verbs)
		role.Rules[0].Verbs = append(role.Rules[0].Verbs, "patch")
		_, err = cs.RbacV1().Roles(ks).Update(ctx, role, metav1.UpdateOptions{})
		must(t, "edit role", err)
		want := baseline.Diff{Changed: []inventory.Difference{
			{Object: inventory.Ref{Group: rbac, Version: "v1", Kind: "ClusterRole", Name: "system:basic-user"},
				Path: `metadata.labels["gauntlet.test/touched"]`, Got: `"yes"`},
			{Object: inventory.Ref{Group: rbac, Version: "v1", Kind: "Role", Namespace: ks, Name: "system:controller:token-cleaner"},
				Path: fmt.Sprintf("rules[0].verbs[%d]", n), Got: `"patch"`},
		}}
		d := baseline.Compare(base, take(t, ctx, cfg, scope))
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("want exactly:\n%s\ngot:\n%s", want, d)
		}
		t.Logf("reported as:\n%s", d)
	})
}

// createEstate writes estate-like objects into kube-system and the
// cluster scope, including a ClusterRole aggregated into "view", and
// returns their refs in the order a Diff lists them.
func createEstate(t *testing.T, ctx context.Context, cs kubernetes.Interface) []inventory.Ref {
	t.Helper()
	meta := metav1.ObjectMeta{Name: "estate", Namespace: ks}
	labels := map[string]string{"app": "estate"}
	_, err := cs.CoreV1().ConfigMaps(ks).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	must(t, "configmap", err)
	_, err = cs.CoreV1().ServiceAccounts(ks).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
	must(t, "serviceaccount", err)
	_, err = cs.CoreV1().Services(ks).Create(ctx, &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Port: 443}}}}, metav1.CreateOptions{})
	must(t, "service", err)
	_, err = cs.AppsV1().Deployments(ks).Create(ctx, &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{ServiceAccountName: "estate", Containers: []corev1.Container{{Name: "web", Image: "estate:1"}}}},
	}}, metav1.CreateOptions{})
	must(t, "deployment", err)
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"estate.example"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}}
	_, err = cs.RbacV1().Roles(ks).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
	must(t, "role", err)
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "estate", Namespace: ks}}
	_, err = cs.RbacV1().RoleBindings(ks).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbac, Kind: "Role", Name: "estate"}}, metav1.CreateOptions{})
	must(t, "rolebinding", err)
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "estate-view",
		Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}}, Rules: rules}, metav1.CreateOptions{})
	must(t, "clusterrole", err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "estate-view"},
		Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbac, Kind: "ClusterRole", Name: "estate-view"}}, metav1.CreateOptions{})
	must(t, "clusterrolebinding", err)
	return []inventory.Ref{
		{Group: rbac, Version: "v1", Kind: "ClusterRole", Name: "estate-view"},
		{Group: rbac, Version: "v1", Kind: "ClusterRoleBinding", Name: "estate-view"},
		{Version: "v1", Kind: "ConfigMap", Namespace: ks, Name: "estate"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ks, Name: "estate"},
		{Group: rbac, Version: "v1", Kind: "Role", Namespace: ks, Name: "estate"},
		{Group: rbac, Version: "v1", Kind: "RoleBinding", Namespace: ks, Name: "estate"},
		{Version: "v1", Kind: "Service", Namespace: ks, Name: "estate"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: ks, Name: "estate"},
	}
}

// deleteEstate deletes what createEstate made. Each delete removes the
// object itself at once (no finalizers); what the garbage collector
// removes later (ReplicaSets, Pods) is outside the scope.
func deleteEstate(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	del := metav1.DeleteOptions{}
	must(t, "delete clusterrolebinding", cs.RbacV1().ClusterRoleBindings().Delete(ctx, "estate-view", del))
	must(t, "delete clusterrole", cs.RbacV1().ClusterRoles().Delete(ctx, "estate-view", del))
	must(t, "delete rolebinding", cs.RbacV1().RoleBindings(ks).Delete(ctx, "estate", del))
	must(t, "delete role", cs.RbacV1().Roles(ks).Delete(ctx, "estate", del))
	must(t, "delete deployment", cs.AppsV1().Deployments(ks).Delete(ctx, "estate", del))
	must(t, "delete service", cs.CoreV1().Services(ks).Delete(ctx, "estate", del))
	must(t, "delete serviceaccount", cs.CoreV1().ServiceAccounts(ks).Delete(ctx, "estate", del))
	must(t, "delete configmap", cs.CoreV1().ConfigMaps(ks).Delete(ctx, "estate", del))
}

func viewHasEstateRule(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	view, err := cs.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(view.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, "estate.example")
	}), nil
}

func take(t *testing.T, ctx context.Context, cfg *rest.Config, scope baseline.Scope) *baseline.Snapshot {
	t.Helper()
	s, err := baseline.Take(ctx, cfg, scope)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
