package stage

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// A test_plan stage that aborts after setting the state aside - here its
// plan cannot run, with the context live or already cancelled - puts each
// side's state back and takes its import blocks away: the stages after it
// and the teardown act on that state.
func TestTestPlanPutsTheStateBackWhenItAborts(t *testing.T) {
	for _, c := range []struct {
		name   string
		cancel bool
	}{{"the plan fails", false}, {"the context is cancelled", true}} {
		t.Run(c.name, func(t *testing.T) {
			eng := &engine.Engine{Bin: filepath.Join(t.TempDir(), "no-such-engine"), Profile: engine.Profile{Name: "fake"}}
			r := &Run{Objects: []Object{{Address: "kubernetes_config_map_v1.c", Type: "kubernetes_config_map_v1",
				Ref: estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "c"}}}}
			states := map[string]string{}
			for _, name := range []string{"subject", "oracle"} {
				dir := t.TempDir()
				ws, err := eng.Workspace(dir, "", t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				states[dir] = `{"version":4,"serial":7,"lineage":"` + name + `"}`
				if err := os.WriteFile(filepath.Join(dir, "terraform.tfstate"), []byte(states[dir]), 0o644); err != nil {
					t.Fatal(err)
				}
				sd := &Side{Name: name, Root: &estate.Root{Name: "root", Dir: dir}, Engine: ws}
				if name == "subject" {
					r.Subject = sd
				} else {
					r.Oracle = sd
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				cancel()
			}
			if err := testPlan().Run(ctx, r, NewRecorder()); err == nil {
				t.Fatal("the stage ran with no engine")
			}
			for dir, want := range states {
				got, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
				if err != nil || string(got) != want {
					t.Errorf("%s: state %q (%v), want %q back", dir, got, err, want)
				}
				if _, err := os.Stat(filepath.Join(dir, importsFile)); !os.IsNotExist(err) {
					t.Errorf("%s: the import blocks are left behind (%v)", dir, err)
				}
			}
		})
	}
}
