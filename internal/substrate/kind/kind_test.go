package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/docker"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
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
	if plan.NodeImage != want || !strings.Contains(plan.NodeImage, "@sha256:") || plan.Built {
		t.Errorf("node image %q (built %v), want the pinned %q", plan.NodeImage, plan.Built, want)
	}
	if plan.Kubeconfig != filepath.Join("/run/x", "subject.kubeconfig") {
		t.Errorf("kubeconfig %q is not in the run's directory", plan.Kubeconfig)
	}
	if plan.ClusterName != "gauntlet-subject" {
		t.Errorf("cluster name %q", plan.ClusterName)
	}
	if strings.Contains(plan.Config, "failCgroupV1") || strings.Contains(plan.Config, "imageRepository") {
		t.Errorf("a cgroup v2 host with a published image got patches:\n%s", plan.Config)
	}
}

func TestPlanDefaultsAndRefusals(t *testing.T) {
	p := pins(t)
	plan, err := New(p, WithCgroupV1(true)).Plan("oracle")
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := p.NodeImage(""); plan.NodeImage != first || !plan.Built {
		t.Errorf("default image %q (built %v), want the first pinned %q, gauntlet's own", plan.NodeImage, plan.Built, first)
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

// TestConfigPointsKubeadmAtThePreloadedImages parses the kind config of
// the self-built image: one node, and kubeadm told the repository and the
// etcd and CoreDNS tags the node carries.
func TestConfigPointsKubeadmAtThePreloadedImages(t *testing.T) {
	p := pins(t)
	plan, err := New(p, WithCgroupV1(true)).Plan("subject")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Nodes   []map[string]any `json:"nodes"`
		Patches []string         `json:"kubeadmConfigPatches"`
	}
	if err := yaml.Unmarshal([]byte(plan.Config), &cfg); err != nil {
		t.Fatalf("config is not YAML: %v\n%s", err, plan.Config)
	}
	if len(cfg.Nodes) != 1 || len(cfg.Patches) != 2 {
		t.Fatalf("want one node and two patches:\n%s", plan.Config)
	}
	var cc struct {
		Kind            string `json:"kind"`
		ImageRepository string `json:"imageRepository"`
		Etcd            struct {
			Local struct {
				ImageTag string `json:"imageTag"`
			} `json:"local"`
		} `json:"etcd"`
		DNS struct {
			ImageTag string `json:"imageTag"`
		} `json:"dns"`
	}
	if err := yaml.Unmarshal([]byte(cfg.Patches[1]), &cc); err != nil {
		t.Fatal(err)
	}
	nb := p.Kind.NodeBuild
	if cc.Kind != "ClusterConfiguration" || cc.ImageRepository != nb.ImageRepository ||
		cc.Etcd.Local.ImageTag != nb.Image("etcd").Tag || cc.DNS.ImageTag != nb.Image("coredns").Tag {
		t.Errorf("ClusterConfiguration patch %+v does not name the preloaded images of %+v", cc, nb.Images)
	}
}

// TestKindDeltasNameOnlyPreloadedImages: an estate delta for kind that
// names an image of the node build's repository must name one the node
// image preloads, or its pod could never start offline.
func TestKindDeltasNameOnlyPreloadedImages(t *testing.T) {
	p := pins(t)
	nb := p.Kind.NodeBuild
	refs := map[string]bool{}
	for _, img := range nb.Images {
		refs[nb.Ref(img)] = true
	}
	root := filepath.Join("..", "..", "..", "estates")
	names, err := estate.List(root)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(regexp.QuoteMeta(nb.ImageRepository) + `/[^"\s]+`)
	found := 0
	for _, n := range names {
		spec, err := estate.Load(root, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range spec.Deltas {
			if len(d.Substrates) > 0 && !slices.Contains(d.Substrates, "kind") {
				continue
			}
			for _, ref := range re.FindAllString(d.New, -1) {
				found++
				if !refs[ref] {
					t.Errorf("estate %s delta %s names %s, which the node image does not preload (%v)", n, d.Name, ref, refs)
				}
			}
		}
	}
	if found == 0 {
		t.Errorf("no estate delta names a preloaded image: the check above proved nothing")
	}
}

// TestKindClusterForReal creates a cluster from gauntlet's own node image
// on a Docker engine, rolls out a Deployment, serves an aggregated API
// from a real pod (metrics-server, preloaded in the node) and deletes the
// cluster, checking that no container, network or mount is left. It
// builds the node image when it is not built yet (about a minute with a
// warm toolchain, root for debootstrap), so it runs only when asked:
// GAUNTLET_KIND=1.
func TestKindClusterForReal(t *testing.T) {
	if os.Getenv("GAUNTLET_KIND") != "1" {
		t.Skip("skipped, not passed: set GAUNTLET_KIND=1 to run the kind e2e (needs a Docker engine or root to start one, and builds the ~1 GB node image on first use)")
	}
	p := pins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	e, err := docker.Ensure(ctx, docker.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Skipf("skipped, not passed: no Docker engine can run here: %v", err)
	}
	defer e.Stop(context.Background())
	_, netErr := e.Output(ctx, "network", "inspect", kindNetwork)
	dataRoot, err := e.Output(ctx, "info", "--format", "{{.DockerRootDir}}")
	if err != nil {
		t.Fatal(err)
	}
	mountsBefore, volumesBefore := mountsUnder(t, dataRoot), volumes(ctx, t, e)
	prov := New(p, WithDir(t.TempDir()), WithLogger(testenv.Logger(t)), WithEngine(e))
	c, err := prov.Start(ctx, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop(context.Background())
		}
	}()
	cfg := c.RESTConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	nb := p.Kind.NodeBuild
	t.Run("deployment rolls out", func(t *testing.T) {
		start := time.Now()
		if err := rollout(ctx, cs, "default", "probe", nb.Ref(nb.Image("pause")), nil, nil); err != nil {
			t.Fatal(err)
		}
		t.Logf("rolled out in %s", time.Since(start).Round(100*time.Millisecond))
	})
	t.Run("aggregated API answers", func(t *testing.T) {
		start := time.Now()
		if err := aggregatedAPI(ctx, cfg, cs, nb.Ref(nb.Image("metrics-server"))); err != nil {
			t.Fatal(err)
		}
		t.Logf("/apis/metrics.k8s.io/v1beta1 answered %s after the apply", time.Since(start).Round(100*time.Millisecond))
	})
	nodes, _ := e.Output(ctx, "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster=gauntlet-e2e")
	if nodes == "" || slices.Equal(mountsUnder(t, dataRoot), mountsBefore) || slices.Equal(volumes(ctx, t, e), volumesBefore) {
		t.Fatal("the running cluster shows no labelled container, mount or volume: the leak checks below would prove nothing")
	}
	stopped = true
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if left, _ := e.Output(ctx, "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster=gauntlet-e2e"); left != "" {
		t.Errorf("containers left after Stop: %s", left)
	}
	if netErr != nil {
		if _, err := e.Output(ctx, "network", "inspect", kindNetwork); err == nil {
			t.Errorf("the %s network the cluster made is left after Stop", kindNetwork)
		}
	}
	if after := mountsUnder(t, dataRoot); !slices.Equal(after, mountsBefore) {
		t.Errorf("mounts under %s after Stop differ from before Start:\nbefore %v\nafter  %v", dataRoot, mountsBefore, after)
	}
	if after := volumes(ctx, t, e); !slices.Equal(after, volumesBefore) {
		t.Errorf("volumes after Stop %v, before Start %v: the node's /var volume is left", after, volumesBefore)
	}
}

// mountsUnder lists the host's mount points below dir.
func mountsUnder(t *testing.T, dir string) []string {
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	slices.Sort(out)
	return out
}

func volumes(ctx context.Context, t *testing.T, e *docker.Engine) []string {
	out, err := e.Output(ctx, "volume", "ls", "-q")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Fields(out)
	slices.Sort(v)
	return v
}

// rollout creates a Deployment of one replica and waits until it is
// available.
func rollout(ctx context.Context, cs kubernetes.Interface, ns, name, image string, args []string, mut func(*appsv1.Deployment)) error {
	one := int32(1)
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: name, Image: image, Args: args, ImagePullPolicy: corev1.PullNever,
				}}},
			},
		},
	}
	if mut != nil {
		mut(d)
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	return poll(ctx, 3*time.Minute, func() error {
		got, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !available(got) {
			return fmt.Errorf("deployment %s/%s: %d/%d available", ns, name, got.Status.AvailableReplicas, one)
		}
		return nil
	})
}

