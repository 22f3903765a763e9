package gauntlet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/corpus"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
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
	// A root written for the test that needs what no run can give it.
	needy := t.TempDir()
	root := "terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\" }\n  }\n}\n" +
		"variable \"region\" {}\nresource \"aws_s3_bucket\" \"b\" {}\n" +
		"resource \"kubernetes_config_map_v1\" \"c\" {\n  metadata { name = \"c\" }\n  data = { t = templatefile(\"${path.module}/page.tpl\", {}) }\n}\n"
	if err := os.WriteFile(filepath.Join(needy, "main.tf"), []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	written := func(s *estate.Spec) { s.Source, s.Files, s.Dir = nil, []string{"main.tf"}, needy }
	for name, tc := range map[string]struct {
		edit func(*estate.Spec)
		opts []gauntlet.Option
		want string
	}{
		"wrong sha256":              {edit: func(s *estate.Spec) { s.Source.SHA256 = strings.Repeat("0", 64) }, want: "the pin says 0000"},
		"missing corpus file":       {edit: func(s *estate.Spec) { s.Source.Path += ".absent" }, want: "corpus import"},
		"unknown skipped stage":     {edit: func(s *estate.Spec) { s.Skip = map[string]string{"dirft": "typo"} }, want: `unknown stage "dirft"`},
		"unknown finding stage":     {edit: func(s *estate.Spec) { s.Findings = map[string]estate.Finding{"day2_rnme": {Why: "typo"}} }, want: `findings names unknown stage "day2_rnme" (stages: cold_deploy, `},
		"unknown not_derived stage": {edit: func(s *estate.Spec) { s.NotDerived = map[string]string{"drfit": "typo"} }, want: `not_derived names unknown stage "drfit"`},
		"unknown selected stage":    {opts: []gauntlet.Option{gauntlet.WithStages("teardown")}, want: `unknown stage "teardown"`},
		"engine path absent":        {opts: []gauntlet.Option{gauntlet.WithEngine("/nonexistent/tofu")}, want: "/nonexistent/tofu"},
		"engine not a CLI":          {opts: []gauntlet.Option{gauntlet.WithEngine("/bin/true")}, want: "does not speak the Terraform CLI"},
		"bad substrate":             {opts: []gauntlet.Option{gauntlet.WithSubstrate("minikube")}, want: `substrate "minikube"`},
		"provider not supplied":     {edit: written, want: `required_providers (and resource "aws_s3_bucket" "b" at main.tf:7) needs hashicorp/aws: the toolchain does not supply it`},
		"required variable unset":   {edit: written, want: "variables with no default that estate.yaml does not set: region"},
		"unpinned template":         {edit: written, want: `reads a file the estate does not pin: main.tf:10: templatefile("${path.module}/page.tpl")`},
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

// TestCancelledRunTearsDown interrupts a run (as Ctrl-C does) while its
// first stage works and expects Run to return a cancelled result - that
// stage cancelled, the others not_run "cancelled", exit 130 - with both
// clusters gone and the run's state record ended.
func TestCancelledRunTearsDown(t *testing.T) {
	s := spec(t)
	testenv.Toolchain(t) // fail early, naming the command, if the toolchain is missing
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	logs := &cancelOnStage{stage: "cold_deploy", cancel: func() { cancel(gauntlet.SignalCause{Sig: os.Interrupt}) }}
	start := time.Now()
	work, state := t.TempDir(), t.TempDir()
	res, err := gauntlet.Run(ctx, s, gauntlet.WithOffline(true), gauntlet.WithLogger(logs), gauntlet.WithStages("cold_deploy", "migrate"),
		gauntlet.WithWorkDir(work), gauntlet.WithStateDir(state))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("cancelled run took %s", d)
	}
	if res.Clear() || res.ExitCode != 130 {
		t.Errorf("cancelled run: clear %v, exit %d; want not clear, 130", res.Clear(), res.ExitCode)
	}
	if c := res.Cancelled; c == nil || c.Stage != "cold_deploy" || c.Signal != "interrupt" {
		t.Fatalf("cancellation %+v, want cold_deploy by interrupt", c)
	}
	for _, st := range res.Stages {
		switch st.ID {
		case "cold_deploy":
			if st.Verdict != result.Cancelled {
				t.Errorf("%s: %s, want cancelled", st.ID, st.Verdict)
			}
		case "migrate":
			if st.Verdict != result.NotRun || st.Reason != "cancelled" {
				t.Errorf("%s: %s %q, want not_run \"cancelled\"", st.ID, st.Verdict, st.Reason)
			}
		default:
			if st.Verdict != result.NotRun || st.Reason != "not selected for this run" {
				t.Errorf("%s: %s %q, want not_run \"not selected for this run\"", st.ID, st.Verdict, st.Reason)
			}
		}
	}
	if dirs, _ := filepath.Glob(filepath.Join(work, "gauntlet-local-*")); len(dirs) > 0 {
		t.Errorf("clusters left behind: %v", dirs)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "*")); len(left) > 0 {
		t.Errorf("the run's state record outlived it: %v", left)
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
