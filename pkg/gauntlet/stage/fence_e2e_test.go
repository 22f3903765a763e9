package stage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// TestFenceStage runs the fence stage on the two-estate pair deployed on
// the kubernetes backend of two local control planes, tofu as the subject
// and terraform as the oracle: it passes with every check proved by its
// BREAK, and with the corruptions skipped (sabotage) every BREAK holds.
// The estate without a fence section is not_run.
func TestFenceStage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two local control planes and applies the pair with both stock CLIs")
	}
	testenv.SecondTier(t, "the pair's estate target (//estates:reference-k8s-platform-app, in CI's smoke set) runs this stage on the same roots, clear and sabotaged; the first tier tests the fence itself (internal/fence)")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	r := &Run{Spec: &estate.Spec{Name: "pair"}, Log: testenv.Logger(t)}
	if err := (fenceStage()).Run(ctx, r, NewRecorder()); err == nil {
		t.Fatal("no fence section: the stage ran")
	} else if why, ok := IsNotApplicable(err); !ok || !strings.Contains(why, "fence section") {
		t.Fatalf("no fence section: %v, want not applicable naming the section", err)
	}
	r.Spec.Fence = &estate.Fence{Identity: "app-planner", Root: "app", Reads: estate.FenceReads{Root: "network"}}
	r.Kinds = []estate.Kind{{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "ServiceAccount"},
		{Version: "v1", Kind: "Service"}, {Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}}
	r.Objects = []Object{{Address: "kubernetes_service_account.app", Type: "kubernetes_service_account",
		Ref: estate.Object{Version: "v1", Kind: "ServiceAccount", Namespace: "platform-app", Name: "app"}}}
	done := make(chan *Side, 2)
	for _, side := range []struct{ name, cli string }{{"subject", "tofu"}, {"oracle", "terraform"}} {
		go func() {
			var sd *Side
			// Sent even when a helper's t.Fatal ends this goroutine.
			defer func() { done <- sd }()
			sd = pairSide(ctx, t, side.name, side.cli)
		}()
	}
	// Both helpers end before a failure ends the test: one still running
	// must not report into a finished test.
	var sides []*Side
	for range 2 {
		sides = append(sides, <-done)
	}
	for _, sd := range sides {
		if sd == nil {
			t.FailNow()
		}
		if sd.Name == "subject" {
			r.Subject = sd
		} else {
			r.Oracle = sd
		}
	}

	for _, sabotage := range []bool{false, true} {
		r.Sabotage = sabotage
		rec := NewRecorder()
		if err := fenceStage().Run(ctx, r, rec); err != nil {
			t.Fatalf("sabotage=%v: %v", sabotage, err)
		}
		var st result.Stage
		rec.Fill(&st)
		t.Logf("sabotage=%v: %s", sabotage, st.Detail)
		if !sabotage {
			if rec.Failed() {
				t.Fatalf("the stage failed: %s", st.Detail)
			}
			for _, c := range st.Checks {
				if c.Verdict != result.Pass {
					t.Errorf("check %q: %s", c.Name, c.Verdict)
				}
			}
			for _, k := range []string{"subject.fence_refused_requests", "oracle.fence_granted_requests"} {
				if st.Figures[k] == 0 {
					t.Errorf("figure %s is 0: the identity's wire counted nothing", k)
				}
			}
			continue
		}
		for _, b := range st.Breaks {
			if b.Outcome != result.Held {
				t.Errorf("sabotaged BREAK %s on %s: %s (%s), want held", b.Name, b.Side, b.Outcome, b.Detail)
			}
		}
	}
	// Nothing of the identity is left on either cluster.
	for _, sd := range r.Sides() {
		cs := kubernetes.NewForConfigOrDie(sd.Cluster.RESTConfig())
		nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "gauntlet.dev/fence"})
		if err != nil {
			t.Fatal(err)
		}
		crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: "gauntlet.dev/fence"})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(nss.Items) + len(crbs.Items); n > 0 {
			t.Errorf("%s: %d objects of the fence left behind", sd.Name, n)
		}
	}
}

// pairSide starts a local control plane and applies network then app on
// the kubernetes backend with cli, returning the side (nil after t.Error).
func pairSide(ctx context.Context, t *testing.T, name, cli string) *Side {
	c := testenv.LocalCluster(t, "fence-"+name)
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, ns := range []string{"state-network", "state-app"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Error(err)
			return nil
		}
	}
	sd := &Side{Name: name, Cluster: c}
	for _, root := range []string{"network", "app"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "..", "estates", "reference-k8s-platform-app", root, "main.tf"))
		if err != nil {
			t.Error(err)
			return nil
		}
		ws := testenv.Workspace(t, cli, string(src), c.KubeconfigPath())
		if _, err := ws.Init(ctx); err != nil {
			t.Error(err)
			return nil
		}
		if _, err := ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
			t.Error(err)
			return nil
		}
		er := &estate.Root{Name: root, Dir: ws.Dir}
		records, err := er.Records()
		if err != nil || records == nil {
			t.Errorf("root %s's records: %v %v", root, records, err)
			return nil
		}
		if root == "network" {
			sd.Others = append(sd.Others, &OtherRoot{Root: er, Stock: ws, Engine: ws, Before: true, Records: records})
			continue
		}
		sd.Root, sd.Engine, sd.Stock, sd.Records = er, ws, ws, records
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.RESTConfig())
	if err != nil {
		t.Error(err)
		return nil
	}
	sd.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	if sd.Dynamic, err = dynamic.NewForConfig(c.RESTConfig()); err != nil {
		t.Error(err)
		return nil
	}
	return sd
}
