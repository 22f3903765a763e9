package kind

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func pins(t *testing.T) *toolchain.Pins {
	t.Helper()
	p, err := toolchain.DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanPinsTheNodeImageByDigest(t *testing.T) {
	p := pins(t)
	want, _ := p.NodeImage("v1.36.4")
	plan, err := New(p, WithKubernetes("v1.36.4"), WithDir("/run/x"), WithCgroupV1(false)).Plan("subject")
	if err != nil {
		t.Fatal(err)
	}
	if plan.NodeImage != want || !strings.Contains(plan.NodeImage, "@sha256:") {
		t.Errorf("node image %q, want the pinned %q", plan.NodeImage, want)
	}
	if plan.Kubeconfig != filepath.Join("/run/x", "subject.kubeconfig") {
		t.Errorf("kubeconfig %q is not in the run's directory", plan.Kubeconfig)
	}
	if plan.ClusterName != "gauntlet-subject" {
		t.Errorf("cluster name %q", plan.ClusterName)
	}
	if strings.Contains(plan.Config, "failCgroupV1") {
		t.Errorf("cgroup v2 host got the cgroup v1 patch:\n%s", plan.Config)
	}
}

func TestPlanDefaultsAndRefusals(t *testing.T) {
	p := pins(t)
	plan, err := New(p, WithCgroupV1(true)).Plan("oracle")
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := p.NodeImage(""); plan.NodeImage != first {
		t.Errorf("default image %q, want the first pinned %q", plan.NodeImage, first)
	}
	if !strings.Contains(plan.Config, "failCgroupV1: false") {
		t.Errorf("cgroup v1 host lacks the kubelet patch:\n%s", plan.Config)
	}
	if !strings.HasPrefix(plan.Kubeconfig, plan.Dir) || strings.Contains(plan.Kubeconfig, "/.kube/") {
		t.Errorf("kubeconfig %q must live in the run's dir %q, never ~/.kube", plan.Kubeconfig, plan.Dir)
	}
	if _, err := New(p, WithNodeImage("kindest/node:v1.37.0")).Plan("x"); err == nil || !strings.Contains(err.Error(), "not pinned by digest") {
		t.Errorf("an unpinned image was accepted: %v", err)
	}
	if _, err := New(p, WithKubernetes("v1.20.0")).Plan("x"); err == nil || !strings.Contains(err.Error(), "pinned:") {
		t.Errorf("an unpinned Kubernetes version was accepted: %v", err)
	}
}

// TestKindClusterForReal runs only where a Docker engine answers and the
// pinned node image is present (no image can be pulled offline).
func TestKindClusterForReal(t *testing.T) {
	p := pins(t)
	img, _ := p.NodeImage("")
	if err := dockerAnswers(context.Background(), "docker"); err != nil {
		t.Skipf("skipped, not passed: no Docker engine answers here (%v)", err)
	}
	if exec.Command("docker", "image", "inspect", img).Run() != nil {
		t.Skipf("skipped, not passed: the pinned node image %s is not present and cannot be pulled offline", img)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := New(p, WithDir(t.TempDir())).Start(ctx, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
