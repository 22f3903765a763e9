// Package local runs a real Kubernetes control plane as child processes on
// loopback: etcd, kube-apiserver, kube-controller-manager and, by default,
// kube-scheduler with kwok and one fake Node so Deployments roll out. Every
// binary comes from the pinned toolchain. There is no kubelet: containers
// never run, which Capabilities says.
package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"k8s.io/client-go/rest"
)

// Tools are the pinned tools the local provider runs; resolve at least
// these (toolchain.WithTools(local.Tools()...)).
func Tools() []string {
	return []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}
}

// Provider starts local control planes.
type Provider struct {
	tc *toolchain.Toolchain
	o  *options
}

// New returns a local Provider using binaries from tc.
func New(tc *toolchain.Toolchain, opts ...Option) *Provider {
	o := defaults()
	for _, opt := range opts {
		opt.apply(o)
	}
	return &Provider{tc: tc, o: o}
}

var _ cluster.Provider = (*Provider)(nil)

// Cluster is a running local control plane.
type Cluster struct {
	name       string
	dir        string
	kubeconfig string
	rest       *rest.Config
	substrate  string
	pods       bool

	// Timings holds how long each component took to become ready.
	Timings map[string]time.Duration

	mu    sync.Mutex
	procs []*process
	grace time.Duration
	done  bool
}

var _ cluster.Cluster = (*Cluster)(nil)

func (c *Cluster) Name() string           { return c.name }
func (c *Cluster) KubeconfigPath() string { return c.kubeconfig }
func (c *Cluster) Substrate() string      { return c.substrate }
func (c *Cluster) RESTConfig() *rest.Config {
	return rest.CopyConfig(c.rest)
}

// Capabilities: pods run (kwok) when the provider runs them; containers
// never do.
func (c *Cluster) Capabilities() cluster.Capabilities {
	return cluster.Capabilities{PodsRun: c.pods, Owned: true}
}

// Dir is the cluster's own directory (PKI, data, logs); Stop removes it.
func (c *Cluster) Dir() string { return c.dir }

// PIDs lists the child processes, for tests that check nothing leaks.
func (c *Cluster) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pids []int
	for _, p := range c.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

// Stop stops the components in reverse start order, each with a bounded
// grace period then SIGKILL, and removes the cluster directory. ctx only
// shortens the wait; the processes are killed regardless.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	c.done = true
	grace := c.grace
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < grace {
		grace = max(time.Until(dl), 0)
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(grace)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("cluster %s: remove %s: %w", c.name, c.dir, err)
	}
	return nil
}

// Start starts a control plane and waits for it, bounded by ctx and the
// ready timeout. A port taken between choosing and binding it restarts
// the attempt with fresh ports (three attempts).
func (p *Provider) Start(ctx context.Context, name string) (cluster.Cluster, error) {
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		c, err := p.start(ctx, name)
		if err == nil {
			return c, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			break
		}
		p.o.logger.Warnf("%s: a port was taken while starting, retrying with new ports: %v", name, err)
	}
	return nil, lastErr
}

var errPortTaken = errors.New("address already in use")

func (p *Provider) start(ctx context.Context, name string) (_ *Cluster, err error) {
	bins := map[string]toolchain.Binary{}
	for _, t := range p.tools() {
		b, err := p.tc.Binary(t)
		if err != nil {
			return nil, fmt.Errorf("local cluster %s: %w", name, err)
		}
		bins[t] = b
	}
	sweepStale(p.o.parentDir, p.o.logger.Warnf)
	dir, err := os.MkdirTemp(p.o.parentDir, "gauntlet-local-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("local cluster %s: %w", name, err)
	}
	if err := writeOwner(dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local cluster %s: %w", name, err)
	}
	c := &Cluster{name: name, dir: dir, pods: p.o.pods, grace: p.o.stopGrace, Timings: map[string]time.Duration{}}
	// Whatever fails or panics below, nothing started is left behind.
	defer func() {
		if r := recover(); r != nil {
			c.Stop(context.Background())
			panic(r)
		}
		if err != nil {
			c.Stop(context.Background())
		}
	}()
	s := &starter{p: p, c: c, bins: bins, dir: dir}
	if err := s.run(ctx); err != nil {
		return nil, fmt.Errorf("local cluster %s: %w (logs were in %s)", name, err, filepath.Join(dir, "logs"))
	}
	c.substrate = fmt.Sprintf("local control plane v%s (etcd %s", bins["kube-apiserver"].Version, bins["etcd"].Version)
	if p.o.pods {
		c.substrate += fmt.Sprintf(", kwok %s", bins["kwok"].Version)
	}
	c.substrate += ")"
	return c, nil
}

