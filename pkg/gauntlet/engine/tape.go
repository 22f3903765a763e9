package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// CallTape stands between a workspace and its engine. A matrix runs the
// oracle's side once: its first run records every oracle call, and the
// runs with the other subjects replay them instead of running the engine.
type CallTape interface {
	// Call is asked for every call of the workspace. run(nil, nil) runs
	// the engine; run(rec, ready) runs a stand-in that replays rec (see
	// Recorded), calling ready once it stands where the engine stood when
	// a wire trigger fired in it, or after it ended.
	Call(ctx context.Context, w *Workspace, args []string, run func(rec *Recorded, ready func()) (Call, error)) (Call, error)
}

// Recorded is how one call ended, as a CallTape keeps it.
type Recorded struct {
	Output   string
	ExitCode int
	// Signal is the signal the engine died of, 0 if it exited.
	Signal   syscall.Signal
	Duration time.Duration
	// Fired says a wire trigger fired while the call ran: the stand-in
	// then prints the output up to the engine's interrupt acknowledgement
	// and waits for the trigger to signal it, printing the rest if it is
	// SIGTERM and dying of it if it is SIGKILL, as the engine did.
	Fired bool
}

// SetTape puts t between the workspace and its engine; nil takes it away.
func (w *Workspace) SetTape(t CallTape) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tape = t
}

// Tape is the workspace's CallTape, nil if it has none.
func (w *Workspace) Tape() CallTape {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tape
}

// standIn is a shell that prints a recorded call's output and ends as the
// engine did. It is a real process in the engine's place, so everything
// around a call (its process group, OnStart, a trigger's signal, the exit
// status a caller inspects) works unchanged.
type standIn struct {
	dir   string
	fired bool
}

// standInWait bounds how long a stand-in waits for a trigger's signal.
const standInWait = 120 * time.Second

func newStandIn(rec *Recorded) (*standIn, error) {
	dir, err := os.MkdirTemp("", "gauntlet-standin-")
	if err != nil {
		return nil, err
	}
	s := &standIn{dir: dir, fired: rec.Fired}
	pre, post := rec.Output, ""
	if rec.Fired {
		if i := strings.Index(rec.Output, string(interruptAck)); i >= 0 {
			// From the start of the acknowledgement's line.
			i = strings.LastIndex(rec.Output[:i], "\n") + 1
			pre, post = rec.Output[:i], rec.Output[i:]
		}
	}
	end := fmt.Sprintf("exit %d", rec.ExitCode)
	if rec.Signal != 0 {
		end = fmt.Sprintf("kill -%d $$", int(rec.Signal))
	}
	var script string
	if rec.Fired {
		// An engine that died of the trigger's signal: the stand-in dies
		// of whatever signal it gets. One that took SIGTERM and exited:
		// the stand-in acknowledges it as the engine did. A stand-in no
		// trigger signals gives up with 97, an exit no engine recorded.
		trap := ""
		if rec.Signal == 0 {
			trap = fmt.Sprintf("trap 'cat %q; %s' TERM\n", filepath.Join(dir, "post"), end)
		}
		script = fmt.Sprintf("%scat %q\n: >%q\ni=0\nwhile [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done\nexit 97\n",
			trap, filepath.Join(dir, "pre"), filepath.Join(dir, "ready"), int(standInWait/(100*time.Millisecond)))
	} else {
		script = fmt.Sprintf("cat %q\n%s\n", filepath.Join(dir, "pre"), end)
	}
	for name, body := range map[string]string{"pre": pre, "post": post, "run.sh": script} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return s, nil
}

func (s *standIn) command() (string, []string) {
	return "/bin/sh", []string{filepath.Join(s.dir, "run.sh")}
}

func (s *standIn) remove() { os.RemoveAll(s.dir) }

// whenWaiting calls ready once a stand-in for a call a trigger fired in
// has printed what the engine printed before it and waits for the
// trigger's signal (bounded); the returned channel closes after. For any
// other call it is closed at once: run calls ready after the end.
func (s *standIn) whenWaiting(ctx context.Context, ready func()) <-chan struct{} {
	done := make(chan struct{})
	if s == nil || !s.fired || ready == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		bound := time.After(standInWait)
		for {
			if _, err := os.Stat(filepath.Join(s.dir, "ready")); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-bound:
				return
			case <-tick.C:
			}
		}
		ready()
	}()
	return done
}
