package engine

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// interruptAck is what terraform and tofu print once they have taken an
// interrupt: they stop the operation first and say so after, so once it is
// printed no new resource operation can start.
var interruptAck = []byte("Interrupt received")

// Interrupter delivers SIGTERM to a running engine and waits until the
// engine has taken it. A signal alone races with the engine's own
// progress: on a loaded machine the engine can start its next operation
// before its signal handler runs. Called from a wire trigger, which holds
// every new request until it returns, Interrupt closes that race.
type Interrupter struct {
	mu    sync.Mutex
	proc  *os.Process
	out   []byte
	acked chan struct{}
	sent  bool
}

// NewInterrupter returns an Interrupter; pass RunOptions to the call.
func NewInterrupter() *Interrupter { return &Interrupter{acked: make(chan struct{})} }

// RunOptions wire the Interrupter to one engine call.
func (i *Interrupter) RunOptions() []RunOption {
	return []RunOption{
		OnStart(func(p *os.Process) { i.mu.Lock(); i.proc = p; i.mu.Unlock() }),
		WatchOutput(i),
	}
}

// Write watches the engine's output for its acknowledgement.
func (i *Interrupter) Write(p []byte) (int, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.sent && i.out != nil {
		i.out = append(i.out, p...)
		if bytes.Contains(i.out, interruptAck) {
			close(i.acked)
			i.out = nil
		}
	}
	return len(p), nil
}

// Interrupt sends SIGTERM and waits, at most timeout, for the engine to
// acknowledge it.
func (i *Interrupter) Interrupt(timeout time.Duration) error {
	i.mu.Lock()
	if i.proc == nil || i.sent {
		i.mu.Unlock()
		return fmt.Errorf("interrupt: no running engine, or already interrupted")
	}
	i.sent, i.out = true, []byte{}
	err := i.proc.Signal(syscall.SIGTERM)
	i.mu.Unlock()
	if err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	select {
	case <-i.acked:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("interrupt: the engine did not acknowledge SIGTERM within %s", timeout)
	}
}

// Sent reports whether Interrupt sent the signal.
func (i *Interrupter) Sent() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.sent
}
