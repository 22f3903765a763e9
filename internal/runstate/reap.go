package runstate

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

const prSetChildSubreaper = 36 // linux/prctl.h

// BecomeSubreaper makes this process the reaper of its orphaned
// descendants (PR_SET_CHILD_SUBREAPER): a provider plugin whose engine
// died becomes this process's child instead of init's, so Reap records
// and reaps it and End ends it.
func BecomeSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", e)
	}
	return nil
}

// Reap runs until ctx ends. It records by pid every orphan this process
// adopted - a provider plugin whose engine died, a daemon's double-forked
// child such as a container shim - so a SIGKILL after this still finds
// it, and reaps those that exit. It waits only for processes that sit
// inside a recorded group without leading it: every child gauntlet starts
// itself leads its own group or shares this process's, so the children
// os/exec waits for are never taken from it.
func (s *State) Reap(ctx context.Context) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCHLD)
	defer signal.Stop(ch)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		s.reapOnce()
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-tick.C:
		}
	}
}

// Adopted returns the adopted orphans recorded so far.
func (s *State) Adopted() []Proc { return s.Snapshot().Procs }

func (s *State) reapOnce() {
	all, err := s.proc.all()
	if err != nil {
		return
	}
	self := os.Getpid()
	selfGroup := syscall.Getpgrp()
	groups := map[int]bool{}
	for _, g := range s.Snapshot().Groups {
		groups[g.PID] = true
	}
	others := openStates.groupsBesides(s)
	now, terr := s.proc.ticks()
	for _, p := range all {
		if p.ppid != self {
			continue
		}
		// Another run of this process (a matrix's runs side by side)
		// started it or its group: it is that run's to reap and end.
		if others[p.pid] || others[p.pgid] && !groups[p.pgid] {
			continue
		}
		member := p.pid != p.pgid && groups[p.pgid]
		if member && p.zombie() {
			var ws syscall.WaitStatus
			syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
			continue
		}
		// Adopted: not a child this process started (those lead a
		// recorded group or share this process's group). A child that
		// leads its own group may also be one a run of this process has
		// just started and not yet recorded (a matrix's runs side by
		// side): it is taken only once it has outlived that moment.
		unclaimed := p.pgid != selfGroup && !groups[p.pid]
		if unclaimed && (terr != nil || now < p.start+uint64(s.adoptAfter.Seconds()*100)) {
			continue
		}
		if !p.zombie() && (member || unclaimed) {
			s.Process(p.pid)
		}
	}
}

// openStates are the records this process holds now. Children are the
// process's, not a run's: a run's reaper asks the others which children
// they started before it takes one for an orphan.
var openStates = &registry{states: map[*State]bool{}}

type registry struct {
	mu     sync.Mutex
	states map[*State]bool
}

func (r *registry) add(s *State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states[s] = true
}

func (r *registry) remove(s *State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.states, s)
}

// groupsBesides are the groups every other open record holds.
func (r *registry) groupsBesides(s *State) map[int]bool {
	r.mu.Lock()
	var others []*State
	for o := range r.states {
		if o != s {
			others = append(others, o)
		}
	}
	r.mu.Unlock()
	out := map[int]bool{}
	for _, o := range others {
		for _, g := range o.Snapshot().Groups {
			out[g.PID] = true
		}
	}
	return out
}