// aggregatedAPI runs metrics-server behind an APIService and waits until
// the aggregated API reports Available=True and answers discovery.
func aggregatedAPI(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, image string) error {
	const ns, name = "kube-system", "metrics-server"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, b := range []struct{ role, kind string }{{"system:auth-delegator", "ClusterRoleBinding"}, {"extension-apiserver-authentication-reader", "RoleBinding"}, {"cluster-admin", "ClusterRoleBinding"}} {
		subj := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
		var err error
		if b.kind == "RoleBinding" {
			_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + strings.ReplaceAll(b.role, ":", "-")},
				RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: b.role}, Subjects: subj}, metav1.CreateOptions{})
		} else {
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + strings.ReplaceAll(b.role, ":", "-")},
				RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: b.role}, Subjects: subj}, metav1.CreateOptions{})
		}
		if err != nil {
			return err
		}
	}
	args := []string{"--cert-dir=/tmp", "--secure-port=10250", "--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port", "--kubelet-insecure-tls"}
	if err := rollout(ctx, cs, ns, name, image, args, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.ServiceAccountName = name
		d.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "https", ContainerPort: 10250}}
	}); err != nil {
		return err
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromString("https")}}}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	apis := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	api := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{
			"service": map[string]any{"namespace": ns, "name": name}, "group": "metrics.k8s.io", "version": "v1beta1",
			"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	if _, err := apis.Create(ctx, api, metav1.CreateOptions{}); err != nil {
		return err
	}
	return poll(ctx, 3*time.Minute, func() error {
		a, err := apis.Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(a.Object, "status", "conditions")
		ok := false
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Available" {
				if m["status"] != "True" {
					return fmt.Errorf("APIService Available=%v (%v)", m["status"], m["reason"])
				}
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("APIService has no Available condition yet")
		}
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1").DoRaw(ctx)
		if err != nil {
			return err
		}
		if !strings.Contains(string(raw), `"nodes"`) {
			return fmt.Errorf("/apis/metrics.k8s.io/v1beta1 lists no nodes resource: %s", raw)
		}
		return nil
	})
}

func poll(ctx context.Context, bound time.Duration, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", bound, err)
		case <-time.After(time.Second):
		}
	}
}
