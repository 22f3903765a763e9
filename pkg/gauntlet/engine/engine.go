// Package engine drives a Terraform-compatible CLI (terraform, tofu, or any
// binary that speaks the same CLI) in a working directory against one
// cluster. Every call gets its own log file, a fully controlled
// environment and a context bound; plans are parsed with terraform-json
// and their counts cross-checked against what the CLI printed.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Engine is one CLI binary and what it can do.
type Engine struct {
	Bin       string
	Profile   Profile
	cliConfig string
	started   func(pid int)
	called    func(*Workspace, Call)
	keep      string
	keepMu    sync.Mutex
	reattach  *reattach
}

// OnEveryCall calls f after every call this Engine's workspaces make
// (e.g. to tally plans per stage). Call it before any workspace runs.
func (e *Engine) OnEveryCall(f func(*Workspace, Call)) { e.called = f }

// KeepFailedLogs copies the log of every call that fails (exits non-zero
// or cannot start) into dir, made on first use, and the call's error and
// Call.Log cite the copy: a run's work directory, where the logs are
// written, is gone after the run, its output folder is not. Call it before
// any workspace runs. Default: the error cites the log where it was
// written.
func (e *Engine) KeepFailedLogs(dir string) { e.keep = dir }

// keepLog copies the log at p into the keep folder and returns the
// copy's path; a name taken already (two workspaces' calls of the same
// number) gets a suffix.
func (e *Engine) keepLog(p string) (string, error) {
	e.keepMu.Lock()
	defer e.keepMu.Unlock()
	if err := os.MkdirAll(e.keep, 0o755); err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	ext := filepath.Ext(p)
	stem := strings.TrimSuffix(filepath.Base(p), ext)
	for n := 1; ; n++ {
		name := stem + ext
		if n > 1 {
			name = fmt.Sprintf("%s-%d%s", stem, n, ext)
		}
		dst := filepath.Join(e.keep, name)
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return "", err
		}
		return dst, f.Close()
	}
}

// OnEveryStart calls f with the pid of every engine process this Engine's
// workspaces start. Each leads its own process group, with the provider
// plugins it starts inside it, so a run can record the group and end
// whatever of it survives (see runstate). Call it before any workspace
// runs.
func (e *Engine) OnEveryStart(f func(pid int)) { e.started = f }

// New detects the engine at bin. cliConfig is the CLI config every call
// runs with (the toolchain's mirror-only config), never the machine's.
func New(ctx context.Context, bin, cliConfig string) (*Engine, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("engine %s: %w", bin, err)
	} else if st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("engine %s: not an executable file", bin)
	}
	if cliConfig == "" {
		return nil, fmt.Errorf("engine %s: a CLI config is required (toolchain.Toolchain.CLIConfig)", bin)
	}
	p, err := DetectProfile(ctx, abs, cliConfig)
	if err != nil {
		return nil, err
	}
	return &Engine{Bin: abs, Profile: p, cliConfig: cliConfig}, nil
}

// Workspace is a root directory the engine works in against one cluster.
type Workspace struct {
	Engine *Engine
	// Dir is the Terraform root.
	Dir string
	// Kubeconfig is what the kubernetes provider reads (KUBE_CONFIG_PATH).
	Kubeconfig string
	// LogDir receives one log file per call.
	LogDir string

	mu    sync.Mutex
	seq   int
	calls []Call
	tape  CallTape
}

// Workspace returns a workspace for dir; logs go to logDir.
func (e *Engine) Workspace(dir, kubeconfig, logDir string) (*Workspace, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".home"), 0o755); err != nil {
		return nil, err
	}
	return &Workspace{Engine: e, Dir: dir, Kubeconfig: kubeconfig, LogDir: logDir}, nil
}

// Call records one CLI invocation.
type Call struct {
	Args     []string
	Log      string
	ExitCode int
	Duration time.Duration
	// Output is stdout and stderr as the CLI printed them (also in Log).
	Output string
}

// Calls returns every call made in this workspace so far.
func (w *Workspace) Calls() []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Call(nil), w.calls...)
}

// CallError is a CLI call that exited non-zero or could not run.
type CallError struct {
	Engine string
	Call   Call
	Err    error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("%s %s: %v (log: %s)%s", e.Engine, strings.Join(e.Call.Args, " "), e.Err, e.Call.Log, errorText(e.Call.Output))
}

func (e *CallError) Unwrap() error { return e.Err }

// ExitCode returns the exit code of a failed call, or -1.
func ExitCode(err error) int {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Call.ExitCode
	}
	return -1
}

