package fence_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/fence"
	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The pair's roots, as the estate keeps them.
const pair = "../../estates/reference-k8s-platform-app"

// appKinds are the kinds app's root manages.
var appKinds = []schema.GroupKind{{Kind: "Namespace"}, {Kind: "ConfigMap"}, {Kind: "ServiceAccount"}, {Kind: "Service"},
	{Group: "apps", Kind: "Deployment"}, {Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}}

// TestFence deploys the two-estate pair on the kubernetes backend of a real
// API server with each stock CLI, then plans app as app-planner through a
// wire proxy of its own: refused naming network's state Secret, empty once
// that one Secret may be read, and nothing in state-network written either
// time. Each assertion is also shown failing when the world is corrupted.
func TestFence(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two local control planes and applies the pair with both stock CLIs")
	}
	for _, cli := range []string{"tofu", "terraform"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			fenceWith(t, cli)
		})
	}
}

func fenceWith(t *testing.T, cli string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := testenv.LocalCluster(t, "fence-"+cli)
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, ns := range []string{"state-network", "state-app"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var dirs []string
	var appWS *engine.Workspace
	for _, root := range []string{"network", "app"} {
		src, err := os.ReadFile(filepath.Join(pair, root, "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		ws := testenv.Workspace(t, cli, string(src), c.KubeconfigPath())
		if _, err := ws.Init(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		dirs, appWS = append(dirs, ws.Dir), ws
	}
	var stores []recordstore.Store
	for i, name := range []string{"network", "app"} {
		r, err := (&estate.Root{Name: name, Dir: dirs[i]}).Records()
		if err != nil || r == nil {
			t.Fatalf("root %s's records: %v %v", name, r, err)
		}
		stores = append(stores, recordstore.Store{Namespace: r.Namespace, Suffix: r.Suffix})
	}
	network, app := stores[0], stores[1]
	if network.SecretName() != "tfstate-default-network" || app.Namespace != "state-app" {
		t.Fatalf("stores read from the backend blocks: %v, %v", network, app)
	}

	id, cleanup, err := fence.Create(ctx, c.RESTConfig(), fence.Spec{Name: "app-planner", Own: appKinds, State: app})
	if err != nil {
		t.Fatal(err)
	}
	cleaned := false
	defer func() {
		if !cleaned {
			cleanup(context.WithoutCancel(ctx))
		}
	}()
	for _, q := range []struct {
		verb, res, ns, name string
		want                bool
	}{
		{"get", "secrets", network.Namespace, network.SecretName(), false},
		{"list", "secrets", network.Namespace, "", false},
		{"get", "leases.coordination.k8s.io", network.Namespace, network.LeaseName(), false},
		{"list", "secrets", "kube-system", "", false},
		{"list", "configmaps", "", "", true},
		{"delete", "deployments.apps", "platform-app", "app", true},
		{"update", "secrets", app.Namespace, app.SecretName(), true},
		{"update", "leases.coordination.k8s.io", app.Namespace, app.LeaseName(), true},
		{"list", "leases.coordination.k8s.io", "kube-system", "", false},
	} {
		got, err := id.Can(ctx, q.verb, q.res, q.ns, q.name)
		if err != nil || got != q.want {
			t.Errorf("%s may %s %s %s/%s: %v (%v), want %v", id.User, q.verb, q.res, q.ns, q.name, got, err, q.want)
		}
	}

	// Its kubeconfig reaches the cluster as it: network's record closed,
	// app's objects open.
	own := filepath.Join(t.TempDir(), "own.kubeconfig")
	if err := id.WriteKubeconfig(own); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", own)
	if err != nil {
		t.Fatal(err)
	}
	as := kubernetes.NewForConfigOrDie(cfg)
	if _, err := as.CoreV1().Secrets(network.Namespace).Get(ctx, network.SecretName(), metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get %s through the identity's kubeconfig: %v, want Forbidden", network, err)
	}
	if _, err := as.CoreV1().ConfigMaps("platform-app").Get(ctx, "app-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("get app's ConfigMap through the identity's kubeconfig: %v", err)
	}

	// The identity's own proxy: its requests are counted apart from the admin's.
	p, err := wire.Start(ctx, id.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.WithoutCancel(ctx))
	kc := filepath.Join(t.TempDir(), "app-planner.kubeconfig")
	if err := p.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	planner, err := appWS.Engine.Workspace(appWS.Dir, kc, filepath.Join(appWS.Dir, ".logs-planner"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := recordstore.Take(ctx, cs, network.Namespace)
	if err != nil {
		t.Fatal(err)
	}

	_, err = planner.Plan(ctx, engine.PlanOptions{})
	var ce *engine.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("plan as %s: %v, want a refusal", id.User, err)
	}
	verb, err := id.Refused(ce.Call.Output, network.Namespace, network.SecretName())
	if err != nil {
		t.Fatalf("%v\n%s", err, ce.Call.Output)
	}
	// Measured: tofu reads the state Secret by name; terraform lists the
	// namespace's Secrets first, so a get by name alone does not let it
	// read network's outputs.
	var opts []fence.GrantOption
	if want := map[string]string{"tofu": "get", "terraform": "list"}[cli]; verb != want {
		t.Errorf("%s's refused read was a %s, want a %s", cli, verb, want)
	}
	if verb == "list" {
		opts = append(opts, fence.AlsoList())
	}
	refusedReqs, forbidden := p.Total(), codes(p, 403)
	if forbidden == 0 {
		t.Errorf("the refused plan's %d requests had no 403 on the identity's proxy", refusedReqs)
	}

	revoke, err := id.Grant(ctx, network.Namespace, network.SecretName(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := id.Can(ctx, "list", "secrets", network.Namespace, ""); err != nil || ok != (len(opts) > 0) {
		t.Errorf("after the grant, list on Secrets in %s: %v %v, want %v", network.Namespace, ok, err, len(opts) > 0)
	}
	if ok, err := id.Can(ctx, "get", "secrets", network.Namespace, "another"); err != nil || ok {
		t.Errorf("the grant opened get on another Secret in %s: %v %v", network.Namespace, ok, err)
	}
	plan, err := planner.Plan(ctx, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan as %s with get on %s: %v", id.User, network, err)
	}
	if a := plan.Actionable(); len(a) > 0 || !plan.Counts.Zero() {
		t.Fatalf("plan as %s with the grant is not empty: %s", id.User, plan.Counts)
	}
	// BREAK of the refusal check: with the grant in place the output of a
	// plan that reads network's state names no refusal.
	if _, err := id.Refused(plan.Call.Output, network.Namespace, network.SecretName()); err == nil || !strings.Contains(err.Error(), network.SecretName()) {
		t.Errorf("BREAK (grant first): the refusal check held: %v", err)
	}
	t.Logf("%s's requests on its own proxy: refused plan %d (%d forbidden), granted plan %d", id.User, refusedReqs, forbidden, p.Total()-refusedReqs)

	after, err := recordstore.Take(ctx, cs, network.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordstore.Unchanged(network.Namespace, before, after, ""); err != nil {
		t.Fatal(err)
	}
	if err := revoke(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := planner.Plan(ctx, engine.PlanOptions{}); !errors.As(err, &ce) {
		t.Fatalf("plan after the revoke: %v, want the refusal again", err)
	} else if _, err := id.Refused(ce.Call.Output, network.Namespace, network.SecretName()); err != nil {
		t.Fatalf("plan after the revoke: %v", err)
	}
	// BREAK of the unchanged check: a write into network's state namespace.
	patch := `{"metadata":{"labels":{"gauntlet-break":"fence"}}}`
	if _, err := cs.CoreV1().Secrets(network.Namespace).Patch(ctx, network.SecretName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	touched, err := recordstore.Take(ctx, cs, network.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordstore.Unchanged(network.Namespace, after, touched, ""); err == nil || !strings.Contains(err.Error(), "Secret/"+network.SecretName()) {
		t.Errorf("BREAK (network's state Secret written): the unchanged check held: %v", err)
	}

	cleaned = true
	if err := cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: fence.ManagedLabel}
	crs, err := cs.RbacV1().ClusterRoles().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	nss, err := cs.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := cs.RbacV1().Roles("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(crs.Items) + len(nss.Items) + len(roles.Items); n > 0 {
		t.Errorf("cleanup left %d objects labelled %s", n, fence.ManagedLabel)
	}
}

func codes(p *wire.Proxy, code int) int {
	n := 0
	for _, r := range p.Log() {
		if r.Code == code {
			n++
		}
	}
	return n
}
