package runstate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc names one process for as long as it lives: its pid and its start
// time. A pid alone can be reused by an unrelated process once its owner
// is gone; the pair cannot (within one boot).
type Proc struct {
	PID int `json:"pid"`
	// Start is the start time in clock ticks after boot, field 22 of
	// /proc/<pid>/stat.
	Start uint64 `json:"start"`
}

// stat is what /proc/<pid>/stat says about a process.
type stat struct {
	pid, ppid, pgid int
	state           byte
	start           uint64
	comm            string
}

func (s stat) proc() Proc { return Proc{PID: s.pid, Start: s.start} }

// zombie reports whether the process has exited and waits for its parent.
func (s stat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

// parseStat parses a /proc/<pid>/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are read after the last ")".
func parseStat(b []byte) (stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, fmt.Errorf("stat %q: no command name", b)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return stat{}, fmt.Errorf("stat %q: pid: %w", b, err)
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state); start time is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("stat %q: too few fields", b)
	}
	s := stat{pid: pid, state: f[0][0], comm: string(b[open+1 : end])}
	if s.ppid, err = strconv.Atoi(f[1]); err != nil {
		return stat{}, fmt.Errorf("stat %q: ppid: %w", b, err)
	}
	if s.pgid, err = strconv.Atoi(f[2]); err != nil {
		return stat{}, fmt.Errorf("stat %q: pgid: %w", b, err)
	}
	if s.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return stat{}, fmt.Errorf("stat %q: start time: %w", b, err)
	}
	return s, nil
}

// procFS reads processes from a /proc tree (a parameter so tests can
// give a fixture).
type procFS string

func (p procFS) stat(pid int) (stat, error) {
	b, err := os.ReadFile(filepath.Join(string(p), strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// ticks is the time since boot in clock ticks, the unit of a process's
// start time (USER_HZ, 100 on Linux). /proc/uptime holds it to the
// hundredth ("123.45"); it is read as two integers, because through a
// float 123.45*100 can come out as 12344 - a tick before a child that
// started in that same hundredth.
func (p procFS) ticks() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(string(p), "uptime"))
	if err != nil {
		return 0, err
	}
	up, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	whole, frac, _ := strings.Cut(up, ".")
	secs, err := strconv.ParseUint(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("uptime %q: %w", b, err)
	}
	frac = (frac + "00")[:2]
	hundredths, err := strconv.ParseUint(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("uptime %q: %w", b, err)
	}
	return secs*100 + hundredths, nil
}

// all lists every process. Processes that end while it reads are left
// out.
func (p procFS) all() ([]stat, error) {
	ents, err := os.ReadDir(string(p))
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []stat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s, err := p.stat(pid)
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// alive reports whether pr still runs: the pid exists, is not a zombie
// and started when recorded.
func (p procFS) alive(pr Proc) bool {
	s, err := p.stat(pr.PID)
	return err == nil && s.start == pr.Start && !s.zombie()
}

// bootID identifies this boot: start times only compare within one.
func (p procFS) bootID() string {
	b, err := os.ReadFile(filepath.Join(string(p), "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// doomed selects, from every process, what a record owns: members of its
// process groups, its recorded processes, and every descendant of those.
// A group is taken only if its number was not reused: when a process
// leads it (pid == pgid) that leader must have the recorded start time,
// and every member must have started after the group did. (The kernel
// keeps a group's number from being reused while any member lives.)
func doomed(all []stat, groups, procs []Proc, self int) []stat {
	byPID := map[int]stat{}
	children := map[int][]int{}
	for _, s := range all {
		byPID[s.pid] = s
		children[s.ppid] = append(children[s.ppid], s.pid)
	}
	take := map[int]bool{}
	for _, g := range groups {
		if l, ok := byPID[g.PID]; ok && l.pgid == g.PID && l.start != g.Start {
			continue // another group now has that number
		}
		for _, s := range all {
			if s.pgid == g.PID && s.start >= g.Start {
				take[s.pid] = true
			}
		}
	}
	for _, p := range procs {
		if s, ok := byPID[p.PID]; ok && s.start == p.Start {
			take[s.pid] = true
		}
	}
	// Descendants, breadth first: a child always started after its parent.
	queue := make([]int, 0, len(take))
	for pid := range take {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !take[c] {
				take[c] = true
				queue = append(queue, c)
			}
		}
	}
	var out []stat
	for _, s := range all {
		if take[s.pid] && s.pid != self && s.pid > 1 && !s.zombie() {
			out = append(out, s)
		}
	}
	return out
}
