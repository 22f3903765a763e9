package stage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// handoffPairDir holds the two roots of the estate pair the hand-off is for.
var handoffPairDir = filepath.Join("..", "..", "..", "estates", "reference-k8s-platform-app")

// TestHandoffOnThePair runs the hand-off stage on the pair's own roots
// (network, app), both on the kubernetes backend, on two real local
// control planes: the engine under test (tofu) moves
// kubernetes_manifest.handoff from app to network and is SIGKILLed between
// the two applies, stock terraform moves it with state rm and import.
// Every check must pass, each proved by its BREAK; afterwards both roots
// are destroyed as the teardown does, app first (without the object). Sabotaged (every corruption
// skipped), the same stage must have no BREAK prove anything.
func TestHandoffOnThePair(t *testing.T) {
	if testing.Short() {
		t.Skip("two real clusters and both CLIs twice, about two minutes: not with -short")
	}
	testenv.SecondTier(t, "the pair's estate target (//estates:reference-k8s-platform-app, in CI's smoke set) runs this stage on the same roots, clear and sabotaged")
	t.Run("clear", func(t *testing.T) { handoffOnThePair(t, false) })
	t.Run("sabotaged", func(t *testing.T) { handoffOnThePair(t, true) })
}

func handoffOnThePair(t *testing.T, sabotage bool) {
	tc := testenv.Toolchain(t, "tofu", "terraform", "terraform-provider-kubernetes", "terraform-provider-random")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	subjectEngine, err := engine.New(ctx, tc.Path("tofu"), tc.CLIConfig)
	if err != nil {
		t.Fatal(err)
	}
	stockEngine, err := engine.New(ctx, tc.Path("terraform"), tc.CLIConfig)
	if err != nil {
		t.Fatal(err)
	}
	sides := []*Side{{Name: "subject"}, {Name: "oracle"}}
	var wg sync.WaitGroup
	for _, sd := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// With pods (kwok): the Deployment in app waits for its rollout.
			sd.Cluster = testenv.LocalCluster(t, "handoff-"+sd.Name)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	r := &Run{Spec: &estate.Spec{Handoff: &estate.Handoff{Address: "kubernetes_manifest.handoff", From: "app", To: "network"}},
		Subject: sides[0], Oracle: sides[1], Log: testenv.Logger(t), Sabotage: sabotage}
	start := time.Now()
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		return handoffPairSide(ctx, t, sd, subjectEngine, stockEngine)
	}); err != nil {
		t.Fatal(err)
	}
	// Cold deploy's objects: the oracle's stock state (the subject's app
	// is tofu's now).
	st, err := sides[1].Stock.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Objects, err = objectsFromState(st); err == nil {
		r.Objects, err = sides[0].settle(r.Objects)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the pair applied on both clusters in %s (%d objects in app)", time.Since(start).Round(time.Second), len(r.Objects))

	rec := NewRecorder()
	start = time.Now()
	runErr := handoff().Run(ctx, r, rec)
	var sr result.Stage
	rec.Fill(&sr)
	t.Logf("hand-off in %s: %s", time.Since(start).Round(time.Second), sr.Detail)
	if runErr != nil {
		t.Fatalf("the stage could not finish: %v", runErr)
	}
	if sabotage {
		for _, b := range sr.Breaks {
			if b.Outcome == result.Proved {
				t.Errorf("sabotaged, BREAK %s still proved on %s (its check fails with no corruption): %s", b.Name, b.Side, b.Detail)
			}
		}
		if len(sr.Breaks) == 0 {
			t.Error("sabotaged, the stage ran no BREAK")
		}
		return
	}
	for _, c := range sr.Checks {
		if c.Verdict != result.Pass {
			t.Errorf("check %q: %s: %s", c.Name, c.Verdict, c.Detail)
		}
	}
	for _, b := range sr.Breaks {
		if b.Side == "subject" && b.Outcome != result.Proved {
			t.Errorf("BREAK %s on %s: %s: %s", b.Name, b.Side, b.Outcome, b.Detail)
		}
		t.Logf("BREAK %s (%s) on %s: %s", b.Name, b.Corruption, b.Side, b.Detail)
	}
	for _, want := range []string{hoPosition, hoHeld, hoCleared, hoOnly, hoUID, hoEmpty} {
		if !slices.ContainsFunc(sr.Checks, func(c result.Check) bool { return c.Name == want }) {
			t.Errorf("check %q was not recorded", want)
		}
	}
	if slices.ContainsFunc(r.Objects, func(o Object) bool { return o.Address == "kubernetes_manifest.handoff" }) {
		t.Errorf("r.Objects still holds the handed-off object: the teardown of app would expect to destroy it")
	}

	// What the teardown does next: app, then network, each by the side's
	// engine; network's destroy takes the handed-off object with it.
	start = time.Now()
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Destroy: true})
		if err != nil {
			return err
		}
		if strings.Contains(a.Call.Output, "kubernetes_manifest.handoff") {
			t.Errorf("%s: app's destroy touched the handed-off object:\n%s", sd.Name, a.Call.Output)
		}
		if _, err := sd.otherWorkspace(sd.Others[0]).Apply(ctx, engine.ApplyOptions{Destroy: true}); err != nil {
			return err
		}
		u, err := sd.Get(ctx, estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: "platform-network", Name: "app-upstream"})
		if err == nil && u != nil && u.GetDeletionTimestamp() == nil {
			t.Errorf("%s: network's destroy left ConfigMap platform-network/app-upstream", sd.Name)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("both roots destroyed on both clusters in %s", time.Since(start).Round(time.Second))
}

