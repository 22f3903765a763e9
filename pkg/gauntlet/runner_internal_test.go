package gauntlet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
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
	for _, st := range stage.Default().Stages() {
		if st.Info().ID != "test_plan" {
			continue
		}
		nr := notRunReason(st.Info(), r, map[string]result.Verdict{"migrate": result.Pass}, &options{stages: stage.Default()}, false)
		got := nr.reason
		if nr.cause != result.CauseCapability {
			t.Errorf("test_plan on terraform 1.4.6: cause %q, want %q", nr.cause, result.CauseCapability)
		}
		for _, want := range []string{"needs import blocks", "since terraform 1.5.0", "this is terraform 1.4.6"} {
			if !strings.Contains(got, want) {
				t.Errorf("test_plan on terraform 1.4.6: %q, want it to contain %q", got, want)
			}
		}
		return
	}
	t.Fatal("no test_plan stage")
}

// TestUndeclaredStageIsNotRunForTheEstateOnEveryEngine: a stage estate.yaml
// does not declare gives that as its reason, on an engine that lacks its
// capabilities as on one that has them, so a matrix shows no change
// between versions where the estate asked for nothing.
func TestUndeclaredStageIsNotRunForTheEstateOnEveryEngine(t *testing.T) {
	st, ok := stage.Default().Lookup("handoff")
	if !ok {
		t.Fatal("no handoff stage")
	}
	ho := st.Info()
	o := &options{stages: stage.Default()}
	passed := map[string]result.Verdict{"migrate": result.Pass}
	for _, v := range []string{"1.5.7", "1.11.4"} {
		p := engine.Profile{Name: "terraform", Version: v, Capabilities: engine.StockCapabilities("terraform", v)}
		r := &stage.Run{Spec: &estate.Spec{}, Subject: &stage.Side{Engine: &engine.Workspace{Engine: &engine.Engine{Profile: p}}}}
		if got := notRunReason(ho, r, passed, o, false); !strings.Contains(got.reason, "declares no handoff") || got.cause != result.CauseUndeclared {
			t.Errorf("handoff on terraform %s for an estate without one: %q (%s), want it to say the estate declares no handoff", v, got.reason, got.cause)
		}
		r.Spec.Handoff = &estate.Handoff{}
		got := notRunReason(ho, r, passed, o, false).reason
		if want := v == "1.5.7"; strings.Contains(got, "needs removed blocks") != want {
			t.Errorf("handoff on terraform %s for an estate with one: %q, want the missing capability named: %v", v, got, want)
		}
	}
}

func TestAStageCountsItsRequestsByVerbAndResource(t *testing.T) {
	got := requestCounts([]wire.Request{{Verb: "get", Resource: "configmaps"}, {Verb: "list", Resource: "nonresource:/api"}, {Verb: "get", Resource: "configmaps"}})
	if len(got) != 2 || got["get configmaps"] != 2 || got["list nonresource:/api"] != 1 {
		t.Errorf("counts %v", got)
	}
}

// TestAShapeTheRootCannotCarryIsNotApplicable: a stage that says the root's
// shape cannot carry it is not_applicable with its reason; one for which
// gauntlet merely derived no plan stays not_run, as does one the estate
// does not declare; any other error is no verdict of this kind.
func TestAShapeTheRootCannotCarryIsNotApplicable(t *testing.T) {
	const why = "the root has one object: a removal needs another object kept through it"
	for name, tc := range map[string]struct {
		err       error
		want      result.Verdict
		wantCause result.Cause
		wantOK    bool
	}{
		"shape":      {&stage.NotApplicable{Reason: why, Shape: true}, result.NotApplicable, "", true},
		"wrapped":    {fmt.Errorf("day2_remove: %w", &stage.NotApplicable{Reason: why, Shape: true}), result.NotApplicable, "", true},
		"no plan":    {&stage.NotApplicable{Reason: why}, result.NotRun, "", true},
		"capability": {&stage.NotApplicable{Reason: why, Cause: result.CauseCapability}, result.NotRun, result.CauseCapability, true},
		"machinery":  {errors.New(why), "", "", false},
		"no error":   {nil, "", "", false},
	} {
		v, reason, cause, ok := notApplicable(tc.err)
		if v != tc.want || cause != tc.wantCause || ok != tc.wantOK || ok && reason != why {
			t.Errorf("%s: %q %q %q %v, want %q (cause %q) with the reason: %v", name, v, cause, reason, ok, tc.want, tc.wantCause, tc.wantOK)
		}
	}
	// A section the estate does not declare is not its shape: the fence
	// stage of an estate without one stays not_run.
	for _, st := range stage.Default().Stages() {
		if st.Info().ID != "fence" {
			continue
		}
		err := st.Run(context.Background(), &stage.Run{Spec: &estate.Spec{}}, stage.NewRecorder())
		if v, reason, cause, ok := notApplicable(err); v != result.NotRun || cause != result.CauseUndeclared || !ok || !strings.Contains(reason, "fence section") {
			t.Errorf("fence of an estate without one: %q %q %q %v (%v), want not_run (undeclared) saying it declares none", v, cause, reason, ok, err)
		}
		return
	}
	t.Fatal("no fence stage")
}

// A stage that failed exactly as estate.yaml's findings list it carries
// the estate's word (and a documented difference says so); one that fails
// the same stage another way carries nothing.
func TestKnownOnlyWhenTheStageFailsExactlyAsListed(t *testing.T) {
	got := result.Finding{Side: "subject", Address: "module.this.kubernetes_service_v1.service", Field: "plan", Want: "import", Got: "delete+create (import)"}
	spec := &estate.Spec{Findings: map[string]estate.Finding{"test_plan": {Why: "tofu 1.12 triggers on a planned create", Verdict: "fail",
		Found:      []estate.Found{{Check: "same as the oracle", Side: "subject", Address: got.Address, Field: "plan", Want: "import", Got: got.Got}},
		Difference: &estate.Difference{Engines: "tofu 1.12.0 and later", References: []string{"https://github.com/opentofu/opentofu/pull/3848"}}}}}
	stage := func(f result.Finding) result.Stage {
		return result.Stage{ID: "test_plan", Verdict: result.Fail, Checks: []result.Check{{Name: "same as the oracle", Verdict: result.Fail, Findings: []result.Finding{f}}}}
	}
	k := known(spec, stage(got))
	if k == nil || !k.Difference || k.Engines != "tofu 1.12.0 and later" || len(k.References) != 1 {
		t.Fatalf("known %+v, want the listed difference", k)
	}
	other := got
	other.Got = "delete"
	if k := known(spec, stage(other)); k != nil {
		t.Errorf("another failure of the stage is known as %+v", k)
	}
	if k := known(&estate.Spec{}, stage(got)); k != nil {
		t.Errorf("an unlisted failure is known as %+v", k)
	}
}