func (p *Provider) tools() []string {
	if p.o.pods {
		return Tools()
	}
	return Tools()[:3]
}

// starter carries one start attempt's state.
type starter struct {
	p    *Provider
	c    *Cluster
	bins map[string]toolchain.Binary
	dir  string
	pki  *pki

	etcdPort, peerPort, apiPort, kcmPort, schedPort int
}

const serviceCIDR = "10.96.0.0/16"

func (s *starter) run(ctx context.Context) error {
	var err error
	if s.pki, err = newPKI(filepath.Join(s.dir, "pki"), net.IPv4(10, 96, 0, 1)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "logs"), 0o700); err != nil {
		return err
	}
	for _, port := range []*int{&s.etcdPort, &s.peerPort, &s.kcmPort, &s.schedPort} {
		if *port, err = freePort(0); err != nil {
			return err
		}
	}
	if s.apiPort, err = freePort(s.p.o.apiPort); err != nil {
		return err
	}
	if s.p.o.apiPort > 0 && s.apiPort != s.p.o.apiPort {
		s.p.o.logger.Warnf("%s: port %d is taken, kube-apiserver uses %d instead", s.c.name, s.p.o.apiPort, s.apiPort)
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"etcd", s.etcd},
		{"kube-apiserver", s.apiserver},
		{"kube-controller-manager", s.controllerManager},
	}
	if s.p.o.pods {
		steps = append(steps, struct {
			name string
			fn   func(context.Context) error
		}{"kube-scheduler", s.scheduler}, struct {
			name string
			fn   func(context.Context) error
		}{"kwok", s.kwok})
	}
	total := time.Now()
	for _, st := range steps {
		start := time.Now()
		sctx, cancel := context.WithTimeout(ctx, s.p.o.readyTimeout)
		err := st.fn(sctx)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		s.c.Timings[st.name] = time.Since(start)
		s.p.o.logger.Infof("%s: %s ready in %s", s.c.name, st.name, time.Since(start).Round(time.Millisecond))
	}
	s.c.Timings["total"] = time.Since(total)
	return nil
}

// launch starts a component and registers it for Stop.
func (s *starter) launch(name string, args []string, env []string) (*process, error) {
	if env == nil {
		env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
	}
	p, err := startProcess(name, s.bins[name].Path, args, env, filepath.Join(s.dir, "logs", name+".log"), s.p.o.started)
	if err != nil {
		return nil, err
	}
	s.c.mu.Lock()
	s.c.procs = append(s.c.procs, p)
	s.c.mu.Unlock()
	return p, nil
}

// waitFor polls check every interval until it returns true, the process
// exits (the error then carries its log tail), or ctx ends.
func waitFor(ctx context.Context, p *process, interval time.Duration, check func(context.Context) (bool, error)) error {
	var lastErr error
	for {
		if ok, werr := p.exited(); ok {
			tail := p.logTail(15)
			if strings.Contains(tail, "address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, tail)
			}
			return fmt.Errorf("exited early (%v); log %s ends:\n%s", werr, p.logPath, tail)
		}
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("not ready: %w (last check: %v; log %s)", ctx.Err(), lastErr, p.logPath)
			}
			return fmt.Errorf("not ready: %w (log %s)", ctx.Err(), p.logPath)
		case <-time.After(interval):
		}
	}
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
