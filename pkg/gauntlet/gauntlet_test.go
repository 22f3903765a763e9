package gauntlet_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/corpus"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
)

func spec(t *testing.T) *estate.Spec {
	t.Helper()
	s, err := estate.Load(filepath.Join("..", "..", "estates"), "corpus-k8s-metrics-server")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := toolchain.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := corpus.Verified(cache, s.Source); err != nil {
		dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus"))
		if _, err := corpus.Import(cache, dir, s.Source); err != nil {
			t.Fatalf("corpus: %v", err)
		}
	}
	return s
}

// TestBadInputFailsBeforeAnyCluster: each error must come from the
// preflight, within seconds, naming what is wrong.
func TestBadInputFailsBeforeAnyCluster(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*estate.Spec)
		opts []gauntlet.Option
		want string
	}{
		"wrong sha256":           {edit: func(s *estate.Spec) { s.Source.SHA256 = strings.Repeat("0", 64) }, want: "the pin says 0000"},
		"missing corpus file":    {edit: func(s *estate.Spec) { s.Source.Path += ".absent" }, want: "corpus import"},
		"unknown skipped stage":  {edit: func(s *estate.Spec) { s.Skip = map[string]string{"dirft": "typo"} }, want: `unknown stage "dirft"`},
		"unknown selected stage": {opts: []gauntlet.Option{gauntlet.WithStages("teardown")}, want: `unknown stage "teardown"`},
		"engine path absent":     {opts: []gauntlet.Option{gauntlet.WithEngine("/nonexistent/tofu")}, want: "/nonexistent/tofu"},
		"engine not a CLI":       {opts: []gauntlet.Option{gauntlet.WithEngine("/bin/true")}, want: "does not speak the Terraform CLI"},
		"bad substrate":          {opts: []gauntlet.Option{gauntlet.WithSubstrate("minikube")}, want: `substrate "minikube"`},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec(t)
			if tc.edit != nil {
				tc.edit(s)
			}
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := gauntlet.Run(ctx, s, append(tc.opts, gauntlet.WithOffline(true))...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s: a preflight error must not wait for clusters", d)
			}
		})
	}
}

// TestCancelledRunTearsDown cancels a run while its first stage works and
// expects Run to return with both clusters gone.
func TestCancelledRunTearsDown(t *testing.T) {
	s := spec(t)
	testenv.Toolchain(t) // fail early, naming the command, if the toolchain is missing
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &cancelOnStage{stage: "cold_deploy", cancel: cancel}
	start := time.Now()
	work := t.TempDir()
	res, err := gauntlet.Run(ctx, s, gauntlet.WithOffline(true), gauntlet.WithLogger(logs), gauntlet.WithStages("cold_deploy"), gauntlet.WithWorkDir(work))
	if err == nil && res.Clear() {
		t.Fatalf("a cancelled run is clear")
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("cancelled run took %s", d)
	}
	if dirs, _ := filepath.Glob(filepath.Join(work, "gauntlet-local-*")); len(dirs) > 0 {
		t.Errorf("clusters left behind: %v", dirs)
	}
}

// cancelOnStage cancels the run when a stage reports it started.
type cancelOnStage struct {
	stage  string
	cancel func()
}

func (c *cancelOnStage) Infof(format string, args ...any) {
	if strings.HasPrefix(format, "stage ") && len(args) > 0 && args[0] == c.stage && strings.HasSuffix(format, "started") {
		go func() { time.Sleep(300 * time.Millisecond); c.cancel() }()
	}
}
func (c *cancelOnStage) Warnf(string, ...any) {}
