// Package kubeconfig uses an existing cluster, as is, through a kubeconfig
// file. gauntlet neither creates nor deletes it.
package kubeconfig

import (
	"context"
	"fmt"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Provider hands out the cluster a kubeconfig points at.
type Provider struct {
	path    string
	context string
	timeout time.Duration
}

// Option configures the provider.
type Option func(*Provider)

// WithContext picks a kubeconfig context. Default: the current context.
func WithContext(name string) Option { return func(p *Provider) { p.context = name } }

// WithTimeout bounds the reachability check in Start. Default: 15s.
func WithTimeout(d time.Duration) Option { return func(p *Provider) { p.timeout = d } }

// New returns a Provider for the kubeconfig at path.
func New(path string, opts ...Option) *Provider {
	p := &Provider{path: path, timeout: 15 * time.Second}
	for _, o := range opts {
		o(p)
	}
	return p
}

var _ cluster.Provider = (*Provider)(nil)

// Start loads the kubeconfig and checks, within the timeout, that the API
// server answers; a kubeconfig that points nowhere fails here, not later.
func (p *Provider) Start(ctx context.Context, name string) (cluster.Cluster, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.path},
		&clientcmd.ConfigOverrides{CurrentContext: p.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig cluster %s: load %s: %w", name, p.path, err)
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = p.timeout
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig cluster %s: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	type answer struct {
		version string
		err     error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := dc.ServerVersion()
		if err != nil {
			ch <- answer{err: err}
			return
		}
		ch <- answer{version: v.GitVersion}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, fmt.Errorf("kubeconfig cluster %s: API server %s does not answer: %w", name, cfg.Host, a.err)
		}
		return &Cluster{name: name, path: p.path, rest: cfg, substrate: fmt.Sprintf("existing cluster %s (Kubernetes %s)", cfg.Host, a.version)}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("kubeconfig cluster %s: API server %s did not answer within %s: %w", name, cfg.Host, p.timeout, ctx.Err())
	}
}

// Cluster is an existing cluster; Stop leaves it running.
type Cluster struct {
	name, path, substrate string
	rest                  *rest.Config
}

var _ cluster.Cluster = (*Cluster)(nil)

func (c *Cluster) Name() string                       { return c.name }
func (c *Cluster) RESTConfig() *rest.Config           { return rest.CopyConfig(c.rest) }
func (c *Cluster) KubeconfigPath() string             { return c.path }
func (c *Cluster) Substrate() string                  { return c.substrate }
func (c *Cluster) Capabilities() cluster.Capabilities { return cluster.Capabilities{PodsRun: true} }
func (c *Cluster) Stop(context.Context) error         { return nil }
