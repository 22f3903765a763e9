// Package runstate records what a gauntlet process starts - the process
// groups its children lead, processes it adopted, its temporary
// directories and the directories under which anything mounted is its own -
// in a state file, so that the next gauntlet process can end and remove
// what one killed with SIGKILL left behind.
//
// Pdeathsig kills a runner's direct children with it, but not their
// children (an engine's provider plugins), and nothing removes its files.
// Every child gauntlet starts leads its own process group, which the
// record names with the leader's start time; Sweep kills what is left in
// those groups and every descendant of it, unmounts, removes the
// directories, and says what it cleaned. Processes are only ever found
// by recorded pid and start time or by recorded group, never by name.
//
// The owner holds an flock on its lock file for as long as it lives: the
// kernel drops it when the owner dies, however it dies, so "the lock can
// be taken" is exactly "the owner is gone", with no pid reuse to fool it.
package runstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/mountinfo"
)

// Record is one gauntlet process's state file.
type Record struct {
	Owner   Proc      `json:"owner"`
	Boot    string    `json:"boot_id"`
	Command string    `json:"command"`
	Created time.Time `json:"created"`
	// Groups are process groups, each named by its leader.
	Groups []Proc `json:"groups,omitempty"`
	// Procs are single processes outside those groups' leaders, e.g.
	// orphans the owner adopted as subreaper.
	Procs []Proc `json:"procs,omitempty"`
	// Dirs are removed whole.
	Dirs []string `json:"dirs,omitempty"`
	// Mounts are roots: whatever is mounted under one is unmounted.
	Mounts []string `json:"mounts,omitempty"`
}

// DefaultDir is where every gauntlet process of this user keeps its
// record: one well-known place, so any later command finds them.
func DefaultDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("gauntlet-runs-%d", os.Getuid()))
}

// State is the live record of this process.
type State struct {
	mu   sync.Mutex
	dir  string
	base string
	lock *os.File
	rec  Record
	proc procFS
	// adoptAfter is how old a group-leading child must be before the
	// reaper takes it for an adopted orphan (see reapOnce).
	adoptAfter time.Duration
}

// Open creates this process's record in dir (DefaultDir when empty) and
// holds its lock until End. command says what the process was doing, for
// the message of whoever cleans up after it.
func Open(dir, command string) (*State, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("run state: %w", err)
	}
	proc := procFS("/proc")
	self, err := proc.stat(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("run state: read this process: %w", err)
	}
	// One process may hold several records at once (runs in parallel in
	// one test binary): each gets its own name.
	f, err := os.CreateTemp(dir, fmt.Sprintf("%d-%d-*.lock", self.pid, self.start))
	if err != nil {
		return nil, fmt.Errorf("run state: %w", err)
	}
	s := &State{dir: dir, base: strings.TrimSuffix(filepath.Base(f.Name()), ".lock"), proc: proc, adoptAfter: 5 * time.Second,
		rec: Record{Owner: self.proc(), Boot: proc.bootID(), Command: command, Created: time.Now().UTC()}}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("run state: lock %s: %w", f.Name(), err)
	}
	s.lock = f
	if err := s.write(); err != nil {
		s.release()
		return nil, err
	}
	openStates.add(s)
	return s, nil
}

// Path is the record file.
func (s *State) Path() string { return filepath.Join(s.dir, s.base+".json") }

// Group records the process group led by pid (a child started with
// Setpgid). Call it right after the child starts.
func (s *State) Group(pid int) error {
	return s.addProc(pid, func(r *Record) *[]Proc { return &r.Groups })
}

// Process records one process.
func (s *State) Process(pid int) error {
	return s.addProc(pid, func(r *Record) *[]Proc { return &r.Procs })
}

func (s *State) addProc(pid int, list func(*Record) *[]Proc) error {
	st, err := s.proc.stat(pid)
	if err != nil {
		// Already gone: nothing of it can be left to clean.
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := list(&s.rec)
	if slices.Contains(*l, st.proc()) {
		return nil
	}
	*l = append(*l, st.proc())
	return s.write()
}

// Dir records a directory to remove; End removes it too.
func (s *State) Dir(path string) error {
	return s.addPath(path, func(r *Record) *[]string { return &r.Dirs })
}

// MountRoot records a directory under which every mount is this
// process's own.
func (s *State) MountRoot(path string) error {
	return s.addPath(path, func(r *Record) *[]string { return &r.Mounts })
}

func (s *State) addPath(path string, list func(*Record) *[]string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := list(&s.rec)
	if !slices.Contains(*l, abs) {
		*l = append(*l, abs)
	}
	return s.write()
}

// write replaces the record atomically: a reader never sees half of it.
func (s *State) write() error {
	b, err := json.MarshalIndent(s.rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.Path() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("run state: %w", err)
	}
	if err := os.Rename(tmp, s.Path()); err != nil {
		return fmt.Errorf("run state: %w", err)
	}
	return nil
}

// Snapshot returns a copy of the record.
func (s *State) Snapshot() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec
	r.Groups, r.Procs = slices.Clone(r.Groups), slices.Clone(r.Procs)
	r.Dirs, r.Mounts = slices.Clone(r.Dirs), slices.Clone(r.Mounts)
	return r
}

// End cleans what the process's own teardown missed - anything still
// alive in its groups and their descendants, its directories - and
// removes the record. Mount roots are left to the teardown of what
// mounted there: a root may be shared (gauntlet's own Docker engine's),
// and another process may use it as soon as this one let go. Call End
// last, after everything was stopped; ctx bounds the wait for killed
// processes.
func (s *State) End(ctx context.Context) (Cleaned, error) {
	s.mu.Lock()
	rec := s.rec
	s.mu.Unlock()
	rec.Mounts = nil
	c, err := clean(ctx, s.proc, rec)
	s.reapOnce() // what was killed and was this process's child
	s.release()
	return c, err
}

