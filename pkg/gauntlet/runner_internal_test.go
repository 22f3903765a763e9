package gauntlet

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

func TestCancellationNamesWhatStoppedTheRun(t *testing.T) {
	for name, tc := range map[string]struct {
		ctx    func() context.Context
		signal string
		exit   int
	}{
		"SIGINT": {func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(SignalCause{Sig: os.Interrupt})
			return ctx
		}, "interrupt", 130},
		"SIGTERM": {func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(SignalCause{Sig: syscall.SIGTERM})
			return ctx
		}, "terminated", 143},
		"deadline": {func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
			defer cancel()
			return ctx
		}, "deadline exceeded", 1},
		"cancel": {func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, "canceled", 1},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := tc.ctx()
			c := cancellation(ctx, "drift")
			if c.Stage != "drift" || c.Signal != tc.signal {
				t.Errorf("cancellation %+v, want drift by %q", c, tc.signal)
			}
			if got := cancelExitCode(ctx); got != tc.exit {
				t.Errorf("exit %d, want %d", got, tc.exit)
			}
		})
	}
}

// TestMissingCapabilityIsNotRunWithItsRelease: a stage the engine cannot
// do is not_run, naming the capability, the release that brought it and
// the engine's own version - never a fail, never a pass.
func TestMissingCapabilityIsNotRunWithItsRelease(t *testing.T) {
	old := engine.Profile{Name: "terraform", Version: "1.4.6", Capabilities: engine.StockCapabilities("terraform", "1.4.6")}
	r := &stage.Run{Spec: &estate.Spec{}, Subject: &stage.Side{Engine: &engine.Workspace{Engine: &engine.Engine{Profile: old}}}}
	for _, st := range stage.All() {
		if st.ID() != "test_plan" {
			continue
		}
		got := notRunReason(st, r, map[string]result.Verdict{"migrate": result.Pass}, &options{}, false)
		for _, want := range []string{"needs import blocks", "since terraform 1.5.0", "this is terraform 1.4.6"} {
			if !strings.Contains(got, want) {
				t.Errorf("test_plan on terraform 1.4.6: %q, want it to contain %q", got, want)
			}
		}
		return
	}
	t.Fatal("no test_plan stage")
}
