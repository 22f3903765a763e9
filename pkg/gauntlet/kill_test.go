package gauntlet_test

// A real-cluster test: it builds the gauntlet CLI, starts real runs of
// the metrics-server estate (two local control planes, both engines and
// their provider plugins), SIGKILLs the runner at three points and
// interrupts it at one. It took 40 s to 2 minutes on two cores shared
// with other work, so it runs with the other tests; `go test -short`
// leaves it out.

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

	"github.com/gauntlet-k8s/gauntlet/internal/runstate"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
)

// TestSIGKILLLeavesNothing kills a real run with SIGKILL during cluster
// start, mid-apply (an engine and its provider plugins running) and
// during teardown, then runs another gauntlet command and shows that
// nothing of the killed run survives it: no process it started (by the
// pids and groups it recorded, and every descendant seen before the
// kill), no port its processes listened on, no temp dir, no mount. A
// fourth run gets Ctrl-C (SIGINT) mid-apply: exit 130, its page says
// cancelled, and it leaves nothing itself.
func TestSIGKILLLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("real clusters, up to two minutes: not with -short")
	}
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("builds the CLI with the go command, which a Bazel test sandbox does not have; `go test ./pkg/gauntlet/` runs it")
	}
	spec(t) // the corpus file in the cache
	testenv.Toolchain(t, "terraform", "tofu", "terraform-provider-kubernetes", "terraform-provider-random", "etcd", "kube-apiserver",
		"kube-controller-manager", "kube-scheduler", "kwok")
	bin := filepath.Join(t.TempDir(), "gauntlet")
	build := exec.Command("go", "build", "-o", bin, "github.com/gauntlet-k8s/gauntlet/tools/gauntlet")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the CLI: %v\n%s", err, out)
	}
	estates, err := filepath.Abs(filepath.Join("..", "..", "estates"))
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		// sig is what stops the run: SIGKILL unless set.
		sig syscall.Signal
		// at returns what reports the moment to kill, from a progress
		// line and the run's processes at that moment.
		at func() func(line string, procs []procInfo) bool
		// shown must have held at the kill, so the case kills what it says.
		shown func(procs []procInfo) string
	}{
		{
			name: "cluster start",
			at: func() func(string, []procInfo) bool {
				return func(line string, _ []procInfo) bool { return strings.Contains(line, ": etcd ready in") }
			},
			shown: func(procs []procInfo) string {
				return need(procs, func(p procInfo) bool { return p.comm == "etcd" }, "an etcd")
			},
		},
		{
			name: "mid-apply",
			// An engine applying, with a provider plugin (its child).
			at: func() func(string, []procInfo) bool {
				return func(_ string, procs []procInfo) bool { return len(plugins(procs, "apply")) > 0 }
			},
			shown: func(procs []procInfo) string {
				return need(procs, func(p procInfo) bool { return len(plugins(procs, "apply")) > 0 }, "a provider plugin under an applying engine")
			},
		},
		{
			name: "teardown",
			// The last selected stage has ended and the teardown has
			// stopped a kwok (the last component started, the first
			// stopped) while kube-apiservers still run.
			at: func() func(string, []procInfo) bool {
				ended := false
				return func(line string, procs []procInfo) bool {
					ended = ended || strings.Contains(line, "stage cold_deploy ") && (strings.Contains(line, " pass in ") || strings.Contains(line, " fail in "))
					kwoks := 0
					for _, p := range procs {
						if p.comm == "kwok" {
							kwoks++
						}
					}
					return ended && kwoks < 2 && slices.ContainsFunc(procs, func(p procInfo) bool { return p.comm == "kube-apiserver" })
				}
			},
			shown: func(procs []procInfo) string {
				return need(procs, func(p procInfo) bool { return p.comm == "kube-apiserver" }, "a kube-apiserver")
			},
		},
		{
			// Ctrl-C mid-apply: exit 130, the page says cancelled, and
			// the run itself leaves nothing for the next command to clean.
			// (That run --record refuses a cancelled run is
			// conformance's TestRecordRefuses: --record needs a clean
			// checkout as its working directory.)
			name: "Ctrl-C mid-apply",
			sig:  syscall.SIGINT,
			at: func() func(string, []procInfo) bool {
				return func(_ string, procs []procInfo) bool { return len(plugins(procs, "apply")) > 0 }
			},
			shown: func(procs []procInfo) string {
				return need(procs, func(p procInfo) bool { return len(plugins(procs, "apply")) > 0 }, "a provider plugin under an applying engine")
			},
		},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			tmp := t.TempDir()
			env := append(os.Environ(), "TMPDIR="+tmp)
			sig := tc.sig
			if sig == 0 {
				sig = syscall.SIGKILL
			}
			args := []string{"run", "corpus-k8s-metrics-server", "--offline", "--stages", "cold_deploy", "--estates", estates, "--out", filepath.Join(tmp, "out")}
			run := exec.Command(bin, args...)
			run.Dir, run.Env = tmp, env
			stderr, err := run.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			defer run.Process.Kill()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			go func() { <-ctx.Done(); run.Process.Kill() }()

			lines := make(chan string, 256)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			at := tc.at()
			var seen []procInfo
			var last string
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
		wait:
			for {
				line := ""
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the run ended before the kill point (last line: %s)", last)
					}
					line, last = l, l
				case <-tick.C:
				case <-ctx.Done():
					t.Fatalf("no kill point within 3 minutes (last line: %s)", last)
				}
				procs := tree(run.Process.Pid)
				if at(line, procs) {
					seen = procs
					break wait
				}
			}
			// Sockets close as their processes die: read them first.
			ports := listening(seen)
			if err := run.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// What was alive at the kill: every descendant, the recorded
			// groups' members, their listening ports, the state records.
			seen = append(seen, tree(run.Process.Pid)...)
			recs := records(t, tmp)
			go func() {
				for range lines {
				}
			}()
			err = run.Wait()
			if sig != syscall.SIGKILL {
				if code := run.ProcessState.ExitCode(); code != 130 {
					t.Errorf("exit %d after SIGINT (%v), want 130", code, err)
				}
				page, err := os.ReadFile(filepath.Join(tmp, "out", "evidence.md"))
				if err != nil || !strings.Contains(string(page), "Cancelled by interrupt during stage Cold deploy (cold_deploy)") {
					t.Errorf("the page does not say the run was cancelled during cold_deploy (%v):\n%s", err, page)
				}
				if left := records(t, tmp); len(left) != 0 {
					t.Errorf("the interrupted run left its state record: %+v", left)
				}
			}
			if why := tc.shown(seen); why != "" {
				t.Fatalf("the kill came too late or too early: %s", why)
			}
			if len(ports) == 0 {
				t.Fatalf("the run's processes listened on no port at the kill: the port check would prove nothing")
			}
			t.Logf("signal %q to the runner (pid %d) with %d descendant(s) alive, listening on %d port(s); %d record(s)", sig, run.Process.Pid, len(seen)-1, len(ports), len(recs))
			if len(recs) != 1 {
				t.Fatalf("want the killed run's one state record, have %d", len(recs))
			}

			// Any gauntlet command cleans up first.
			next := exec.CommandContext(ctx, bin, "list", "--estates", estates)
			next.Dir, next.Env = tmp, env
			out, err := next.CombinedOutput()
			if err != nil {
				t.Fatalf("gauntlet list: %v\n%s", err, out)
			}
			said := strings.Contains(string(out), fmt.Sprintf("cleaned up after gauntlet process %d", run.Process.Pid))
			switch {
			case sig == syscall.SIGKILL && !said:
				t.Errorf("gauntlet list did not say what it cleaned:\n%s", out)
			case sig != syscall.SIGKILL && said:
				t.Errorf("the interrupted run left something for the next command to clean:\n%s", out)
			}
			t.Logf("next command said: %s", firstLine(string(out)))

			var alive []string
			for _, p := range seen {
				if p.pid != run.Process.Pid && stillAlive(p) {
					alive = append(alive, fmt.Sprintf("%s (pid %d)", p.comm, p.pid))
				}
			}
			for _, r := range recs {
				for _, g := range append(slices.Clone(r.Groups), r.Procs...) {
					if stillAlive(procInfo{pid: g.PID, start: g.Start}) {
						alive = append(alive, fmt.Sprintf("recorded pid %d", g.PID))
					}
				}
				for _, g := range r.Groups {
					for _, m := range groupMembers(g.PID) {
						alive = append(alive, fmt.Sprintf("%s (pid %d) in recorded group %d", m.comm, m.pid, g.PID))
					}
				}
			}
			if len(alive) > 0 {
				t.Errorf("alive after the next command: %s", strings.Join(alive, ", "))
			}
			if still := stillListening(ports); len(still) > 0 {
				t.Errorf("ports of the killed run still listening: %v", still)
			}
			// The run's TMPDIR was empty: all that may stay is the empty
			// state dir, and the evidence of an interrupted run.
			left, _ := filepath.Glob(filepath.Join(tmp, "*"))
			left = slices.DeleteFunc(left, func(p string) bool {
				if sig != syscall.SIGKILL && p == filepath.Join(tmp, "out") {
					return true
				}
				if filepath.Base(p) != filepath.Base(runstate.DefaultDir()) {
					return false
				}
				ents, _ := os.ReadDir(p) // the state dir itself stays, empty
				return len(ents) == 0
			})
			if len(left) > 0 {
				t.Errorf("left in the temp dir: %v", left)
			}
			if m := mountsIn(tmp); len(m) > 0 {
				t.Errorf("still mounted: %v", m)
			}
		})
	}
}

// procInfo is one process as the test saw it.
type procInfo struct {
	pid, ppid, pgid int
	start           uint64
	comm            string
	cmdline         []string
}

func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procInfo{}, false
	}
	open, end := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
	if open < 0 || end < open {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 || f[0] == "Z" {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, comm: string(b[open+1 : end])}
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgid, _ = strconv.Atoi(f[2])
	p.start, _ = strconv.ParseUint(f[19], 10, 64)
	if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.cmdline = strings.Split(strings.TrimRight(string(c), "\x00"), "\x00")
	}
	return p, true
}

func allProcs() []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := readProc(pid); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// tree is root and every live descendant of it.
func tree(root int) []procInfo {
	all := allProcs()
	in := map[int]bool{root: true}
	for changed := true; changed; {
		changed = false
		for _, p := range all {
			if in[p.ppid] && !in[p.pid] {
				in[p.pid], changed = true, true
			}
		}
	}
	var out []procInfo
	for _, p := range all {
		if in[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// plugins are the children of engines running verb.
func plugins(procs []procInfo, verb string) []procInfo {
	engines := map[int]bool{}
	for _, p := range procs {
		if (p.comm == "tofu" || p.comm == "terraform") && slices.Contains(p.cmdline, verb) {
			engines[p.pid] = true
		}
	}
	var out []procInfo
	for _, p := range procs {
		if engines[p.ppid] {
			out = append(out, p)
		}
	}
	return out
}

func need(procs []procInfo, ok func(procInfo) bool, what string) string {
	if slices.ContainsFunc(procs, ok) {
		return ""
	}
	return "no " + what + " was running"
}

func stillAlive(p procInfo) bool {
	now, ok := readProc(p.pid)
	return ok && now.start == p.start
}

func groupMembers(pgid int) []procInfo {
	var out []procInfo
	for _, p := range allProcs() {
		if p.pgid == pgid {
			out = append(out, p)
		}
	}
	return out
}

func records(t *testing.T, tmp string) []runstate.Record {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(tmp, "gauntlet-runs-*", "*.json"))
	var out []runstate.Record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r runstate.Record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, r)
	}
	return out
}

// listening returns the TCP ports the processes listen on, with their
// socket inodes (/proc/net/tcp{,6}): a port another process binds later
// has another inode.
func listening(procs []procInfo) map[int]string {
	inodes := map[string]bool{}
	for _, p := range procs {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
		for _, fd := range fds {
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", p.pid, fd.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	out := map[int]string{}
	for port, inode := range listeners() {
		if inodes[inode] {
			out[port] = inode
		}
	}
	return out
}

// listeners maps every listening TCP port to its socket inode.
func listeners() map[int]string {
	out := map[int]string{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err == nil {
				out[int(port)] = fs[9]
			}
		}
	}
	return out
}

// stillListening are the ports whose very socket still listens.
func stillListening(ports map[int]string) []int {
	now := listeners()
	var out []int
	for p, inode := range ports {
		if now[p] == inode {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func mountsIn(dir string) []string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir) {
			out = append(out, f[4])
		}
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
