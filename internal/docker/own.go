package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/debian"
	"github.com/gauntlet-k8s/gauntlet/internal/flock"
	"github.com/gauntlet-k8s/gauntlet/internal/mountinfo"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// runcWrapperTool is the pinned tool that drops capabilities outside the
// bounding set from OCI specs.
const runcWrapperTool = "gauntlet-runc"

// ownEngine starts gauntlet's own engine. One process at a time uses it:
// the process holds an exclusive lock from start to Stop, so a second
// gauntlet process (a parallel test package, another run) waits for the
// first to finish instead of having the engine stopped under it. dockerd
// dies with its process, so the lock's holder is always alive.
func ownEngine(ctx context.Context, o *options) (*Engine, error) {
	if o.pins.Docker == nil {
		return nil, fmt.Errorf("no Docker engine packages are pinned (docker in third_party/pins.json)")
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("starting dockerd needs root (this process runs as uid %d): start a Docker engine, run as root, or use --substrate local", os.Geteuid())
	}
	dir := filepath.Join(o.cacheDir, "docker")
	execDir := filepath.Join("/run", "gauntlet-docker-"+shortHash(dir))
	host := "unix://" + filepath.Join(execDir, "docker.sock")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lock(ctx, filepath.Join(dir, "engine.lock"), func(pid string) {
		o.logger.Infof("docker: waiting for gauntlet process %s to finish with gauntlet's Docker engine (%s)", pid, filepath.Join(dir, "engine.lock"))
	})
	if err != nil {
		return nil, err
	}
	e, err := startOwn(ctx, o, dir, execDir, host)
	if err != nil {
		unlock()
		return nil, err
	}
	e.unlock = unlock
	return e, nil
}

