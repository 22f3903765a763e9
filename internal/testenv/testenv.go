// Package testenv gives gauntlet's tests the pinned toolchain and real
// local clusters, with teardown registered before anything can fail.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// Toolchain resolves tools from the cache without building. Tests never
// build toolchains (minutes of CPU); a missing tool fails the test with
// the command that provides it.
func Toolchain(t testing.TB, tools ...string) *toolchain.Toolchain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tc, err := toolchain.Resolve(ctx, toolchain.WithTools(tools...), toolchain.WithoutBuild(), toolchain.WithOffline(true),
		toolchain.WithLogger(Logger(t)))
	if err != nil {
		t.Fatalf("%v\n(these tests run the real pinned tools: `go run ./tools/gauntlet toolchain` resolves them)", err)
	}
	return tc
}

// Workspace writes root as main.tf into a fresh directory and returns the
// pinned cli's workspace on it, against kubeconfig (the kubernetes and
// random providers from the toolchain's mirror).
func Workspace(t testing.TB, cli, root, kubeconfig string) *engine.Workspace {
	t.Helper()
	tc := Toolchain(t, cli, "terraform-provider-kubernetes", "terraform-provider-random")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := engine.New(ctx, tc.Path(cli), tc.CLIConfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := e.Workspace(dir, kubeconfig, filepath.Join(dir, ".logs"))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// LocalCluster starts a local control plane stopped by t.Cleanup.
func LocalCluster(t testing.TB, name string, opts ...local.Option) *local.Cluster {
	t.Helper()
	tc := Toolchain(t, local.Tools()...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := local.New(tc, append([]local.Option{local.WithLogger(Logger(t))}, opts...)...).Start(ctx, name)
	if err != nil {
		t.Fatalf("start local cluster: %v", err)
	}
	t.Cleanup(func() { Stop(t, c) })
	return c.(*local.Cluster)
}

// Stop stops a cluster with a bound, failing the test if it cannot.
func Stop(t testing.TB, c cluster.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Errorf("stop %s: %v", c.Name(), err)
	}
}

// Logger sends progress to t.Logf.
func Logger(t testing.TB) tlogger { return tlogger{t} }

type tlogger struct{ t testing.TB }

func (l tlogger) Infof(format string, args ...any) { l.t.Logf("%s", fmt.Sprintf(format, args...)) }
func (l tlogger) Warnf(format string, args ...any) {
	l.t.Logf("WARNING: %s", fmt.Sprintf(format, args...))
}

// WaitUntil polls f every 100 ms until it holds, failing the test with
// the last error when ctx ends.
func WaitUntil(t testing.TB, ctx context.Context, what string, f func() (bool, error)) {
	t.Helper()
	var last error
	for {
		ok, err := f()
		if ok {
			return
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within the bound (last error: %v)", what, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// AllTiers reports whether this run is the second tier's: under Bazel
// (gauntlet_go_test sets GAUNTLET_TESTS=all; CI runs those targets,
// cached by content) or with GAUNTLET_TESTS=all. The README's test command,
// the first tier, has a budget of 15 minutes on two cores.
func AllTiers() bool { return os.Getenv("GAUNTLET_TESTS") == "all" }

// SecondTier skips t in the first tier: for a test whose mechanisms the
// first tier already proves elsewhere. why says where, so the skip does.
func SecondTier(t testing.TB, why string) {
	t.Helper()
	if !AllTiers() {
		t.Skipf("second tier (GAUNTLET_TESTS=all, or bazel test //...; CI runs it there): %s", why)
	}
}
