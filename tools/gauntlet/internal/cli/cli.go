// Package cli is gauntlet's command-line machinery. Each command declares
// its flags once, in a Setup function; that one declaration parses the
// command line (flags before and after the positional arguments), prints
// `gauntlet <command> -h` and writes the CLI reference (docs/cli.md), so
// the three cannot disagree.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// The exit codes every command returns (the table in docs/cli.md).
const (
	// ExitClear: the command did what it was asked and what it checked is
	// clear.
	ExitClear = 0
	// ExitNotClear: the command ran and what it checked is not clear (a
	// stage failed, a mutant survived, a soak's runs differ, a gate is not
	// proven).
	ExitNotClear = 1
	// ExitUsage: the command line is wrong; nothing ran.
	ExitUsage = 2
	// ExitCouldNotRun: gauntlet could not do what was asked (set-up,
	// toolchain, cluster, estate, or gauntlet's own failure), so it says
	// nothing about the engine.
	ExitCouldNotRun = 3
)

// Action runs a command with its positional arguments, after its flags
// are parsed.
type Action func(ctx context.Context, args []string) error

// Example is one example invocation shown in -h and the reference.
type Example struct {
	What    string // what it does, one line
	Command string // the command line, from "gauntlet"
}

// Command is one entry of the command table.
type Command struct {
	// Name is the command as typed: "run", or "corpus import" for a verb
	// of a command group.
	Name string
	// Args is the synopsis of the positional arguments ("<estate>",
	// "DIR [estate...]"); empty for none.
	Args string
	// MinArgs and MaxArgs bound the number of positional arguments;
	// MaxArgs < 0 is any number.
	MinArgs, MaxArgs int
	// Summary is one line for the command table.
	Summary string
	// Doc is one paragraph: what the command does and what it writes.
	Doc string
	// Examples are one to three invocations.
	Examples []Example
	// Setup declares the command's flags on fs and returns what runs it.
	// It is called once per invocation, and by -h and the reference
	// generator without running the returned Action.
	Setup func(fs *FlagSet) Action
}

// FlagSet is a command's flags: a flag.FlagSet that also knows which
// environment variable each flag's default comes from.
type FlagSet struct {
	*flag.FlagSet
	env  map[string]string // flag name -> environment variable
	line []string
}

func newFlagSet(name string) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), env: map[string]string{}}
	// Errors and help are said by Parse's caller, once, in gauntlet's words.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Env makes the environment variable env the default of flag name: when
// the flag is not on the command line and env is set, the flag takes
// env's value. -h and the reference name env beside the flag.
func (fs *FlagSet) Env(name, env string) {
	if fs.Lookup(name) == nil {
		panic(fmt.Sprintf("cli: %s: Env(%q, %q) before the flag is defined", fs.Name(), name, env))
	}
	fs.env[name] = env
}

// CommandLine is the command's arguments as typed, flags included (for
// a run's "reproduce it" line), each quoted for a POSIX shell where it
// needs it, so the line joined by spaces can be pasted back.
func (fs *FlagSet) CommandLine() []string {
	out := make([]string, len(fs.line))
	for i, a := range fs.line {
		out[i] = shellQuote(a)
	}
	return out
}

// shellQuote is a in single quotes when a shell would split or expand it.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=@:,+%") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// UsageError is a wrong command line: exit 2, with a pointer to -h.
type UsageError struct {
	Command string // "run", empty for gauntlet itself
	Err     error
}

func (e *UsageError) Error() string {
	if e.Command == "" {
		return fmt.Sprintf("%v (see gauntlet -h)", e.Err)
	}
	return fmt.Sprintf("%v (see gauntlet %s -h)", e.Err, e.Command)
}
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is ExitUsage.
func (e *UsageError) ExitCode() int { return ExitUsage }

// Usagef is a usage error a command finds in its own arguments (a flag
// that needs another, an empty list): exit 2.
func Usagef(command, format string, args ...any) error {
	return &UsageError{Command: command, Err: fmt.Errorf(format, args...)}
}

// ExitError is a command's outcome with its own exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the code the command exits with.
func (e *ExitError) ExitCode() int { return e.Code }

// NotClear is a command that ran and found what it checked not clear:
// exit 1.
func NotClear(err error) error { return &ExitError{Code: ExitNotClear, Err: err} }

// parse parses args for the command, flags anywhere among the positional
// arguments ("--" ends the flags), then applies the environment defaults
// of the flags not given. It returns the positional arguments, flag.ErrHelp
// for -h, or a *UsageError.
func (fs *FlagSet) parse(c *Command, args []string) ([]string, error) {
	fs.line = args
	var pos []string
	rest := args
	for {
		if err := fs.FlagSet.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &UsageError{Command: c.Name, Err: fs.explain(err)}
		}
		consumed := rest[:len(rest)-fs.NArg()]
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		if ended(fs.FlagSet, consumed) {
			pos = append(pos, rest...)
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if err := fs.applyEnv(); err != nil {
		return nil, &UsageError{Command: c.Name, Err: err}
	}
	if len(pos) < c.MinArgs || c.MaxArgs >= 0 && len(pos) > c.MaxArgs {
		return nil, &UsageError{Command: c.Name, Err: fmt.Errorf("want %s, got %s", argsWanted(c), quoteArgs(pos))}
	}
	return pos, nil
}

// ended says whether the flag package stopped at a "--" (it consumes it)
// rather than at a positional argument: the last consumed argument is
// "--" and is not the value of a flag written "-name --".
func ended(fs *flag.FlagSet, consumed []string) bool {
	n := len(consumed)
	if n == 0 || consumed[n-1] != "--" {
		return false
	}
	if n == 1 {
		return true
	}
	prev := consumed[n-2]
	if !strings.HasPrefix(prev, "-") || strings.Contains(prev, "=") {
		return true
	}
	f := fs.Lookup(strings.TrimPrefix(strings.TrimPrefix(prev, "-"), "-"))
	if f == nil {
		return true
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return true
	}
	return false // "-name --": the "--" was name's value
}

// explain turns the flag package's errors into ones that list the valid
// flags.
func (fs *FlagSet) explain(err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		var valid []string
		fs.VisitAll(func(f *flag.Flag) { valid = append(valid, dashed(f.Name)) })
		if len(valid) == 0 {
			return fmt.Errorf("unknown flag %s: %s takes no flags", name, fs.Name())
		}
		return fmt.Errorf("unknown flag %s; valid flags: %s", name, strings.Join(valid, ", "))
	}
	return err
}

func (fs *FlagSet) applyEnv() error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range slices.Sorted(maps.Keys(fs.env)) {
		env := fs.env[name]
		v, ok := os.LookupEnv(env)
		if set[name] || !ok || v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("$%s=%q (the default of --%s): %w", env, v, name, err)
		}
	}
	return nil
}

func argsWanted(c *Command) string {
	switch {
	case c.MaxArgs == 0:
		return "no arguments"
	case c.Args != "":
		return c.Args
	}
	return fmt.Sprintf("%d argument(s)", c.MinArgs)
}

func quoteArgs(a []string) string {
	if len(a) == 0 {
		return "none"
	}
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " ")
}
