package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestReattachedProvidersPlanAlike runs the small root's life on both
// CLIs with their providers reattached: the same plans as with their own
// (2 to add, then exactly the drifted update), every call but init and a
// watched call reaching one plugin process started once, which Close
// ends. First it shows the CLIs honour TF_REATTACH_PROVIDERS at all: a
// plan sent to a plugin that does not listen fails, so a reattached call
// cannot quietly start its own.
func TestReattachedProvidersPlanAlike(t *testing.T) {
	testenv.SecondTier(t, "reattached providers are an option, off by default: the first tier's runs start their providers per call, as in production")
	c := testenv.LocalCluster(t, "reattach", local.WithPods(false))
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, cli := range []string{"tofu", "terraform"} {
		t.Run(cli, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ws := testenv.Workspace(t, cli, strings.ReplaceAll(smallRoot, "small-", "reattach-"), c.KubeconfigPath())
			if _, err := ws.Init(ctx); err != nil {
				t.Fatal(err)
			}
			hosts, _ := filepath.Glob(filepath.Join(ws.Dir, ".terraform", "providers", "*", "hashicorp", "kubernetes"))
			if len(hosts) != 1 {
				t.Fatalf("init installed the kubernetes provider under %v", hosts)
			}
			addr := strings.TrimPrefix(filepath.ToSlash(hosts[0]), filepath.ToSlash(filepath.Join(ws.Dir, ".terraform", "providers"))+"/")
			// A live stand-in pid: a CLI that gives up on a plugin may
			// kill the pid it was told the plugin has.
			standIn := exec.Command("sleep", "300")
			if err := standIn.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { standIn.Process.Kill(); standIn.Wait() }()
			dead := fmt.Sprintf(`{%q:{"Protocol":"grpc","ProtocolVersion":6,"Pid":%d,"Test":true,"Addr":{"Network":"unix","String":%q}}}`,
				addr, standIn.Process.Pid, filepath.Join(t.TempDir(), "nobody-listens"))
			_, err := ws.Plan(ctx, engine.PlanOptions{}, engine.WithEnv("TF_REATTACH_PROVIDERS="+dead))
			if err == nil {
				t.Fatalf("%s planned with its kubernetes provider reattached to a socket nobody listens on: it ignores TF_REATTACH_PROVIDERS", cli)
			}
			var ce *engine.CallError
			if !errors.As(err, &ce) {
				t.Fatalf("the plan reattached to a socket nobody listens on: %v", err)
			}
			// go-plugin says a reattach it could not dial as the
			// process not found (and kills the pid), or names the socket.
			said := strings.ToLower(strings.Join(strings.Fields(ce.Call.Output), " "))
			if !strings.Contains(said, "nobody-listens") && !strings.Contains(said, "reattachment process not found") {
				t.Fatalf("the plan reattached to a socket nobody listens on failed, but not for the reattach: %v", err)
			}

			ws.Engine.ReattachProviders()
			t.Cleanup(func() { ws.Engine.Close() })
			p, err := ws.Plan(ctx, engine.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if (p.Counts != engine.Counts{Add: 2}) || len(p.Actionable()) != 2 {
				t.Fatalf("first plan: %s; want exactly 2 to add", p.Counts)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{PlanFile: p.File}); err != nil {
				t.Fatal(err)
			}
			patch := []byte(`{"data":{"colour":"red"}}`)
			if _, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "reattach-cfg", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			p, err = ws.Plan(ctx, engine.PlanOptions{}, engine.OnStart(func(*os.Process) {}))
			if err != nil {
				t.Fatal(err)
			}
			acts := p.Actionable()
			if (p.Counts != engine.Counts{Change: 1}) || len(acts) != 1 || acts[0].Address != "kubernetes_config_map_v1.cfg" {
				t.Fatalf("drift plan: %s, %+v; want exactly 1 update at kubernetes_config_map_v1.cfg", p.Counts, acts)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{Destroy: true}); err != nil {
				t.Fatal(err)
			}
			if got := ws.Engine.Reattached(); len(got) != 1 || got[0] != "kubernetes" {
				t.Errorf("reattached %v, want [kubernetes]", got)
			}
			// init and the dead-socket plan came before; the watched
			// drift plan starts its own (its show does not).
			var reattached, own []string
			for _, call := range ws.Calls() {
				b, err := os.ReadFile(call.Log)
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Base(call.Log)
				if strings.Contains(string(b), "# providers reattached: kubernetes\n") {
					reattached = append(reattached, name)
				} else {
					own = append(own, name)
				}
			}
			if len(reattached) < 4 || len(own) != 3 {
				t.Errorf("calls reattached %v, with their own providers %v: want init, the dead-socket plan and the watched plan with their own, every other call reattached", reattached, own)
			}
			logs, _ := filepath.Glob(filepath.Join(ws.LogDir, "provider-kubernetes-debug-*.log"))
			if len(logs) != 1 {
				t.Errorf("%d kubernetes plugin processes started, want 1 for every reattached call: %v", len(logs), logs)
			}
			if err := ws.Engine.Close(); err != nil {
				t.Fatal(err)
			}
			call, err := ws.Run(ctx, []string{"state", "list"})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(call.Log); strings.Contains(string(b), "reattached") {
				t.Errorf("a call after Close reached a reattached plugin:\n%s", b)
			}
		})
	}
}
