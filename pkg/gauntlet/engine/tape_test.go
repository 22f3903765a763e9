package engine

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// replaying is a CallTape that replays one recorded outcome, calling
// ready as the tape would.
type replaying struct {
	rec   Recorded
	ready func()
}

func (r *replaying) Call(ctx context.Context, w *Workspace, args []string, run func(*Recorded, func()) (Call, error)) (Call, error) {
	rec := r.rec
	return run(&rec, r.ready)
}

func standInWorkspace(t *testing.T, tape CallTape) *Workspace {
	t.Helper()
	// The engine's binary must never run: a stand-in replaces it.
	e := &Engine{Bin: "/nonexistent/engine", Profile: Profile{Name: "fake"}, cliConfig: "/dev/null"}
	w, err := e.Workspace(t.TempDir(), "/dev/null", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.SetTape(tape)
	return w
}

func TestStandInEndsAsRecorded(t *testing.T) {
	out := "Plan: 1 to add, 0 to change, 0 to destroy.\nError: something\n"
	readyCalled := false
	w := standInWorkspace(t, &replaying{rec: Recorded{Output: out, ExitCode: 3, Duration: 4321 * time.Millisecond}, ready: func() { readyCalled = true }})
	c, err := w.Run(context.Background(), []string{"plan", "-out=x"})
	if ExitCode(err) != 3 || c.ExitCode != 3 {
		t.Fatalf("exit: got %d (%v), want 3", c.ExitCode, err)
	}
	if c.Output != out {
		t.Errorf("output: got %q, want %q", c.Output, out)
	}
	if c.Duration != 4321*time.Millisecond || c.Args[0] != "plan" {
		t.Errorf("call: got %s %v, want the recorded duration and the call's own args", c.Duration, c.Args)
	}
	if !readyCalled {
		t.Error("ready was not called after the stand-in ended")
	}
	if calls := w.Calls(); len(calls) != 1 || calls[0].Duration != c.Duration {
		t.Errorf("the workspace counts %d call(s): %+v", len(calls), calls)
	}
}

// A call a trigger interrupted: the stand-in prints up to the
// acknowledgement, and prints it only once SIGTERM arrives.
func TestStandInTakesTheInterrupt(t *testing.T) {
	intr := NewInterrupter()
	var ackErr error
	rec := Recorded{Output: "creating...\nInterrupt received.\nstopping\n", ExitCode: 1, Fired: true}
	w := standInWorkspace(t, &replaying{rec: rec, ready: func() { ackErr = intr.Interrupt(10 * time.Second) }})
	c, err := w.Run(context.Background(), []string{"apply"}, intr.RunOptions()...)
	if ackErr != nil {
		t.Fatalf("the stand-in did not take the interrupt: %v", ackErr)
	}
	if !intr.Sent() || ExitCode(err) != 1 || c.Output != rec.Output {
		t.Fatalf("sent %v, exit %d (%v), output %q", intr.Sent(), ExitCode(err), err, c.Output)
	}
}

// A call a trigger killed: the stand-in dies of the signal, as the
// engine did, and the caller sees the signal in the exit status.
func TestStandInDiesOfSIGKILL(t *testing.T) {
	var proc *os.Process
	rec := Recorded{Output: "creating...\n", ExitCode: -1, Signal: syscall.SIGKILL, Fired: true}
	w := standInWorkspace(t, &replaying{rec: rec, ready: func() { syscall.Kill(-proc.Pid, syscall.SIGKILL) }})
	_, err := w.Run(context.Background(), []string{"apply"}, OnStart(func(p *os.Process) { proc = p }))
	if sig := Signal(err); sig != syscall.SIGKILL {
		t.Fatalf("want death by SIGKILL, got signal %d (%v)", int(sig), err)
	}
	if Signal(errors.New("never ran")) != 0 {
		t.Fatal("Signal of an error with no process: want 0")
	}
}
