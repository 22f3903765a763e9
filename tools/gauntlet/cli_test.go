package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command table")

// gauntletCLI runs the gauntlet command line in-process and returns its
// exit code and output. The SIGKILL sweep is left out: a test must not
// clean up after other gauntlet processes on the machine.
func gauntletCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := app(&stdout, &stderr)
	a.Before = nil
	return a.Run(context.Background(), args), stdout.String(), stderr.String()
}

// TestCLIReferenceIsCurrent: docs/cli.md is what `gauntlet docs cli`
// prints now; -update rewrites it.
func TestCLIReferenceIsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := app(&b, &b).Markdown(&b, regenerateCLIDoc); err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, filepath.Join("..", "..", "docs", "cli.md"), b.Bytes(), regenerateCLIDoc)
}

// TestEveryCommandIsDocumented: each command has a paragraph, one to
// three examples of itself, a placeholder for every flag that takes a
// value, and answers -h with its usage (exit 0).
func TestEveryCommandIsDocumented(t *testing.T) {
	for _, c := range commands(io.Discard) {
		t.Run(strings.ReplaceAll(c.Name, " ", "_"), func(t *testing.T) {
			if len(strings.Fields(c.Doc)) < 15 || c.Summary == "" {
				t.Errorf("summary %q, doc %q: want a line and a paragraph", c.Summary, c.Doc)
			}
			if n := len(c.Examples); n < 1 || n > 3 {
				t.Errorf("%d examples, want 1-3", n)
			}
			for _, e := range c.Examples {
				if !strings.HasPrefix(e.Command, "gauntlet "+c.Name) && !strings.Contains(e.Command, "./tools/gauntlet "+c.Name) {
					t.Errorf("example %q is not of gauntlet %s", e.Command, c.Name)
				}
			}
			for _, f := range cli.Flags(&c) {
				switch f.Placeholder {
				case "string", "int", "value", "uint", "float", "duration":
					t.Errorf("--%s shows as %q: name its value with a backquoted word in the usage", f.Name, f.Spelling())
				}
			}
			code, stdout, _ := gauntletCLI(t, append(strings.Fields(c.Name), "-h")...)
			if code != 0 || !strings.HasPrefix(stdout, "usage: gauntlet "+c.Name) || !strings.Contains(stdout, "examples:") {
				t.Errorf("-h: exit %d:\n%s", code, stdout)
			}
		})
	}
}

// TestRunHelp: `gauntlet run -h` is a usage block, not "Usage of run:":
// the paragraph, each flag with its default and environment variable,
// and examples.
func TestRunHelp(t *testing.T) {
	code, stdout, stderr := gauntletCLI(t, "run", "-h")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"usage: gauntlet run <estate> | --all [flags]",
		"Runs the estate through its life",
		"--substrate NAME\n",
		"(default: local)",
		"--offline\n",
		"(env $GAUNTLET_OFFLINE)",
		"--cache DIR\n",
		"; env $GAUNTLET_CACHE)",
		"examples:\n  # ",
		"  gauntlet run corpus-k8s-metrics-server\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("run -h lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "Usage of") || strings.Contains(stdout, "--tool") {
		t.Errorf("run -h:\n%s", stdout)
	}
}

// TestFlagsAfterArguments: flags after a positional argument are flags,
// not estate names (issue 23, point 13): `corpus import DIR --estates X`
// reads the estates from X.
func TestFlagsAfterArguments(t *testing.T) {
	dir, estates := t.TempDir(), t.TempDir()
	// X holds no estate, so nothing is imported; read as an estate name,
	// "--estates" would not load.
	code, _, stderr := gauntletCLI(t, "corpus", "import", dir, "--estates", estates, "--cache", t.TempDir())
	if code != 0 || stderr != "" {
		t.Errorf("corpus import DIR --estates X: exit %d: %s", code, stderr)
	}
	// The estate name first, flags after: the kubeconfig check (a usage
	// error, before anything loads) sees every flag.
	code, _, stderr = gauntletCLI(t, "bench", "some-estate", "--substrate", "kubeconfig", "--subject-kubeconfig", "a.yaml")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--oracle-kubeconfig PATH") {
		t.Errorf("bench with one kubeconfig: exit %d: %s", code, stderr)
	}
}

