package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// parsed is what a command saw: its positional arguments and flags.
type parsed struct {
	args []string
	out  string
	keep bool
	n    int
}

func testCommand() (*Command, *parsed) {
	p := &parsed{}
	return &Command{
		Name: "run", Args: "<estate> [more...]", MinArgs: 1, MaxArgs: 3,
		Summary: "run it", Doc: "Runs it.",
		Examples: []Example{{What: "once", Command: "gauntlet run e"}},
		Setup: func(fs *FlagSet) Action {
			fs.StringVar(&p.out, "out", "", "the `DIR` to write to (default: out/<estate>)")
			fs.BoolVar(&p.keep, "keep", false, "keep it")
			fs.IntVar(&p.n, "n", 3, "`N` times")
			fs.Env("out", "GAUNTLET_TEST_OUT")
			fs.Env("keep", "GAUNTLET_TEST_KEEP")
			return func(_ context.Context, args []string) error {
				p.args = args
				return nil
			}
		},
	}, p
}

func parse(t *testing.T, args ...string) (*parsed, error) {
	t.Helper()
	c, p := testCommand()
	fs := newFlagSet(c.Name)
	action := c.Setup(fs)
	pos, err := fs.parse(c, args)
	if err != nil {
		return p, err
	}
	return p, action(context.Background(), pos)
}

// TestInterspersedFlags: flags before, between and after the positional
// arguments; "--" ends the flags, unless it is a flag's value.
func TestInterspersedFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want parsed
	}{
		{[]string{"e", "--out", "d", "-keep"}, parsed{args: []string{"e"}, out: "d", keep: true, n: 3}},
		{[]string{"--out=d", "e", "-n", "5", "f"}, parsed{args: []string{"e", "f"}, out: "d", n: 5}},
		{[]string{"e", "--keep", "f", "--n=1", "g"}, parsed{args: []string{"e", "f", "g"}, keep: true, n: 1}},
		{[]string{"e", "--", "--keep", "-x"}, parsed{args: []string{"e", "--keep", "-x"}, n: 3}},
		{[]string{"--out", "--", "e"}, parsed{args: []string{"e"}, out: "--", n: 3}},
		{[]string{"--keep", "--", "-e"}, parsed{args: []string{"-e"}, keep: true, n: 3}},
	} {
		got, err := parse(t, tc.args...)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !slices.Equal(got.args, tc.want.args) || got.out != tc.want.out || got.keep != tc.want.keep || got.n != tc.want.n {
			t.Errorf("%q: got %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

// TestUsageErrors: an unknown flag names the valid ones; a wrong count of
// arguments says what is wanted; a bad value names the flag; -h is help.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"e", "--tool", "x=y"}, "unknown flag -tool; valid flags: --keep, -n, --out (see gauntlet run -h)"},
		{nil, `want <estate> [more...], got none`},
		{[]string{"a", "b", "c", "d"}, `want <estate> [more...], got "a" "b" "c" "d"`},
		{[]string{"e", "-n", "many"}, `invalid value "many" for flag -n`},
		{[]string{"e", "--out"}, "flag needs an argument: -out"},
	} {
		_, err := parse(t, tc.args...)
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || ExitCode(err, nil) != ExitUsage {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		if _, err := parse(t, "e", h); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %v, want flag.ErrHelp", h, err)
		}
	}
}

// TestEnvDefaults: a flag not on the command line takes its variable's
// value; the command line wins; a bad value names the variable.
func TestEnvDefaults(t *testing.T) {
	t.Setenv("GAUNTLET_TEST_OUT", "from-env")
	t.Setenv("GAUNTLET_TEST_KEEP", "1")
	if p, err := parse(t, "e"); err != nil || p.out != "from-env" || !p.keep {
		t.Errorf("from the environment: %+v, %v", p, err)
	}
	if p, err := parse(t, "e", "--out", "flag", "--keep=false"); err != nil || p.out != "flag" || p.keep {
		t.Errorf("the command line wins: %+v, %v", p, err)
	}
	t.Setenv("GAUNTLET_TEST_KEEP", "sure")
	if _, err := parse(t, "e"); err == nil || !strings.Contains(err.Error(), `$GAUNTLET_TEST_KEEP="sure" (the default of --keep)`) {
		t.Errorf("a bad value: %v", err)
	}
}

// signal is a cause like gauntlet.SignalCause.
type signal struct{ sig syscall.Signal }

func (s signal) Error() string     { return s.sig.String() }
func (s signal) Signal() os.Signal { return s.sig }
func (s signal) ExitCode() int     { return 128 + int(s.sig) }

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err, cause error
		want       int
	}{
		{nil, nil, ExitClear},
		{flag.ErrHelp, nil, ExitClear},
		{NotClear(errors.New("a stage failed")), nil, ExitNotClear},
		{Usagef("run", "--a needs --b"), nil, ExitUsage},
		{errors.New("no toolchain"), nil, ExitCouldNotRun},
		// An error that carries another program's exit code is gauntlet's
		// failure to run, not that code.
		{&os.SyscallError{Syscall: "x", Err: errors.New("y")}, nil, ExitCouldNotRun},
		{&ExitError{Code: 4, Err: errors.New("waiting")}, nil, 4},
		{context.Canceled, signal{syscall.SIGINT}, 130},
		{NotClear(errors.New("x")), signal{syscall.SIGTERM}, 143},
		{errors.New("x"), context.Canceled, ExitCouldNotRun},
	} {
		if got := ExitCode(tc.err, tc.cause); got != tc.want {
			t.Errorf("ExitCode(%v, %v) = %d, want %d", tc.err, tc.cause, got, tc.want)
		}
	}
}

// TestHelpAndReference: -h and the reference show the same flags, with
// defaults (stated or described), variables, and examples; a table cell
// with a "|" stays one cell.
func TestHelpAndReference(t *testing.T) {
	c, _ := testCommand()
	c.Summary = "run it | twice"
	var out, errs bytes.Buffer
	a := &App{Name: "gauntlet", Doc: "g.", Commands: []Command{*c}, Stdout: &out, Stderr: &errs}
	if code := a.Run(context.Background(), []string{"run", "e", "-h"}); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	for _, want := range []string{
		"usage: gauntlet run <estate> [more...] [flags]\n",
		"  --out DIR\n        the DIR to write to (default: out/<estate>; env $GAUNTLET_TEST_OUT)\n",
		"  -n N\n        N times (default: 3)\n",
		"examples:\n  # once\n  gauntlet run e\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h lacks %q:\n%s", want, out.String())
		}
	}
	var md bytes.Buffer
	if err := a.Markdown(&md, "regen"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| [`run`](#gauntlet-run) | run it \\| twice |",
		"| `--out DIR` | out/<estate> | `GAUNTLET_TEST_OUT` | the DIR to write to |",
		"| `-n N` | `3` |  | N times |",
		"- `GAUNTLET_TEST_KEEP`: `--keep` of run",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("reference lacks %q:\n%s", want, md.String())
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--stage":                  "--stage",
		"tofu@1.8.11":              "tofu@1.8.11",
		"--out=a/b":                "--out=a/b",
		"Call to unknown function": "'Call to unknown function'",
		`say "it's"`:               `'say "it'\''s"'`,
		"":                         "''",
		"$HOME":                    "'$HOME'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
