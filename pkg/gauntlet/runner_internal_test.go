package gauntlet

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
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