// handoffPairSide makes one side as a run would after migrate: the proxy, both
// roots applied by stock on the kubernetes backend, and the side's engine
// (tofu on the subject, terraform on the oracle) in both.
func handoffPairSide(ctx context.Context, t *testing.T, sd *Side, subject, stock *engine.Engine) error {
	p, err := wire.Start(ctx, sd.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	sd.Proxy = p
	dc, err := discovery.NewDiscoveryClientForConfig(sd.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	sd.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	if sd.Dynamic, err = dynamic.NewForConfig(sd.Cluster.RESTConfig()); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(sd.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	for _, ns := range []string{"state-network", "state-app"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "engine.kubeconfig")
	if err := p.WriteKubeconfig(kc); err != nil {
		return err
	}
	records := map[string]*estate.Records{"network": {Namespace: "state-network", Suffix: "network"}, "app": {Namespace: "state-app", Suffix: "app"}}
	engines := map[string]*engine.Workspace{}
	for _, name := range []string{"network", "app"} {
		b, err := os.ReadFile(filepath.Join(handoffPairDir, name, "main.tf"))
		if err != nil {
			return err
		}
		root := &estate.Root{Name: name, Dir: filepath.Join(dir, "roots", name), Main: "main.tf"}
		if err := os.MkdirAll(root.Dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root.Dir, "main.tf"), b, 0o644); err != nil {
			return err
		}
		ws, err := stock.Workspace(root.Dir, kc, filepath.Join(dir, "logs", name))
		if err != nil {
			return err
		}
		if _, err := ws.Init(ctx); err != nil {
			return err
		}
		if _, err := ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
			return err
		}
		// The side's engine takes the root over, as migrate leaves it: the
		// records stay where stock wrote them.
		engines[name] = ws
		if sd.Name == "subject" {
			if engines[name], err = subject.Workspace(root.Dir, kc, filepath.Join(dir, "logs", name)); err != nil {
				return err
			}
		}
		if name == "network" {
			sd.Others = append(sd.Others, &OtherRoot{Root: root, Stock: ws, Engine: engines[name], Records: records[name], Before: true})
			continue
		}
		sd.Root, sd.Stock, sd.Engine, sd.Records = root, ws, engines[name], records[name]
	}
	if sd.Name == "subject" {
		// After stock's init on the same backend a plain init asks to
		// migrate: the records stay, so -reconfigure.
		for _, ws := range engines {
			if _, err := ws.Run(ctx, []string{"init", "-input=false", "-no-color", "-reconfigure"}); err != nil {
				return err
			}
		}
	}
	sd.mu.Lock()
	sd.recordsLive = true
	sd.mu.Unlock()
	return nil
}

// A hand-off that fails part way leaves both roots' files as they were:
// the block taken from one root is back, the one adopted by the other is
// gone, and so is gauntlet's hand-off file.
func TestHandoffRestoreUndoesAHalfMove(t *testing.T) {
	dir := t.TempDir()
	var roots []*estate.Root
	for name, body := range map[string]string{
		"from": "resource \"kubernetes_config_map_v1\" \"moved\" {\n  metadata {\n    name = \"moved\"\n  }\n}\n",
		"to":   "resource \"kubernetes_namespace_v1\" \"ns\" {\n  metadata {\n    name = \"ns\"\n  }\n}\n",
	} {
		root := &estate.Root{Name: name, Dir: filepath.Join(dir, name), Main: "main.tf"}
		if err := os.MkdirAll(root.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root.Dir, "main.tf"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	from, to := roots[0], roots[1]
	if from.Name != "from" {
		from, to = to, from
	}
	before := map[string]estate.Snapshot{}
	for _, rt := range roots {
		s, err := rt.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		before[rt.Name] = s
	}
	snaps, err := snapshotRoots(from, to)
	if err != nil {
		t.Fatal(err)
	}
	hs := &handoffSide{sd: &Side{Name: "subject"}, from: &handoffRoot{name: "from", root: from}, to: &handoffRoot{name: "to", root: to}, snaps: snaps}
	// Half a move: the block is taken and adopted, the removed block is
	// written, then the stage fails.
	block, err := from.TakeResource("kubernetes_config_map_v1.moved")
	if err != nil {
		t.Fatal(err)
	}
	if err := to.AdoptResource("kubernetes_config_map_v1.moved", block); err != nil {
		t.Fatal(err)
	}
	if err := from.WriteFile(handoffFile, "removed {}\n"); err != nil {
		t.Fatal(err)
	}
	if err := hs.restore(); err != nil {
		t.Fatal(err)
	}
	for _, rt := range roots {
		after, err := rt.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before[rt.Name], after); diff != "" {
			t.Errorf("root %s after restore (-before +after):\n%s", rt.Name, diff)
		}
	}
}