func startOwn(ctx context.Context, o *options, dir, execDir, host string) (*Engine, error) {
	root, err := extracted(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	if err := removeRuntimeDir(execDir); err != nil {
		return nil, err
	}
	missing, err := missingCaps()
	if err != nil {
		return nil, err
	}
	var wrapper string
	if len(missing) > 0 {
		tc, err := toolchain.Resolve(ctx, toolchain.WithPins(o.pins), toolchain.WithCacheDir(o.cacheDir),
			toolchain.WithTools(runcWrapperTool), toolchain.WithLogger(o.logger), toolchain.WithOffline(o.offline))
		if err != nil {
			return nil, err
		}
		wrapper = tc.Path(runcWrapperTool)
		o.logger.Infof("docker: the capability bounding set lacks %s: containers run through %s", strings.Join(missing, ", "), runcWrapperTool)
	}
	return startDockerd(ctx, o, root, dir, execDir, host, wrapper)
}

// removeRuntimeDir clears what a dockerd killed with its gauntlet process
// left in its runtime directory (its socket, pid file, containerd's state),
// unmounting first.
func removeRuntimeDir(execDir string) error {
	if _, err := os.Stat(execDir); os.IsNotExist(err) {
		return nil
	}
	if _, err := mountinfo.Unmount(mountinfo.Self, execDir); err != nil {
		return err
	}
	return os.RemoveAll(execDir)
}

// extracted downloads the pinned packages and extracts them into a
// directory named after the package set, once.
func extracted(ctx context.Context, o *options, dir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s", o.pins.Docker.Suite, strings.Join(o.pins.Docker.Packages, "\x00"))
	root := filepath.Join(dir, "root-"+hex.EncodeToString(h.Sum(nil))[:12])
	done := filepath.Join(root, ".extracted")
	if _, err := os.Stat(done); err == nil {
		return root, nil
	}
	if o.offline {
		return "", fmt.Errorf("the Docker engine packages are not extracted in %s and downloads are off", root)
	}
	start := time.Now()
	o.logger.Infof("docker: fetching %d pinned Debian packages (%s, ...) with the host's apt sources", len(o.pins.Docker.Packages), o.pins.Docker.Packages[0])
	debs, err := debian.Apt{Dir: filepath.Join(o.cacheDir, "apt")}.Download(ctx, filepath.Join(dir, "debs"), o.pins.Docker.Packages)
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	for _, p := range o.pins.Docker.Packages {
		name, _, _ := strings.Cut(p, "=")
		if err := debian.Extract(ctx, debs[name], root); err != nil {
			return "", err
		}
	}
	// dockerd looks for iptables to program its embedded DNS inside each
	// container's network namespace (--iptables=false keeps it out of the
	// host's): give it the extracted nft backend under the plain names.
	fw := filepath.Join(root, "fwbin")
	if err := os.MkdirAll(fw, 0o755); err != nil {
		return "", err
	}
	for _, n := range []string{"iptables", "ip6tables", "iptables-save", "iptables-restore", "ip6tables-save", "ip6tables-restore"} {
		if err := os.Symlink(filepath.Join(root, "usr", "sbin", "xtables-nft-multi"), filepath.Join(fw, n)); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(done, []byte(strings.Join(o.pins.Docker.Packages, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	o.logger.Infof("docker: %d packages extracted into %s (%.1fs)", len(o.pins.Docker.Packages), root, time.Since(start).Seconds())
	return root, nil
}

// engineEnv is dockerd's environment: the extracted binaries and
// libraries first, and the real runc for gauntlet-runc.
func engineEnv(root, dir string, base []string) []string {
	if base == nil {
		base = os.Environ()
	}
	var env []string
	path := ""
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			path = v
			continue
		case "LD_LIBRARY_PATH", "XTABLES_LIBDIR", "DOCKER_HOST", "GAUNTLET_RUNC":
			continue
		}
		env = append(env, kv)
	}
	if path == "" {
		path = "/usr/sbin:/usr/bin:/sbin:/bin"
	}
	return append(env,
		"PATH="+strings.Join([]string{filepath.Join(root, "fwbin"), filepath.Join(root, "usr", "bin"), filepath.Join(root, "usr", "sbin"), path}, ":"),
		"LD_LIBRARY_PATH="+filepath.Join(root, "lib", "x86_64-linux-gnu")+":"+filepath.Join(root, "usr", "lib", "x86_64-linux-gnu"),
		"XTABLES_LIBDIR="+filepath.Join(root, "usr", "lib", "x86_64-linux-gnu", "xtables"),
		"GAUNTLET_RUNC="+filepath.Join(root, "usr", "sbin", "runc"),
	)
}

// startDockerd starts dockerd in its own process group and waits until it
// answers. It dies with this process (Pdeathsig), so a crashed run leaves
// no daemon behind.
func startDockerd(ctx context.Context, o *options, root, dir, execDir, host, wrapper string) (*Engine, error) {
	if err := os.MkdirAll(execDir, 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "dockerd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", execDir,
		"--pidfile", filepath.Join(execDir, "dockerd.pid"),
		"-H", host,
		"--iptables=false", "--ip6tables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none",
		"--userland-proxy=true",
	}
	if wrapper != "" {
		args = append(args, "--add-runtime", runcWrapperTool+"="+wrapper, "--default-runtime", runcWrapperTool)
	}
	cmd := exec.Command(filepath.Join(root, "usr", "sbin", "dockerd"), args...)
	cmd.Env = engineEnv(root, dir, nil)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if o.mountRoot != nil {
		o.mountRoot(execDir)
		o.mountRoot(filepath.Join(dir, "data"))
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start dockerd: %w", err)
	}
	if o.group != nil {
		o.group(cmd.Process.Pid)
	}
	e := &Engine{Host: host, BinDir: filepath.Join(root, "usr", "bin"), Owned: true, RuncWrapped: wrapper != "",
		dir: dir, execDir: execDir, proc: cmd.Process, exited: make(chan struct{}), logger: o.logger}
	go func() {
		cmd.Wait()
		logf.Close()
		close(e.exited)
	}()
	o.logger.Infof("docker: started dockerd (pid %d, data %s, log %s)", cmd.Process.Pid, filepath.Join(dir, "data"), logPath)
	cli := filepath.Join(e.BinDir, "docker")
	deadline := time.Now().Add(90 * time.Second)
	for {
		v, err := serverVersion(ctx, cli, e.Env(os.Environ()))
		if err == nil {
			e.Version = v
			o.logger.Infof("docker: dockerd %s answers on %s (%.1fs)", v, host, time.Since(start).Seconds())
			return e, nil
		}
		select {
		case <-e.exited:
			return nil, fmt.Errorf("dockerd exited: %s (log: %s)", logTail(logPath, 5), logPath)
		case <-ctx.Done():
			e.Stop(context.Background())
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.Stop(context.Background())
			return nil, fmt.Errorf("dockerd did not answer within 90s: %v (log: %s)", err, logPath)
		}
	}
}

// lock takes the exclusive lock of gauntlet's engine, recording this
// process's pid in the file. While another process holds it, lock waits,
// calling waiting once with that process's pid; it refuses to wait for
// itself.
func lock(ctx context.Context, path string, waiting func(pid string)) (func(), error) {
	unlock, err := flock.LockPID(ctx, path, 200*time.Millisecond, waiting)
	if errors.Is(err, flock.ErrSelf) {
		return nil, fmt.Errorf("this process already runs gauntlet's Docker engine: share that engine (kind.WithEngine) instead of starting another")
	}
	return unlock, err
}

func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
