// Package docker gives the kind substrate a Docker engine: the host's when
// one answers, otherwise one started for the run from Debian's packages,
// extracted into gauntlet's cache and stopped again by Stop. Nothing is
// installed, and the host's firewall is left alone: the engine runs with
// --iptables=false --ip-forward=false --ip-masq=false --bridge=none. It
// can still program the rules of its embedded DNS inside each container's
// network namespace, with an iptables of its own.
//
// Where this process's capability bounding set lacks capabilities (some
// VMs drop CAP_SYS_RESOURCE), privileged containers - kind's nodes - cannot
// start with runc as Docker asks; the engine then runs containers through
// gauntlet-runc, which leaves those capabilities out of the spec.
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
	"sync"
	"syscall"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/mountinfo"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	glog "github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Option configures Ensure.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	cacheDir string
	pins     *toolchain.Pins
	logger   glog.Logger
	hostCLI  string
	own      bool
	offline  bool
	// group and mountRoot record what an own engine starts (WithTrack).
	group     func(pid int)
	mountRoot func(dir string)
}

// WithCacheDir is where the packages, the extracted engine and its data
// live. Default: toolchain.DefaultCacheDir().
func WithCacheDir(dir string) Option { return optionFunc(func(o *options) { o.cacheDir = dir }) }

// WithPins supplies the pinned engine packages. Default: the embedded pins.
func WithPins(p *toolchain.Pins) Option { return optionFunc(func(o *options) { o.pins = p }) }

// WithLogger receives progress. Default: log.Discard().
func WithLogger(l glog.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithOwnEngine skips the host's engine and always uses gauntlet's own.
// Default: the host's engine when it answers.
func WithOwnEngine() Option { return optionFunc(func(o *options) { o.own = true }) }

// WithOffline makes Ensure fail instead of downloading packages that are
// not cached. Default: download when needed.
func WithOffline(offline bool) Option { return optionFunc(func(o *options) { o.offline = offline }) }

// WithTrack tells group the pid of the dockerd gauntlet starts (it leads
// its own process group) and mountRoot each directory under which dockerd
// mounts, so a run's state record lets the next gauntlet process end and
// unmount what a killed one left. Default: nothing is told.
func WithTrack(group func(pid int), mountRoot func(dir string)) Option {
	return optionFunc(func(o *options) { o.group, o.mountRoot = group, mountRoot })
}

// Engine is a Docker engine that answers.
type Engine struct {
	// Host is the DOCKER_HOST it answers on; empty for the host's default.
	Host string
	// BinDir holds the docker CLI to use first; empty to use PATH as is.
	BinDir string
	// Version is the engine's version, e.g. "20.10.24+dfsg1".
	Version string
	// Owned says this process started the engine and Stop stops it.
	Owned bool
	// RuncWrapped says containers run through gauntlet-runc.
	RuncWrapped bool

	dir     string // the engine's state: data root, log
	execDir string
	proc    *os.Process
	exited  chan struct{}
	logger  glog.Logger
	unlock  func() // releases gauntlet's engine for the next process

	mu      sync.Mutex
	stopped bool
}

// Ensure returns an engine that answers: the host's (DOCKER_HOST or the
// default socket) unless WithOwnEngine, else gauntlet's own, started from
// the pinned Debian packages (this needs root). Only one process at a time
// runs gauntlet's own engine; another waits for it. Stop the result when
// done: it stops only what it started.
func Ensure(ctx context.Context, opts ...Option) (*Engine, error) {
	o := &options{logger: glog.Discard(), hostCLI: "docker"}
	for _, opt := range opts {
		opt.apply(o)
	}
	var hostErr error
	if !o.own {
		v, err := serverVersion(ctx, o.hostCLI, nil)
		if err == nil {
			o.logger.Infof("docker: the host's engine %s answers; using it", v)
			return &Engine{Version: v, logger: o.logger}, nil
		}
		hostErr = err
	}
	if o.pins == nil {
		p, err := toolchain.DefaultPins()
		if err != nil {
			return nil, err
		}
		o.pins = p
	}
	if o.cacheDir == "" {
		d, err := toolchain.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		o.cacheDir = d
	}
	e, err := ownEngine(ctx, o)
	if err != nil && hostErr != nil {
		return nil, fmt.Errorf("no Docker engine answers (%v) and gauntlet could not start its own: %w", hostErr, err)
	}
	return e, err
}

// Env is the environment a docker CLI (or kind, which runs one) needs to
// reach the engine: env with DOCKER_HOST and PATH set.
func (e *Engine) Env(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "DOCKER_HOST" && e.Host != "":
			continue
		case k == "PATH" && e.BinDir != "":
			kv = "PATH=" + e.BinDir + string(os.PathListSeparator) + v
		}
		out = append(out, kv)
	}
	if e.Host != "" {
		out = append(out, "DOCKER_HOST="+e.Host)
	}
	return out
}

// Command runs the docker CLI against the engine.
func (e *Engine) Command(ctx context.Context, args ...string) *exec.Cmd {
	bin := "docker"
	if e.BinDir != "" {
		bin = filepath.Join(e.BinDir, "docker")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.Env(os.Environ())
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// Output runs the docker CLI and returns its trimmed stdout; the error
// carries stderr.
func (e *Engine) Output(ctx context.Context, args ...string) (string, error) {
	cmd := e.Command(ctx, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Describe says which engine this is, for logs and evidence.
func (e *Engine) Describe() string {
	switch {
	case !e.Owned:
		return "the host's Docker " + e.Version
	case e.RuncWrapped:
		return "gauntlet's Docker " + e.Version + " (Debian packages, runc wrapped for the capability bounding set)"
	default:
		return "gauntlet's Docker " + e.Version + " (Debian packages)"
	}
}

// Stop stops an engine this process started, waiting for dockerd to end
// and removing its runtime directory; anything it left mounted under its
// directories is unmounted. Engines it did not start are left running.
// Safe to call more than once.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped || !e.Owned {
		e.stopped = true
		return nil
	}
	e.stopped = true
	e.logger.Infof("docker: stopping dockerd (pid %d)", e.proc.Pid)
	syscall.Kill(e.proc.Pid, syscall.SIGTERM)
	grace := 30 * time.Second
	if d, ok := ctx.Deadline(); ok && time.Until(d) < grace {
		grace = time.Until(d)
	}
	select {
	case <-e.exited:
	case <-time.After(grace):
		e.logger.Warnf("docker: dockerd did not stop within %s; killing its process group", grace.Round(time.Second))
		syscall.Kill(-e.proc.Pid, syscall.SIGKILL)
		<-e.exited
	}
	var errs []error
	for _, root := range []string{e.execDir, filepath.Join(e.dir, "data")} {
		left, err := mountinfo.Unmount(mountinfo.Self, root)
		if len(left) > 0 {
			e.logger.Warnf("docker: unmounted %d mount(s) dockerd left under %s", len(left), root)
		}
		errs = append(errs, err)
	}
	errs = append(errs, os.RemoveAll(e.execDir))
	if e.unlock != nil {
		e.unlock()
	}
	return errors.Join(errs...)
}

// serverVersion asks a docker CLI for the engine's version.
func serverVersion(ctx context.Context, cli string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "version", "--format", "{{.Server.Version}}")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("`%s version` failed: %v: %s", cli, err, firstLine(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// shortHash names runtime paths after a cache directory, short enough for
// unix socket paths.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:10]
}