// Signal returns the signal a failed call's process died of, or 0 when it
// exited (or never ran).
func Signal(err error) syscall.Signal {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// RunOption adjusts one call.
type RunOption func(*runOpts)

type runOpts struct {
	started []func(*os.Process)
	env     []string
	watch   []io.Writer
	accept  []int
}

// AcceptExit makes an exit with one of codes a success of the call, e.g.
// plan -detailed-exitcode's 2 ("changes present"); the caller reads
// Call.ExitCode.
func AcceptExit(codes ...int) RunOption {
	return func(o *runOpts) { o.accept = append(o.accept, codes...) }
}

// OnStart is called with the engine's process right after it starts, e.g.
// so a wire trigger can signal it at an exact point. Several compose, in
// the order given.
func OnStart(f func(*os.Process)) RunOption {
	return func(o *runOpts) { o.started = append(o.started, f) }
}

// WatchOutput also sends the engine's output to w as it is printed.
// Several compose.
func WatchOutput(w io.Writer) RunOption { return func(o *runOpts) { o.watch = append(o.watch, w) } }

// WithEnv adds environment variables (KEY=VALUE) to one call.
func WithEnv(kv ...string) RunOption { return func(o *runOpts) { o.env = append(o.env, kv...) } }

// Run runs the CLI with args in the workspace. A non-zero exit is a
// *CallError carrying the call; cancelling ctx stops the engine the way
// Ctrl-C does (SIGTERM, state saved), then kills it after 30 s. In a
// workspace with a CallTape, the tape decides whether the engine runs or
// a stand-in replays the call as recorded.
func (w *Workspace) Run(ctx context.Context, args []string, opts ...RunOption) (Call, error) {
	if t := w.Tape(); t != nil {
		return t.Call(ctx, w, args, func(rec *Recorded, ready func()) (Call, error) {
			return w.run(ctx, args, rec, ready, opts)
		})
	}
	return w.run(ctx, args, nil, nil, opts)
}

// run runs the engine, or with rec a stand-in for it (see StandIn).
func (w *Workspace) run(ctx context.Context, args []string, rec *Recorded, ready func(), opts []RunOption) (Call, error) {
	var o runOpts
	for _, f := range opts {
		f(&o)
	}
	w.mu.Lock()
	w.seq++
	logPath := filepath.Join(w.LogDir, fmt.Sprintf("%03d-%s-%s.log", w.seq, w.Engine.Profile.Name, args[0]))
	w.mu.Unlock()
	call := Call{Args: args, Log: logPath, ExitCode: -1}
	logf, err := os.Create(logPath)
	if err != nil {
		return call, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# %s %s\n# dir: %s\n# kubeconfig: %s\n", w.Engine.Bin, strings.Join(args, " "), w.Dir, w.Kubeconfig)
	bin, argv := w.Engine.Bin, args
	var standIn *standIn
	if rec != nil {
		if standIn, err = newStandIn(rec); err != nil {
			return w.failed(call, err)
		}
		defer standIn.remove()
		bin, argv = standIn.command()
		fmt.Fprintf(logf, "# replayed as recorded (took %s then): the engine does not run\n", rec.Duration.Round(time.Millisecond))
	}
	var reattached []string
	if rec == nil {
		var release func()
		reattached, release = w.reattachEnv(args, &o, logf)
		defer release()
	}
	fmt.Fprintln(logf)
	var out strings.Builder
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Dir = w.Dir
	cmd.Env = append(append(w.env(), reattached...), o.env...)
	tee := &teeWriter{a: &out, b: logf, watch: o.watch}
	cmd.Stdout, cmd.Stderr = tee, tee
	// Its own group: the plugins it starts are in it too, so the group
	// names everything of this call even after the engine itself is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return w.failed(call, err)
	}
	if w.Engine.started != nil {
		w.Engine.started(cmd.Process.Pid)
	}
	for _, f := range o.started {
		f(cmd.Process)
	}
	readyDone := standIn.whenWaiting(ctx, ready)
	err = cmd.Wait()
	<-readyDone
	call.Duration = time.Since(start)
	call.Output = out.String()
	call.ExitCode = cmd.ProcessState.ExitCode()
	if rec != nil {
		call.Duration = rec.Duration
		if !rec.Fired && ready != nil {
			ready()
		}
	}
	fmt.Fprintf(logf, "\n# exit %d after %s\n", call.ExitCode, call.Duration.Round(time.Millisecond))
	w.mu.Lock()
	w.calls = append(w.calls, call)
	w.mu.Unlock()
	if w.Engine.called != nil {
		w.Engine.called(w, call)
	}
	if err != nil && ctx.Err() == nil && slices.Contains(o.accept, call.ExitCode) {
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return w.failed(call, err)
	}
	return call, nil
}

// citedLog is the log a failure cites for a call that exited 0 - its
// output is the failure's evidence (no plan summary, JSON that does not
// parse) - kept in the keep folder as a failed call's is (KeepFailedLogs),
// else where it was written.
func (w *Workspace) citedLog(call Call) string {
	if w.Engine.keep == "" {
		return call.Log
	}
	kept, err := w.Engine.keepLog(call.Log)
	if err != nil {
		return fmt.Sprintf("%s (not kept: %v)", call.Log, err)
	}
	return kept
}

// failed is a call's failure: its log kept (KeepFailedLogs) and cited.
func (w *Workspace) failed(call Call, err error) (Call, error) {
	if w.Engine.keep != "" {
		kept, kerr := w.Engine.keepLog(call.Log)
		if kerr != nil {
			err = fmt.Errorf("%w (its log was not kept: %v)", err, kerr)
		} else {
			call.Log = kept
		}
	}
	return call, &CallError{Engine: w.Engine.Profile.Name, Call: call, Err: err}
}

// env is the whole environment of a call: nothing of the machine's own
// Terraform configuration leaks in.
func (w *Workspace) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(w.Dir, ".home"),
		"TF_CLI_CONFIG_FILE=" + w.Engine.cliConfig,
		"KUBE_CONFIG_PATH=" + w.Kubeconfig,
		"TF_IN_AUTOMATION=1",
		"TF_INPUT=0",
		"CHECKPOINT_DISABLE=1",
		"NO_COLOR=1",
	}
}

