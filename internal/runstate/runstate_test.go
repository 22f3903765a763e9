package runstate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/mountinfo"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses must not shift fields.
	line := "4242 (a) b (c)) S 17 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615"
	s, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if s.pid != 4242 || s.ppid != 17 || s.pgid != 4240 || s.state != 'S' || s.start != 987654 || s.comm != "a) b (c)" {
		t.Fatalf("parsed %+v", s)
	}
	if _, err := parseStat([]byte("12 (x) S 1 2")); err == nil {
		t.Fatal("a short stat line parsed")
	}
	self, err := procFS("/proc").stat(os.Getpid())
	if err != nil || self.pid != os.Getpid() || self.start == 0 {
		t.Fatalf("this process: %+v, %v", self, err)
	}
}

// Uptime is read to the exact hundredth: through a float, about one
// value in twenty came out a tick early, and a child started in that
// hundredth looked younger than it was (CI saw the reaper pass it over).
func TestTicksAreExact(t *testing.T) {
	dir := t.TempDir()
	for up, want := range map[string]uint64{
		"12345.67 4.00\n": 1234567,
		"5.1 1.00\n":      510,
		"7 0\n":           700,
		"137583.77 3.1\n": 13758377, // a float gives 13758376
	} {
		if err := os.WriteFile(filepath.Join(dir, "uptime"), []byte(up), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := procFS(dir).ticks(); err != nil || got != want {
			t.Errorf("ticks of %q = %d, %v; want %d", up, got, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "uptime"), []byte("x.1 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := procFS(dir).ticks(); err == nil {
		t.Error("a malformed uptime parsed")
	}
}

func TestDoomed(t *testing.T) {
	all := []stat{
		{pid: 1, ppid: 0, pgid: 1, start: 1, state: 'S'},
		{pid: 100, ppid: 1, pgid: 100, start: 500, state: 'S'},   // recorded group's leader
		{pid: 101, ppid: 1, pgid: 100, start: 510, state: 'S'},   // its orphaned member
		{pid: 102, ppid: 101, pgid: 102, start: 520, state: 'S'}, // a descendant that left the group
		{pid: 103, ppid: 101, pgid: 100, start: 530, state: 'Z'}, // a zombie: nothing to kill
		{pid: 200, ppid: 1, pgid: 200, start: 900, state: 'S'},   // group 200 now led by someone else
		{pid: 201, ppid: 200, pgid: 200, start: 901, state: 'S'},
		{pid: 300, ppid: 1, pgid: 300, start: 50, state: 'S'},  // group 300: leader gone, member older than the record
		{pid: 400, ppid: 1, pgid: 1, start: 700, state: 'S'},   // recorded process
		{pid: 401, ppid: 1, pgid: 1, start: 999, state: 'S'},   // pid recorded with another start time
		{pid: 500, ppid: 1, pgid: 100, start: 600, state: 'S'}, // this process
	}
	groups := []Proc{{100, 500}, {200, 800}, {300, 60}}
	procs := []Proc{{400, 700}, {401, 701}}
	var got []int
	for _, s := range doomed(all, groups, procs, 500) {
		got = append(got, s.pid)
	}
	slices.Sort(got)
	if want := []int{100, 101, 102, 400}; !slices.Equal(got, want) {
		t.Fatalf("doomed %v, want %v", got, want)
	}
}

func TestOwnRecordIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	keep := t.TempDir()
	if err := st.Dir(keep); err != nil {
		t.Fatal(err)
	}
	cleaned, err := Sweep(context.Background(), dir)
	if err != nil || len(cleaned) != 0 {
		t.Fatalf("swept a live owner's record: %v, %v", cleaned, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a live owner's directory is gone: %v", err)
	}
	c, err := st.End(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.Removed, keep) {
		t.Fatalf("End did not remove %s: %+v", keep, c)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("End left %v", left)
	}
}

// TestSweepAfterSIGKILL: a helper process records a process group and a
// directory, becomes a subreaper, and its group's shell exits leaving two
// orphans it adopts and records; the test SIGKILLs the helper. Sweep must
// end both orphans (by recorded group and pid, never by name) and remove
// the directory.
func TestSweepAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "work")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNSTATE_HELPER="+dir, "RUNSTATE_WORK="+work)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var orphans []int
	sc := bufio.NewScanner(out)
	deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	for sc.Scan() {
		if pids, ok := strings.CutPrefix(sc.Text(), "adopted "); ok {
			for _, f := range strings.Fields(pids) {
				pid, _ := strconv.Atoi(f)
				orphans = append(orphans, pid)
			}
			break
		}
	}
	deadline.Stop()
	if len(orphans) != 2 {
		t.Fatalf("helper did not report its two adopted orphans (got %v)", orphans)
	}
	for _, pid := range orphans {
		defer syscall.Kill(pid, syscall.SIGKILL) // only if the test fails
	}
	var rec Record
	recs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	b, _ := os.ReadFile(recs[0])
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	for _, pid := range orphans {
		if !slices.ContainsFunc(rec.Procs, func(p Proc) bool { return p.PID == pid }) {
			t.Fatalf("orphan %d is not in the record's procs %v", pid, rec.Procs)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cleaned, err := Sweep(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cleaned) != 1 || cleaned[0].Owner.PID != cmd.Process.Pid {
		t.Fatalf("cleaned %+v", cleaned)
	}
	t.Logf("cleaned: %s", cleaned[0])
	if len(cleaned[0].Killed) != 2 || !slices.Contains(cleaned[0].Removed, work) {
		t.Fatalf("cleaned %s; want both orphans ended and %s removed", cleaned[0], work)
	}
	p := procFS("/proc")
	for _, pid := range orphans {
		if s, err := p.stat(pid); err == nil && !s.zombie() {
			t.Errorf("orphan %d (%s) is alive after the sweep", pid, s.comm)
		}
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", work, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("the sweep left %v", left)
	}
	again, err := Sweep(ctx, dir)
	if err != nil || len(again) != 0 {
		t.Errorf("a second sweep found %v, %v", again, err)
	}
}

func TestMain(m *testing.M) {
	if dir := os.Getenv("RUNSTATE_HELPER"); dir != "" {
		if err := helper(dir, os.Getenv("RUNSTATE_WORK")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// helper is the process the test kills: it never returns on success.
func helper(dir, work string) error {
	if err := BecomeSubreaper(); err != nil {
		return err
	}
	st, err := Open(dir, "helper")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	if err := st.Dir(work); err != nil {
		return err
	}
	go st.Reap(context.Background())
	// The shell leads its group, starts two sleeps in it and exits:
	// they are orphans, adopted by this process.
	sh := exec.Command("sh", "-c", "sleep 300 >/dev/null & echo $!; sleep 300 >/dev/null & echo $!")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sh.Stderr = os.Stderr
	r, err := sh.StdoutPipe()
	if err != nil {
		return err
	}
	if err := sh.Start(); err != nil {
		return err
	}
	if err := st.Group(sh.Process.Pid); err != nil {
		return err
	}
	var pids []int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			return err
		}
		pids = append(pids, pid)
	}
	if err := sh.Wait(); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// The shell itself may be recorded too: the reaper can see it in the
		// instant between its start and its group being recorded (harmless:
		// it is this process's own child either way). The orphans must be there.
		have := map[int]bool{}
		for _, p := range st.Adopted() {
			have[p.PID] = true
		}
		if have[pids[0]] && have[pids[1]] {
			fmt.Printf("adopted %d %d\n", pids[0], pids[1])
			select {}
		}
	}
	return fmt.Errorf("adopted %v, want %v", st.Adopted(), pids)
}

// TestCleanUnmountsThenRemoves: a record's mount roots are unmounted
// (deepest first) before its directories are removed.
func TestCleanUnmountsThenRemoves(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	root := filepath.Join(t.TempDir(), "run")
	inner := filepath.Join(root, "a")
	for _, m := range []string{root, inner} {
		if err := os.MkdirAll(m, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", m, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("cannot mount a tmpfs here: %v", err)
		}
		defer syscall.Unmount(m, syscall.MNT_DETACH) // only if the test fails
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := clean(ctx, procFS("/proc"), Record{Mounts: []string{root}, Dirs: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{inner, root}; !slices.Equal(c.Unmounted, want) || !slices.Contains(c.Removed, root) {
		t.Fatalf("cleaned %+v, want %v unmounted and %s removed", c, want, root)
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	if left := mountinfo.Under(string(b), root); len(left) > 0 {
		t.Errorf("still mounted: %v", left)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", root, err)
	}
}

func TestOneProcessManyRecords(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, "b")
	if err != nil {
		t.Fatalf("a second record in the same process: %v", err)
	}
	if a.Path() == b.Path() {
		t.Fatalf("both records at %s", a.Path())
	}
	for _, s := range []*State{a, b} {
		if _, err := s.End(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

// Two runs side by side in one process: a child that one run started is
// never taken by the other's reaper for an orphan, so the other's End
// leaves it running; a child no run claims is still taken.
func TestSideBySideRunsKeepTheirChildren(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, "b")
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	a.adoptAfter = 0 // a's reaper may take the unclaimed child at once
	bs, nobody := start(), start()
	if err := b.Group(bs.Process.Pid); err != nil {
		t.Fatal(err)
	}
	a.reapOnce()
	taken := map[int]bool{}
	for _, p := range a.Snapshot().Procs {
		taken[p.PID] = true
	}
	if taken[bs.Process.Pid] {
		t.Errorf("run a took run b's child %d for an orphan", bs.Process.Pid)
	}
	if !taken[nobody.Process.Pid] {
		t.Errorf("run a did not take the unclaimed child %d (took %v)", nobody.Process.Pid, taken)
	}
	if _, err := a.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(bs.Process.Pid, 0); err != nil {
		t.Fatalf("run a's End ended run b's child: %v", err)
	}
	c, err := b.End(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Killed) != 1 {
		t.Fatalf("run b's End ended %v, want its one child", c.Killed)
	}
}

// A child another run has just started leads its own group before that
// run records it: the reaper must not take it for an orphan in that
// moment, or its End kills the other run's engine (seen in an 8-engine
// matrix: one run's teardown ended the next run's tofu mid-stage).
func TestJustStartedChildIsNotAdopted(t *testing.T) {
	a, err := Open(t.TempDir(), "a")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	a.reapOnce()
	for _, p := range a.Snapshot().Procs {
		if p.PID == cmd.Process.Pid {
			t.Fatalf("the reaper took a child started %s ago for an orphan", "moments")
		}
	}
	if _, err := a.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("End ended a child it never owned: %v", err)
	}
}
