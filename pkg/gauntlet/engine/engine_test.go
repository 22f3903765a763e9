package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
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

const smallRoot = `terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
}

provider "kubernetes" {}

resource "kubernetes_config_map_v1" "cfg" {
  metadata {
    name      = "small-cfg"
    namespace = "default"
  }
  data = {
    colour = "blue"
  }
}

resource "kubernetes_secret_v1" "sec" {
  metadata {
    name      = "small-sec"
    namespace = "default"
  }
  data = {
    password = "hunter2"
  }
}
`

// TestPlanApplyDriftOnBothCLIs applies a ConfigMap and a Secret, tampers
// the ConfigMap out of band, and expects exactly one update at its address.
func TestPlanApplyDriftOnBothCLIs(t *testing.T) {
	testenv.SecondTier(t, "the smoke estate plans, applies and drifts on both CLIs, each BREAK predicting its exact finding")
	c := testenv.LocalCluster(t, "engine", local.WithPods(false))
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, cli := range []string{"tofu", "terraform"} {
		t.Run(cli, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ws := testenv.Workspace(t, cli, smallRoot, c.KubeconfigPath())
			if ws.Engine.Profile.Name != cli || !ws.Engine.Profile.Has(engine.ImportBlocks) {
				t.Errorf("profile %+v", ws.Engine.Profile)
			}
			if _, err := ws.Init(ctx); err != nil {
				t.Fatal(err)
			}
			p, err := ws.Plan(ctx, engine.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if (p.Counts != engine.Counts{Add: 2}) || len(p.Actionable()) != 2 {
				t.Fatalf("first plan: %s, changes %+v; want exactly 2 to add", p.Counts, p.Changes)
			}
			a, err := ws.Apply(ctx, engine.ApplyOptions{PlanFile: p.File})
			if err != nil {
				t.Fatal(err)
			}
			if a.Added != 2 || a.Changed != 0 || a.Destroyed != 0 {
				t.Fatalf("apply: %s", a)
			}
			patch := []byte(`{"data":{"colour":"red"}}`)
			if _, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "small-cfg", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			p, err = ws.Plan(ctx, engine.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			acts := p.Actionable()
			if (p.Counts != engine.Counts{Change: 1}) || len(acts) != 1 || acts[0].Address != "kubernetes_config_map_v1.cfg" || acts[0].Actions[0] != "update" {
				t.Fatalf("drift plan: %s, %+v; want exactly 1 update at kubernetes_config_map_v1.cfg", p.Counts, acts)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{Destroy: true}); err != nil {
				t.Fatal(err)
			}
			if len(ws.Calls()) < 6 {
				t.Errorf("calls not recorded: %d", len(ws.Calls()))
			}
		})
	}
}

// TestNotATerraformCLI gives New a binary that is not a Terraform CLI.
func TestNotATerraformCLI(t *testing.T) {
	tc := testenv.Toolchain(t, "terraform-provider-random")
	fake := filepath.Join(t.TempDir(), "notcli")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'hello from something else'\n"), 0o755)
	for _, bin := range []string{fake, "/bin/true", filepath.Join(t.TempDir(), "absent")} {
		_, err := engine.New(context.Background(), bin, tc.CLIConfig)
		if err == nil {
			t.Errorf("%s accepted as an engine", bin)
			continue
		}
		t.Logf("%s: %v", bin, err)
	}
}

// TestRootThatDoesNotParse expects init (or plan) to fail with the log path.
func TestRootThatDoesNotParse(t *testing.T) {
	ws := testenv.Workspace(t, "tofu", "resource \"kubernetes_config_map_v1\" \"x\" {\n  metadata {\n", "/nonexistent")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := ws.Init(ctx)
	if err == nil {
		_, err = ws.Plan(ctx, engine.PlanOptions{})
	}
	if err == nil {
		t.Fatal("a root that does not parse planned")
	}
	if !strings.Contains(err.Error(), "log: ") || !strings.Contains(err.Error(), ws.LogDir) {
		t.Errorf("error does not name the log: %v", err)
	}
	if engine.ExitCode(err) <= 0 {
		t.Errorf("exit code %d", engine.ExitCode(err))
	}
}

// A failed call's log is kept where KeepFailedLogs says and its error
// cites the copy, which outlives the work directory; the error carries
// every error the CLI printed, not its last lines.
func TestFailedCallKeepsItsLogAndEveryError(t *testing.T) {
	ws := testenv.Workspace(t, "tofu", `
resource "kubernetes_config_map_v1" "a" {
  metadata { name = "a" }
  first_bogus = 1
}
resource "kubernetes_config_map_v1" "b" {
  metadata { name = "b" }
  second_bogus = 2
}
resource "kubernetes_config_map_v1" "c" {
  metadata { name = "c" }
  third_bogus = 3
}
`, "/nonexistent")
	kept := filepath.Join(t.TempDir(), "out", "logs", "subject")
	ws.Engine.KeepFailedLogs(kept)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := ws.Init(ctx)
	if err == nil {
		_, err = ws.Validate(ctx)
	}
	if err == nil {
		t.Fatal("a root with three unsupported arguments validated")
	}
	var ce *engine.CallError
	if !errors.As(err, &ce) || filepath.Dir(ce.Call.Log) != kept {
		t.Fatalf("the error does not cite a log under %s: %v", kept, err)
	}
	if err := os.RemoveAll(ws.LogDir); err != nil {
		t.Fatal(err)
	}
	b, rerr := os.ReadFile(ce.Call.Log)
	if rerr != nil || !strings.Contains(string(b), "third_bogus") {
		t.Errorf("the kept log %s: %v\n%s", ce.Call.Log, rerr, b)
	}
	for _, arg := range []string{"first_bogus", "second_bogus", "third_bogus", "log: " + ce.Call.Log} {
		if !strings.Contains(err.Error(), arg) {
			t.Errorf("the error lost %q: %v", arg, err)
		}
	}
}

// TestCrashingEngineIsNeverAnEmptyPlan wraps the real CLI in a script that
// answers version but dies on plan, the way a panicking engine does.
func TestCrashingEngineIsNeverAnEmptyPlan(t *testing.T) {
	tc := testenv.Toolchain(t, "tofu", "terraform-provider-kubernetes")
	crash := filepath.Join(t.TempDir(), "tofu")
	script := "#!/bin/sh\ncase \"$1\" in version|init) exec " + tc.Path("tofu") + " \"$@\";; esac\necho 'panic: runtime error: invalid memory address' >&2\nexit 11\n"
	os.WriteFile(crash, []byte(script), 0o755)
	e, err := engine.New(context.Background(), crash, tc.CLIConfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(smallRoot), 0o644)
	ws, _ := e.Workspace(dir, "/nonexistent", filepath.Join(dir, ".logs"))
	p, err := ws.Plan(context.Background(), engine.PlanOptions{})
	if err == nil || p != nil {
		t.Fatalf("a crashed plan returned plan %+v, err %v", p, err)
	}
	if engine.ExitCode(err) != 11 || !strings.Contains(err.Error(), "panic: runtime error") {
		t.Errorf("error does not carry the exit code and the crash: %v", err)
	}
}

// TestStreamedPlanIsTheShownPlan: a plan read from its own stream (plan
// -json) holds what show -json of the saved plan holds - the same
// actionable changes, the same counts, the printed summary checked
// against them - in one engine call instead of two; a plan that deletes is
// still read by show -json, the stream not telling a deposed object apart.
func TestStreamedPlanIsTheShownPlan(t *testing.T) {
	testenv.SecondTier(t, "every stage of the smoke estate reads its plans from the stream (planDefaults) on both CLIs, removals and the teardown included, and its BREAKs predict their exact findings")
	c := testenv.LocalCluster(t, "engine", local.WithPods(false))
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, cli := range []string{"tofu", "terraform"} {
		t.Run(cli, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ws := testenv.Workspace(t, cli, strings.ReplaceAll(smallRoot, "small-", "stream-"), c.KubeconfigPath())
			if _, err := ws.Init(ctx); err != nil {
				t.Fatal(err)
			}
			both := func(o engine.PlanOptions) (plain, streamed *engine.Plan, calls int) {
				t.Helper()
				var err error
				if plain, err = ws.Plan(ctx, o); err != nil {
					t.Fatal(err)
				}
				n := len(ws.Calls())
				o.Stream = true
				if streamed, err = ws.Plan(ctx, o); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(streamed.Actionable()) != fmt.Sprint(plain.Actionable()) || streamed.Counts != plain.Counts || streamed.Printed != plain.Printed {
					t.Errorf("streamed %s %+v (printed %s), shown %s %+v (printed %s)", streamed.Counts, streamed.Actionable(), streamed.Printed,
						plain.Counts, plain.Actionable(), plain.Printed)
				}
				return plain, streamed, len(ws.Calls()) - n
			}
			_, s, calls := both(engine.PlanOptions{})
			if calls != 1 || s.Raw != nil || (s.Counts != engine.Counts{Add: 2}) {
				t.Errorf("first plan streamed: %d call(s), raw %v, %s; want 1 call, no show, 2 to add", calls, s.Raw != nil, s.Counts)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{PlanFile: s.File}); err != nil {
				t.Fatal(err) // the streamed plan's file is the saved plan
			}
			patch := []byte(`{"data":{"colour":"red"}}`)
			if _, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "stream-cfg", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, s, calls = both(engine.PlanOptions{}); calls != 1 || (s.Counts != engine.Counts{Change: 1}) {
				t.Errorf("drift plan streamed: %d call(s), %s; want 1 call, 1 to change", calls, s.Counts)
			}
			if _, s, calls = both(engine.PlanOptions{Destroy: true}); calls != 2 || s.Raw == nil {
				t.Errorf("destroy plan streamed: %d call(s), raw %v; want show -json after it (2 calls)", calls, s.Raw != nil)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{Destroy: true}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
