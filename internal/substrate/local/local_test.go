package local_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestLocalClusterServesEstateKinds creates and reads back every kind the
// estates use, rolls a Deployment out through kwok, deletes a namespace,
// and checks that Stop leaves no process and no directory behind.
func TestLocalClusterServesEstateKinds(t *testing.T) {
	c := testenv.LocalCluster(t, "kinds")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	ns := "estate"
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	labels := map[string]string{"app": "web"}

	must(t, "namespace", func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	must(t, "configmap", func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		return err
	})
	must(t, "secret", func() error {
		_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: meta("sec"), StringData: map[string]string{"p": "w"}}, metav1.CreateOptions{})
		return err
	})
	must(t, "serviceaccount", func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta("sa")}, metav1.CreateOptions{})
		return err
	})
	must(t, "service", func() error {
		_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{
			Selector: labels, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}},
		}}, metav1.CreateOptions{})
		return err
	})
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa", Namespace: ns}}
	must(t, "clusterrole", func() error {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "estate-reader"}, Rules: rules}, metav1.CreateOptions{})
		return err
	})
	must(t, "clusterrolebinding", func() error {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "estate-reader"},
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "estate-reader"}, Subjects: subjects}, metav1.CreateOptions{})
		return err
	})
	must(t, "role", func() error {
		_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta("reader"), Rules: rules}, metav1.CreateOptions{})
		return err
	})
	must(t, "rolebinding", func() error {
		_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("reader"),
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"}, Subjects: subjects}, metav1.CreateOptions{})
		return err
	})
	apiservices := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	must(t, "apiservice", func() error {
		_, err := apiservices.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
			"spec": map[string]any{
				"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
				"insecureSkipTLSVerify": true, "service": map[string]any{"name": "web", "namespace": ns},
			},
		}}, metav1.CreateOptions{})
		return err
	})
	must(t, "hpa", func() error {
		_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("web"),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To[int32](1), MaxReplicas: 3,
			}}, metav1.CreateOptions{})
		return err
	})
	must(t, "networkpolicy", func() error {
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta("deny"),
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: labels}}}, metav1.CreateOptions{})
		return err
	})
	must(t, "deployment", func() error {
		_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				ServiceAccountName: "sa", Containers: []corev1.Container{{Name: "web", Image: "web:1"}},
			}},
		}}, metav1.CreateOptions{})
		return err
	})

	// Read every object back.
	for what, get := range map[string]func() error{
		"configmap": func() error {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
			if err == nil && cm.Data["k"] != "v" {
				t.Errorf("configmap data = %v", cm.Data)
			}
			return err
		},
		"secret": func() error { _, err := cs.CoreV1().Secrets(ns).Get(ctx, "sec", metav1.GetOptions{}); return err },
		"serviceaccount": func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "sa", metav1.GetOptions{})
			return err
		},
		"service": func() error { _, err := cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{}); return err },
		"clusterrole": func() error {
			_, err := cs.RbacV1().ClusterRoles().Get(ctx, "estate-reader", metav1.GetOptions{})
			return err
		},
		"clusterrolebinding": func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "estate-reader", metav1.GetOptions{})
			return err
		},
		"role": func() error { _, err := cs.RbacV1().Roles(ns).Get(ctx, "reader", metav1.GetOptions{}); return err },
		"rolebinding": func() error {
			_, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "reader", metav1.GetOptions{})
			return err
		},
		"apiservice": func() error {
			_, err := apiservices.Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
			return err
		},
		"hpa": func() error {
			_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
			return err
		},
		"networkpolicy": func() error {
			_, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, "deny", metav1.GetOptions{})
			return err
		},
	} {
		must(t, "read back "+what, get)
	}

	// kwok runs the pods, so the rollout completes.
	testenv.WaitUntil(t, ctx, "deployment web Available with 2 ready replicas", func() (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue && d.Status.ReadyReplicas == 2 {
				return true, nil
			}
		}
		return false, nil
	})

	// An APIService with no answering backend blocks namespace deletion
	// (discovery fails), so it goes first, as the gauntlet does.
	must(t, "delete apiservice", func() error {
		return apiservices.Delete(ctx, "v1beta1.metrics.k8s.io", metav1.DeleteOptions{})
	})
	must(t, "delete namespace", func() error { return cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	testenv.WaitUntil(t, ctx, "namespace deletion completes", func() (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})

	pids, dir := c.PIDs(), c.Dir()
	if len(pids) != 5 {
		t.Errorf("want 5 child processes (etcd, apiserver, controller-manager, scheduler, kwok), have %d", len(pids))
	}
	testenv.Stop(t, c)
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("child pid %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster dir %s still exists after Stop (stat: %v)", dir, err)
	}
}

// TestBusyPortPicksAnother asks for a port something else holds.
func TestBusyPortPicksAnother(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	c := testenv.LocalCluster(t, "busyport", local.WithAPIServerPort(busy), local.WithPods(false))
	if strings.HasSuffix(c.RESTConfig().Host, ":"+strconv.Itoa(busy)) {
		t.Fatalf("apiserver claims busy port %d: %s", busy, c.RESTConfig().Host)
	}
	if _, err := kubernetes.NewForConfigOrDie(c.RESTConfig()).Discovery().ServerVersion(); err != nil {
		t.Fatalf("apiserver on the other port does not answer: %v", err)
	}
}

// TestMissingBinaryNamesTheToolchainCommand starts with a toolchain that
// lacks the apiserver.
func TestMissingBinaryNamesTheToolchainCommand(t *testing.T) {
	tc := testenv.Toolchain(t, "etcd")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := local.New(tc).Start(ctx, "missing")
	if err == nil || !strings.Contains(err.Error(), "go run ./tools/gauntlet toolchain") {
		t.Fatalf("want an error naming the toolchain command, got %v", err)
	}
}

// TestFailedStartLeavesNothing gives every component a 1 ms ready bound,
// so the start fails part-way, and checks the half-started cluster is gone.
func TestFailedStartLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	tc := testenv.Toolchain(t, local.Tools()...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := local.New(tc, local.WithParentDir(parent), local.WithReadyTimeout(time.Millisecond)).Start(ctx, "fails")
	if err == nil {
		t.Fatal("start with a 1ms ready bound succeeded")
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 0 {
		t.Fatalf("failed start left %d entries in %s: %v", len(entries), parent, entries[0].Name())
	}
}

func must(t *testing.T, what string, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
