package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/wordwrap"
)

// Exit is one row of the exit-code table.
type Exit struct {
	Code    string // "0", "130/143"
	Meaning string
}

// Exits is the table every command follows, with a program's own codes
// (extra) before the cancellations.
func Exits(extra ...Exit) []Exit {
	return append(append([]Exit{
		{"0", "clear: the command did what was asked, and what it checked is clear (or it only reports, and reported)"},
		{"1", "not clear: it ran, and what it checked is not clear - a stage failed, a mutant survived, a soak's runs differ, a gate is blocked"},
		{"2", "usage: the command line is wrong (unknown command or flag, missing or extra argument, a flag that needs another); nothing ran"},
		{"3", "could not run: set-up, toolchain, estate, cluster or gauntlet's own failure; it says nothing about the engine"},
	}, extra...),
		Exit{"130/143", "cancelled by SIGINT (Ctrl-C) / SIGTERM: 128 + the signal's number, as a shell reports it; everything started was torn down"})
}

// App is a command-line program: its command table and where it writes.
type App struct {
	Name     string // "gauntlet"
	Doc      string // a paragraph on top of the usage
	Commands []Command
	// Exits is the exit-code table for usage and the reference
	// (default Exits()).
	Exits []Exit
	// ExitNote is said under the exit-code table.
	ExitNote string
	// Before runs once a command line has parsed, before its Action.
	Before         func(ctx context.Context)
	Stdout, Stderr io.Writer
}

// signalled is the cause a signal cancels a run's context with
// (gauntlet.SignalCause): its exit code is 128+the signal's number.
type signalled interface {
	Signal() os.Signal
	ExitCode() int
}

// ExitCode maps a command's error, and the cause its context was
// cancelled with, to the exit code (the table in Exits): nil is 0, a
// *UsageError 2, a signal's cancellation 128+its number, an *ExitError
// its code, anything else 3 - gauntlet could not do what was asked.
func ExitCode(err, cause error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return ExitClear
	}
	var u *UsageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	var s signalled
	if cause != nil && errors.As(cause, &s) {
		return s.ExitCode()
	}
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitCouldNotRun
}

// Run runs the command args names and returns the exit code.
func (a *App) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		a.usage(a.Stderr)
		return ExitUsage
	}
	switch {
	case isHelp(args[0]):
		a.usage(a.Stdout)
		return ExitClear
	case args[0] == "help":
		if len(args) == 1 {
			a.usage(a.Stdout)
			return ExitClear
		}
		if len(args) == 2 && len(a.verbs(args[1])) > 0 {
			a.groupUsage(a.Stdout, args[1])
			return ExitClear
		}
		c, _, err := a.find(args[1:])
		if err != nil {
			return a.fail(err)
		}
		if c == nil {
			a.groupUsage(a.Stdout, args[1])
			return ExitClear
		}
		a.Help(a.Stdout, c)
		return ExitClear
	}
	c, rest, err := a.find(args)
	if err != nil {
		return a.fail(err)
	}
	if c == nil {
		// A command group asked for help: `gauntlet corpus -h`.
		a.groupUsage(a.Stdout, args[0])
		return ExitClear
	}
	fs := newFlagSet(c.Name)
	action := c.Setup(fs)
	pos, err := fs.parse(c, rest)
	if errors.Is(err, flag.ErrHelp) {
		a.Help(a.Stdout, c)
		return ExitClear
	}
	if err == nil {
		if a.Before != nil {
			a.Before(ctx)
		}
		err = action(ctx, pos)
	}
	if err != nil {
		fmt.Fprintf(a.Stderr, "%s %s: %v\n", a.Name, c.Name, err)
	}
	return ExitCode(err, context.Cause(ctx))
}

func (a *App) fail(err error) int {
	fmt.Fprintf(a.Stderr, "%s: %v\n", a.Name, err)
	return ExitCode(err, nil)
}

// find picks the command args start with. A command group's name alone
// ("corpus") followed by -h returns a nil command; followed by anything
// else it is a usage error naming the group's verbs.
func (a *App) find(args []string) (*Command, []string, error) {
	for i := range a.Commands {
		words := strings.Fields(a.Commands[i].Name)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			return &a.Commands[i], args[len(words):], nil
		}
	}
	if verbs := a.verbs(args[0]); len(verbs) > 0 {
		if len(args) > 1 && isHelp(args[1]) {
			return nil, nil, nil
		}
		got := "nothing"
		if len(args) > 1 {
			got = fmt.Sprintf("%q", args[1])
		}
		return nil, nil, &UsageError{Command: args[0], Err: fmt.Errorf("%s needs one of: %s; got %s", args[0], strings.Join(verbs, ", "), got)}
	}
	return nil, nil, &UsageError{Err: fmt.Errorf("unknown command %q; commands: %s", args[0], strings.Join(a.names(), ", "))}
}