// TestFlagsThatDidNothingAreGone: run and kind node-image no longer take
// --tool (it was accepted and ignored); an unknown flag is a usage error
// listing the valid ones.
func TestFlagsThatDidNothingAreGone(t *testing.T) {
	for _, args := range [][]string{
		{"run", "corpus-k8s-metrics-server", "--tool", "tofu=/bin/true"},
		{"kind", "node-image", "--tool", "kind=/bin/true"},
	} {
		code, _, stderr := gauntletCLI(t, args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, "unknown flag -tool; valid flags: --") || !strings.Contains(stderr, "--cache") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestSideFlags: bench and soak take --engine and the kubeconfigs as run
// does, and refuse what cannot work with the fix named.
func TestSideFlags(t *testing.T) {
	estates := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"soak", "e", "--substrate", "kubeconfig"}, cli.ExitUsage, "give --subject-kubeconfig PATH and --oracle-kubeconfig PATH"},
		{[]string{"run", "e", "--substrate", "kubeconfig", "--subject-kubeconfig", "a", "--oracle-kubeconfig", "a"}, cli.ExitUsage, "two different clusters"},
		{[]string{"bench", "e", "--subject-kubeconfig", "a"}, cli.ExitUsage, "are for --substrate kubeconfig (this is --substrate local)"},
		{[]string{"soak", "e", "--substrate", "kubernetes"}, cli.ExitUsage, `--substrate "kubernetes": want local, kind, kubeconfig`},
		{[]string{"matrix", "e", "--engines", "all", "--substrate", "kubeconfig"}, cli.ExitUsage, "--substrate kubeconfig is not for matrix"},
		{[]string{"soak", "e", "-n", "1"}, cli.ExitUsage, "-n 1: want at least 2 run(s)"},
		// Parsed and checked; the estate does not exist, so it could not run.
		{[]string{"bench", "e", "--engine", "tofu@1.9.4", "--oracle", "tofu@1.12.6", "--estates", estates}, cli.ExitCouldNotRun, "e"},
		{[]string{"soak", "e", "--engine", "/bin/tofu", "--substrate", "kubeconfig", "--subject-kubeconfig", "a", "--oracle-kubeconfig", "b", "--estates", estates}, cli.ExitCouldNotRun, "e"},
	} {
		code, _, stderr := gauntletCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}

// TestPageFormatFlag: every command that writes evidence pages takes
// --format and refuses a layout it does not know, naming the valid ones,
// before anything runs.
func TestPageFormatFlag(t *testing.T) {
	estates := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "e", "--format", "table"}, cli.ExitUsage, `--format "table": want sections or seed (see gauntlet run -h)`},
		{[]string{"record", "--stale", "--format", "table"}, cli.ExitUsage, `--format "table": want sections or seed (see gauntlet record -h)`},
		{[]string{"matrix", "e", "--engines", "all", "--format", "table"}, cli.ExitUsage, `--format "table": want sections or seed (see gauntlet matrix -h)`},
		{[]string{"compare", "e", "--engine", "tofu@1.12.6", "--baseline", "tofu@1.12.6", "--format", "table"}, cli.ExitUsage, `--format "table": want sections or seed (see gauntlet compare -h)`},
		// Parsed and checked; the estate does not exist, so it could not run.
		{[]string{"run", "e", "--format", "seed", "--estates", estates}, cli.ExitCouldNotRun, "e"},
	} {
		code, _, stderr := gauntletCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}

// TestAllShardAndRecordUsage: --all, --shard, record and merge are flags
// and commands like the others - a malformed shard, a shard without
// --all, an estate with --all, record without --stale and merge without
// a folder are usage errors (exit 2) before anything runs.
func TestAllShardAndRecordUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--all", "--shard", "3/2"}, `invalid value "3/2" for flag -shard: --shard "3/2": want I/N with 1 <= I <= N`},
		{[]string{"run", "e", "--shard", "1/2"}, "--shard needs --all"},
		{[]string{"run", "e", "--all"}, `--all takes every estate: give no estate name (got "e")`},
		{[]string{"run"}, "want <estate>"},
		{[]string{"matrix", "--all", "--shard", "x", "--engines", "all"}, `invalid value "x" for flag -shard`},
		{[]string{"matrix", "e", "--engines", "all", "--shard", "1/2"}, "--shard needs --all"},
		{[]string{"mutants", "e", "--all"}, "--all takes every estate"},
		{[]string{"mutants"}, "want <estate>"},
		{[]string{"record"}, "record needs --stale"},
		{[]string{"record", "--stale", "--out", "x"}, "--out is the shard's folder: it needs --shard"},
		{[]string{"record", "--stale", "--shard", "0/2"}, `invalid value "0/2" for flag -shard`},
		{[]string{"record", "--stale", "extra"}, "want no arguments"},
		{[]string{"merge"}, "want SHARD_DIR..."},
	} {
		code, _, stderr := gauntletCLI(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestAllExitCodes: an --all over estates where one cannot load is "could
// not run" (3), not "not clear" (1): nothing was found about the engine.
// The index page says so, and with --shard the manifest is written.
func TestAllExitCodes(t *testing.T) {
	estates, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(filepath.Join(estates, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(estates, "broken", "estate.yaml"), []byte("apiVersion: gauntlet/v1\nname: broken\nnot: [valid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := gauntletCLI(t, "mutants", "--all", "--shard", "1/1", "--estates", estates, "--out", out)
	if code != cli.ExitCouldNotRun || !strings.Contains(stderr, "gauntlet mutants: 1 could not run, the rest clear") {
		t.Errorf("mutants --all over a broken estate: exit %d: %s%s", code, stdout, stderr)
	}
	index, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil || !strings.Contains(string(index), "| broken | error: ") {
		t.Errorf("index.md: %v\n%s", err, index)
	}
	if _, err := readManifest(out); err != nil {
		t.Errorf("shard.json: %v", err)
	}
	for _, tc := range []struct{ notClear, couldNotRun, code int }{
		{0, 0, cli.ExitClear},
		{1, 0, cli.ExitNotClear},
		{1, 2, cli.ExitNotClear},
		{0, 2, cli.ExitCouldNotRun},
	} {
		if c := cli.ExitCode(allOutcome(tc.notClear, tc.couldNotRun), nil); c != tc.code {
			t.Errorf("%d not clear, %d could not run: exit %d, want %d", tc.notClear, tc.couldNotRun, c, tc.code)
		}
	}
}

// TestExitCodes: each outcome's code through the command line - clear,
// not clear, usage, could not run, and cancelled by SIGINT or SIGTERM
// (gauntlet.SignalCause, the cause main cancels with).
func TestExitCodes(t *testing.T) {
	command := func(err error) cli.Command {
		return cli.Command{Name: "x", Summary: "s", Doc: "d", Setup: func(fs *cli.FlagSet) cli.Action {
			return func(context.Context, []string) error { return err }
		}}
	}
	for name, tc := range map[string]struct {
		err    error
		cause  error
		args   []string
		code   int
		stderr string
	}{
		"clear":                      {code: 0},
		"not clear":                  {err: cli.NotClear(errors.New("2 stages failed")), code: 1, stderr: "gauntlet x: 2 stages failed"},
		"usage: an unknown flag":     {args: []string{"--nope"}, code: 2, stderr: "unknown flag -nope: x takes no flags"},
		"usage: found by the action": {err: cli.Usagef("x", "--a needs --b"), code: 2, stderr: "--a needs --b (see gauntlet x -h)"},
		"could not run":              {err: errors.New("the toolchain: no go"), code: 3, stderr: "gauntlet x: the toolchain: no go"},
		"cancelled by SIGINT":        {err: context.Canceled, cause: gauntlet.SignalCause{Sig: syscall.SIGINT}, code: 130},
		"cancelled by SIGTERM":       {err: errors.New("run 2/3 was cancelled"), cause: gauntlet.SignalCause{Sig: syscall.SIGTERM}, code: 143},
		"cancelled, not clear first": {err: cli.NotClear(errors.New("x")), cause: gauntlet.SignalCause{Sig: syscall.SIGTERM}, code: 143},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tc.cause != nil {
				cancel(tc.cause)
			}
			var stdout, stderr bytes.Buffer
			a := &cli.App{Name: "gauntlet", Commands: []cli.Command{command(tc.err)}, Stdout: &stdout, Stderr: &stderr}
			if code := a.Run(ctx, append([]string{"x"}, tc.args...)); code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", code, tc.code, stderr.String(), tc.stderr)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, cli.ExitUsage},
		{[]string{"nope"}, cli.ExitUsage},
		{[]string{"corpus"}, cli.ExitUsage},
		{[]string{"corpus", "-h"}, 0},
		{[]string{"help", "corpus"}, 0},
		{[]string{"help", "run"}, 0},
		{[]string{"-h"}, 0},
		{[]string{"run"}, cli.ExitUsage},
		{[]string{"run", "a", "b"}, cli.ExitUsage},
		{[]string{"version", "extra"}, cli.ExitUsage},
	} {
		if code, _, _ := gauntletCLI(t, tc.args...); code != tc.code {
			t.Errorf("gauntlet %v: exit %d, want %d", tc.args, code, tc.code)
		}
	}
}

// TestVersion: the commit from the binary's VCS stamp, the compiled-in
// pins' digest compared with the file on disk, and the Go version.
func TestVersion(t *testing.T) {
	pins, err := os.ReadFile(filepath.Join("..", "..", pinsFile))
	if err != nil {
		t.Fatal(err)
	}
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.modified", Value: "true"},
		{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
	}}
	var b bytes.Buffer
	if err := writeVersion(context.Background(), &b, info, fstest.MapFS{pinsFile: {Data: pins}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"gauntlet 0123456789abcdef0123456789abcdef01234567 (modified) committed 2026-01-02T03:04:05Z (stamped in the binary)\n",
		"pins     sha256:" + digest(pins) + " (third_party/pins.json compiled in); ./third_party/pins.json is the same\n",
		"go       go1.99.1 ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := writeVersion(context.Background(), &b, info, fstest.MapFS{pinsFile: {Data: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if want := "differs: sha256:" + digest([]byte("{}")) + " (rebuild to use it)"; !strings.Contains(b.String(), want) {
		t.Errorf("edited pins: version lacks %q:\n%s", want, b.String())
	}
}