func (s *State) release() {
	openStates.remove(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return
	}
	os.Remove(s.Path())
	os.Remove(s.lock.Name())
	s.lock.Close()
	s.lock = nil
}

// Cleaned is what one clean-up did.
type Cleaned struct {
	Owner   Proc
	Command string
	// Killed are "name (pid N)" of the processes ended.
	Killed    []string
	Unmounted []string
	Removed   []string
}

// Empty reports whether nothing had to be cleaned.
func (c Cleaned) Empty() bool {
	return len(c.Killed) == 0 && len(c.Unmounted) == 0 && len(c.Removed) == 0
}

func (c Cleaned) String() string {
	var parts []string
	if len(c.Killed) > 0 {
		parts = append(parts, fmt.Sprintf("ended %d process(es): %s", len(c.Killed), strings.Join(c.Killed, ", ")))
	}
	if len(c.Unmounted) > 0 {
		parts = append(parts, fmt.Sprintf("unmounted %s", strings.Join(c.Unmounted, ", ")))
	}
	if len(c.Removed) > 0 {
		parts = append(parts, fmt.Sprintf("removed %s", strings.Join(c.Removed, ", ")))
	}
	if len(parts) == 0 {
		return "nothing was left"
	}
	return strings.Join(parts, "; ")
}

// Sweep cleans up after every gauntlet process recorded in dir
// (DefaultDir when empty) that no longer runs, and returns what it did
// for each. A record whose owner is alive is left alone; one another
// sweeper is cleaning is skipped. ctx bounds the whole sweep.
func Sweep(ctx context.Context, dir string) ([]Cleaned, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	locks, err := filepath.Glob(filepath.Join(dir, "*.lock"))
	if err != nil {
		return nil, err
	}
	proc := procFS("/proc")
	busy := liveMountRoots(locks)
	var out []Cleaned
	var errs []error
	for _, l := range locks {
		c, err := sweepOne(ctx, proc, l, busy)
		if err != nil {
			errs = append(errs, err)
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, errors.Join(errs...)
}

// liveMountRoots are the mount roots of records whose owner runs: a
// shared root (gauntlet's own Docker engine's) is never unmounted under a
// live process that uses it now.
func liveMountRoots(locks []string) map[string]bool {
	busy := map[string]bool{}
	for _, l := range locks {
		f, err := os.Open(l)
		if err != nil {
			continue
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		f.Close() // closing drops a lock it took
		if err == nil {
			continue // its owner is gone
		}
		b, err := os.ReadFile(strings.TrimSuffix(l, ".lock") + ".json")
		var rec Record
		if err != nil || json.Unmarshal(b, &rec) != nil {
			continue
		}
		for _, m := range rec.Mounts {
			busy[m] = true
		}
	}
	return busy
}

func sweepOne(ctx context.Context, proc procFS, lockPath string, busy map[string]bool) (*Cleaned, error) {
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		return nil, nil // removed by its owner or another sweeper meanwhile
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, nil // the owner runs, or another sweeper has it
	}
	recPath := strings.TrimSuffix(lockPath, ".lock") + ".json"
	b, err := os.ReadFile(recPath)
	if errors.Is(err, os.ErrNotExist) {
		// The owner died before its first write, or after its last.
		os.Remove(lockPath)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run state %s: %w", recPath, err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("run state %s: %w (remove it by hand once nothing of that run is left)", recPath, err)
	}
	if rec.Boot != proc.bootID() {
		// Another boot: its processes and mounts are gone, and start
		// times mean nothing now; only directories can be left.
		rec.Groups, rec.Procs, rec.Mounts = nil, nil, nil
	}
	rec.Mounts = slices.DeleteFunc(rec.Mounts, func(m string) bool { return busy[m] })
	c, err := clean(ctx, proc, rec)
	if err != nil {
		// Keep the record: the next sweep tries again.
		return &c, fmt.Errorf("clean up after gauntlet process %d (%s): %w", rec.Owner.PID, rec.Command, err)
	}
	os.Remove(recPath)
	os.Remove(lockPath)
	return &c, nil
}

// clean kills what rec owns, unmounts, removes directories.
func clean(ctx context.Context, proc procFS, rec Record) (Cleaned, error) {
	c := Cleaned{Owner: rec.Owner, Command: rec.Command}
	var errs []error
	if len(rec.Groups)+len(rec.Procs) > 0 {
		all, err := proc.all()
		if err != nil {
			return c, err
		}
		victims := doomed(all, rec.Groups, rec.Procs, os.Getpid())
		for _, v := range victims {
			if err := syscall.Kill(v.pid, syscall.SIGKILL); err == nil {
				c.Killed = append(c.Killed, fmt.Sprintf("%s (pid %d)", v.comm, v.pid))
			}
		}
		if err := waitGone(ctx, proc, victims); err != nil {
			errs = append(errs, err)
		}
	}
	for _, root := range rec.Mounts {
		done, err := mountinfo.Unmount(filepath.Join(string(proc), "self", "mountinfo"), root)
		c.Unmounted = append(c.Unmounted, done...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range rec.Dirs {
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
			continue
		}
		c.Removed = append(c.Removed, d)
	}
	return c, errors.Join(errs...)
}

// waitGone waits until every victim has exited (a zombie has).
func waitGone(ctx context.Context, proc procFS, victims []stat) error {
	for {
		var left []string
		for _, v := range victims {
			if proc.alive(v.proc()) {
				left = append(left, fmt.Sprintf("%s (pid %d)", v.comm, v.pid))
			}
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still alive after SIGKILL: %s: %w", strings.Join(left, ", "), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