// verbs are the verbs of command group g ("fetch" and "import" of
// "corpus").
func (a *App) verbs(g string) []string {
	var out []string
	for _, c := range a.Commands {
		if group, verb, ok := strings.Cut(c.Name, " "); ok && group == g {
			out = append(out, verb)
		}
	}
	return out
}

func (a *App) names() []string {
	var out []string
	for _, c := range a.Commands {
		out = append(out, c.Name)
	}
	return out
}

func (a *App) exits() []Exit {
	if a.Exits != nil {
		return a.Exits
	}
	return Exits()
}

func (a *App) usage(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nusage: %s <command> [arguments] [flags]\n\ncommands:\n", Wrap(a.Doc, 100, ""), a.Name)
	width := 0
	for _, c := range a.Commands {
		width = max(width, len(c.Name))
	}
	for _, c := range a.Commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nexit codes:\n")
	for _, e := range a.exits() {
		fmt.Fprintf(w, "  %-7s  %s\n", e.Code, e.Meaning)
	}
	if a.ExitNote != "" {
		fmt.Fprintf(w, "%s\n", Wrap(a.ExitNote, 100, "  "))
	}
	fmt.Fprintf(w, "\n`%s <command> -h` shows a command's flags and examples; docs/cli.md has them all.\n", a.Name)
}

func (a *App) groupUsage(w io.Writer, g string) {
	fmt.Fprintf(w, "usage: %s %s <verb> ...\n\n", a.Name, g)
	for _, c := range a.Commands {
		if group, _, ok := strings.Cut(c.Name, " "); ok && group == g {
			fmt.Fprintf(w, "  %s %-16s %s\n", a.Name, c.Name, c.Summary)
		}
	}
}

// Help writes a command's usage: synopsis, paragraph, flags with their
// defaults and environment variables, examples.
func (a *App) Help(w io.Writer, c *Command) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", synopsis(a.Name, c), Wrap(c.Doc, 100, ""))
	flags := Flags(c)
	if len(flags) > 0 {
		fmt.Fprintf(w, "\nflags:\n")
		for _, f := range flags {
			fmt.Fprintf(w, "  %s\n%s\n", f.Spelling(), Wrap(f.Usage+f.defaults(), 100, "        "))
		}
	}
	if len(c.Examples) > 0 {
		fmt.Fprintf(w, "\nexamples:\n")
		for _, e := range c.Examples {
			fmt.Fprintf(w, "  # %s\n  %s\n", e.What, e.Command)
		}
	}
}

func synopsis(app string, c *Command) string {
	s := app + " " + c.Name
	if c.Args != "" {
		s += " " + c.Args
	}
	if len(Flags(c)) > 0 {
		s += " [flags]"
	}
	return s
}

// FlagDoc is one flag as -h and the reference show it. A flag whose
// zero value stands for something else ends its usage with
// "(default: what)", which becomes its Default.
type FlagDoc struct {
	Name        string
	Placeholder string // "DIR"; empty for a boolean flag
	Usage       string
	Default     string // empty when the zero value
	Described   bool   // Default is words ("one per two cores"), not a value
	Env         string // the environment variable it defaults from
}

// Spelling is the flag as typed: "--out DIR".
func (f FlagDoc) Spelling() string {
	if f.Placeholder == "" {
		return dashed(f.Name)
	}
	return dashed(f.Name) + " " + f.Placeholder
}

// dashed is a flag as gauntlet writes it: -n, --substrate (the flag
// package takes either number of dashes).
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func (f FlagDoc) defaults() string {
	var parts []string
	if f.Default != "" {
		parts = append(parts, "default: "+f.Default)
	}
	if f.Env != "" {
		parts = append(parts, "env $"+f.Env)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// Flags are a command's flags, by name.
func Flags(c *Command) []FlagDoc {
	fs := newFlagSet(c.Name)
	c.Setup(fs)
	var out []FlagDoc
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, usage := flag.UnquoteUsage(f)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			placeholder = ""
		}
		d := FlagDoc{Name: f.Name, Placeholder: placeholder, Usage: usage, Env: fs.env[f.Name]}
		switch f.DefValue {
		case "", "false", "0", "[]", "map[]":
			// A zero value that stands for something else says what in
			// its usage, last: "... (default: out/<estate>)".
			if i := strings.LastIndex(usage, " (default: "); i >= 0 && strings.HasSuffix(usage, ")") {
				d.Usage, d.Default, d.Described = usage[:i], usage[i+len(" (default: "):len(usage)-1], true
			}
		default:
			d.Default = f.DefValue
		}
		out = append(out, d)
	})
	return out
}

// Wrap folds s into lines of at most width, each starting with indent (a
// longer word stands alone): help text, and the generated pages' long
// lines.
func Wrap(s string, width int, indent string) string {
	lines := wordwrap.Lines(s, width-len(indent))
	for i := range lines {
		lines[i] = indent + lines[i]
	}
	return strings.Join(lines, "\n")
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }
