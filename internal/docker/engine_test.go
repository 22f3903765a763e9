package docker

import (
	"archive/tar"
	"bytes"
	"context"
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
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

func TestMissingCapsAreReadFromTheBoundingSet(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   []string
	}{
		{"CapPrm:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n", nil},
		// This VM: bit 24 is CAP_SYS_RESOURCE.
		{"CapBnd:\t000001fffeffffff\n", []string{"CAP_SYS_RESOURCE"}},
		{"CapBnd:\t000001fffeffdfff\n", []string{"CAP_NET_RAW", "CAP_SYS_RESOURCE"}},
	} {
		got, err := capsMissingFrom(tc.status)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: missing %v (%v), want %v", tc.status, got, err, tc.want)
		}
	}
	if _, err := capsMissingFrom("Name:\tx\n"); err == nil {
		t.Error("a status without CapBnd was accepted")
	}
}

func TestEnvPointsTheCLIAtTheEngine(t *testing.T) {
	e := &Engine{Host: "unix:///run/x/docker.sock", BinDir: "/c/root/usr/bin"}
	env := e.Env([]string{"PATH=/usr/bin", "DOCKER_HOST=tcp://elsewhere:2375", "HOME=/root"})
	want := []string{"PATH=/c/root/usr/bin:/usr/bin", "HOME=/root", "DOCKER_HOST=unix:///run/x/docker.sock"}
	if !slices.Equal(env, want) {
		t.Errorf("env %v, want %v", env, want)
	}
	host := &Engine{}
	if env := host.Env([]string{"PATH=/usr/bin", "DOCKER_HOST=tcp://h:2375"}); !slices.Equal(env, []string{"PATH=/usr/bin", "DOCKER_HOST=tcp://h:2375"}) {
		t.Errorf("the host's engine changed the environment: %v", env)
	}
}

// TestOwnEngineRunsAPrivilegedContainerAndLeavesNothing starts gauntlet's
// own engine, runs a privileged container (what kind's nodes are; on a
// host whose bounding set lacks capabilities this needs the runc wrapper),
// stops the engine and checks that no process, mount or runtime directory
// is left and that the host's firewall rules did not change.
func TestOwnEngineRunsAPrivilegedContainerAndLeavesNothing(t *testing.T) {
	if os.Getenv("GAUNTLET_KIND") != "1" {
		t.Skip("skipped, not passed: set GAUNTLET_KIND=1 to start a Docker engine from Debian's packages (root; downloads ~65 MB once)")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped, not passed: starting dockerd needs root")
	}
	tc := testenv.Toolchain(t, runcWrapperTool)
	cache, err := toolchain.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := Ensure(ctx, WithOwnEngine(), WithCacheDir(cache), WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if !e.Owned {
		t.Fatalf("WithOwnEngine returned %s", e.Describe())
	}
	root := filepath.Dir(filepath.Dir(e.BinDir))
	before := firewall(t, root)
	defer e.Stop(context.Background())

	// A one-file image: gauntlet-runc prints its version and exits.
	var img bytes.Buffer
	tw := tar.NewWriter(&img)
	bin, err := os.ReadFile(tc.Path(runcWrapperTool))
	if err != nil {
		t.Fatal(err)
	}
	tw.WriteHeader(&tar.Header{Name: "probe", Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg})
	tw.Write(bin)
	tw.Close()
	imp := e.Command(ctx, "import", "-", "gauntlet-engine-test:probe")
	imp.Stdin = &img
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v: %s", err, out)
	}
	out, err := e.Output(ctx, "run", "--rm", "--privileged", "gauntlet-engine-test:probe", "/probe", "--gauntlet-version")
	if err != nil || out != "gauntlet-runc 1" {
		t.Fatalf("privileged run: %q, %v", out, err)
	}
	if _, err := e.Output(ctx, "rmi", "gauntlet-engine-test:probe"); err != nil {
		t.Error(err)
	}
	pid := e.proc.Pid
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pid, 0) != syscall.ESRCH {
		t.Errorf("dockerd (pid %d) still runs after Stop", pid)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for _, d := range []string{e.execDir, filepath.Join(e.dir, "data")} {
		if m := mountinfo.Under(string(mi), d); len(m) > 0 {
			t.Errorf("mounts left under %s: %v", d, m)
		}
	}
	if _, err := os.Stat(e.execDir); !os.IsNotExist(err) {
		t.Errorf("runtime directory %s left behind (%v)", e.execDir, err)
	}
	if after := firewall(t, root); after != before {
		t.Errorf("the host's firewall rules changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// firewall dumps the host's iptables rules (nft and legacy, v4 and v6)
// with the engine's own extracted iptables.
func firewall(t *testing.T, root string) string {
	var all strings.Builder
	for _, args := range [][]string{
		{"xtables-nft-multi", "iptables-save"}, {"xtables-nft-multi", "ip6tables-save"},
		{"xtables-legacy-multi", "iptables-save"}, {"xtables-legacy-multi", "ip6tables-save"},
	} {
		cmd := exec.Command(filepath.Join(root, "usr", "sbin", args[0]), args[1])
		cmd.Env = engineEnv(root, "", nil)
		out, _ := cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "#") { // generation timestamps
				all.WriteString(line + "\n")
			}
		}
	}
	return all.String()
}

// TestEngineLockWaitsForOthersAndRefusesItself: the lock of gauntlet's
// engine records its holder; this process cannot wait for itself.
func TestEngineLockWaitsForOthersAndRefusesItself(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engine.lock")
	unlock, err := lock(context.Background(), path, func(string) { t.Error("waited for a free lock") })
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want this pid", b)
	}
	if _, err := lock(context.Background(), path, func(string) {}); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("a second lock in the same process: %v, want a refusal", err)
	}
	unlock()
	again, err := lock(context.Background(), path, func(string) { t.Error("waited for a released lock") })
	if err != nil {
		t.Fatal(err)
	}
	again()
}