// teeWriter keeps the CLI's output in memory and in the call's log, in the
// order it was printed (stdout and stderr share it).
type teeWriter struct {
	mu    sync.Mutex
	a     *strings.Builder
	b     *os.File
	watch []io.Writer
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.a.Write(p)
	for _, w := range t.watch {
		w.Write(p)
	}
	return t.b.Write(p)
}

// tailLines is how much of an output with no diagnostic an error keeps:
// the end of it, the whole being in the call's log.
const tailLines = 40

// errorText is what a failed call printed that explains it: everything
// from the first "Error:" diagnostic (or Go "panic:") on, whole - a CLI
// prints all its errors, each several lines long, and any one of them may
// be the cause - or, when it printed neither (a signal, a timeout), the
// output when short, else its last tailLines lines, saying so.
func errorText(s string) string {
	s = humanize(s)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if isErrorLine(l) {
			// A boxed diagnostic opens a line above its "Error:".
			if i > 0 && strings.TrimSpace(lines[i-1]) == "╷" {
				i--
			}
			return ":\n" + strings.TrimSpace(strings.Join(lines[i:], "\n"))
		}
	}
	note := ""
	if len(lines) > tailLines {
		note = fmt.Sprintf("(the last %d of %d lines)\n", tailLines, len(lines))
		lines = lines[len(lines)-tailLines:]
	}
	out := strings.TrimSpace(strings.Join(lines, "\n"))
	if out == "" {
		return ""
	}
	return ":\n" + note + out
}

// Diagnostics splits what a failed call printed into its error
// diagnostics, each whole and trimmed, in the order printed: the units in
// which two calls' failures are compared (two engines print the same
// errors in any order). Output with no "Error:" or "panic:" line has none.
func (e *CallError) Diagnostics() []string { return diagnostics(e.Call.Output) }

func diagnostics(s string) []string {
	s = humanize(s)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if d := strings.TrimSpace(strings.Join(lines[start:end], "\n")); d != "" {
				out = append(out, d)
			}
		}
	}
	for i, l := range lines {
		if !isErrorLine(l) {
			continue
		}
		// A boxed diagnostic opens a line above its "Error:".
		at := i
		if i > 0 && strings.TrimSpace(lines[i-1]) == "╷" {
			at = i - 1
		}
		flush(at)
		start = at
	}
	flush(len(lines))
	return out
}

// isErrorLine reports whether l opens an error diagnostic, plain
// (-no-color) or boxed, or a Go panic.
func isErrorLine(l string) bool {
	l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "│"))
	return strings.HasPrefix(l, "Error: ") || strings.HasPrefix(l, "panic: ")
}
