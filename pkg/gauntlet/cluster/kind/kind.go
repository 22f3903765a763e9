// Package kind starts full-fidelity clusters with sigs.k8s.io/kind: real
// nodes in Docker, real kubelets, real pods. The node image is always
// pinned by digest (third_party/pins.json), and the kubeconfig is written
// into the run's own directory, never the user's ~/.kube/config.
package kind

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	glog "github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
)

// Option configures the kind provider.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	dir       string
	image     string
	k8s       string
	logger    glog.Logger
	wait      time.Duration
	cgroupV1  *bool
	dockerBin string
}

// WithDir is where kubeconfigs and collected logs go. Default: a new
// directory under os.TempDir(), removed by Stop.
func WithDir(dir string) Option { return optionFunc(func(o *options) { o.dir = dir }) }

// WithNodeImage uses this node image; it must be pinned by digest
// (name:tag@sha256:...). Default: the pins' image for WithKubernetes.
func WithNodeImage(image string) Option { return optionFunc(func(o *options) { o.image = image }) }

// WithKubernetes picks the pinned node image of this Kubernetes version
// ("v1.37.0"). Default: the first pinned node image.
func WithKubernetes(version string) Option { return optionFunc(func(o *options) { o.k8s = version }) }

// WithLogger receives progress. Default: log.Discard().
func WithLogger(l glog.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithWaitForReady bounds kind's wait for the control plane. Default: 3m.
func WithWaitForReady(d time.Duration) Option { return optionFunc(func(o *options) { o.wait = d }) }

// WithCgroupV1 says whether the host runs cgroup v1, where kubelet 1.37
// must be told failCgroupV1: false. Default: detected from /sys/fs/cgroup.
func WithCgroupV1(v1 bool) Option { return optionFunc(func(o *options) { o.cgroupV1 = &v1 }) }

// Provider starts kind clusters.
type Provider struct {
	pins *toolchain.Pins
	o    *options
}

// New returns a kind Provider whose node image comes from pins.
func New(pins *toolchain.Pins, opts ...Option) *Provider {
	o := &options{logger: glog.Discard(), wait: 3 * time.Minute, dockerBin: "docker"}
	for _, opt := range opts {
		opt.apply(o)
	}
	return &Provider{pins: pins, o: o}
}

var _ cluster.Provider = (*Provider)(nil)

// Plan is what Start would create, computed without touching Docker.
type Plan struct {
	// ClusterName is kind's name for the cluster (gauntlet-<name>).
	ClusterName string
	// NodeImage is the digest-pinned node image.
	NodeImage string
	// Kubeconfig is the file kind writes, inside Dir.
	Kubeconfig string
	// Dir is the run's directory for this cluster.
	Dir string
	// Config is the kind cluster config passed to kind.
	Config string
}

// Plan says what Start(name) would create.
func (p *Provider) Plan(name string) (Plan, error) {
	img := p.o.image
	if img == "" {
		var err error
		if img, err = p.pins.NodeImage(p.o.k8s); err != nil {
			return Plan{}, err
		}
	}
	if !strings.Contains(img, "@sha256:") {
		return Plan{}, fmt.Errorf("kind node image %q is not pinned by digest (want name:tag@sha256:...)", img)
	}
	dir := p.o.dir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "gauntlet-kind-"+name)
	}
	v1 := hostCgroupV1()
	if p.o.cgroupV1 != nil {
		v1 = *p.o.cgroupV1
	}
	return Plan{
		ClusterName: "gauntlet-" + name,
		NodeImage:   img,
		Kubeconfig:  filepath.Join(dir, name+".kubeconfig"),
		Dir:         dir,
		Config:      clusterConfig(v1),
	}, nil
}

// clusterConfig is kind's config: one node; on a cgroup v1 host kubelet
// 1.37 refuses to start unless its config allows it.
func clusterConfig(cgroupV1 bool) string {
	cfg := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n"
	if cgroupV1 {
		cfg += "kubeadmConfigPatches:\n- |\n  kind: KubeletConfiguration\n  failCgroupV1: false\n"
	}
	return cfg
}

func hostCgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

// Start creates the cluster. kind's create cannot be interrupted, so on
// cancellation Start waits for it to return and then deletes the cluster.
func (p *Provider) Start(ctx context.Context, name string) (cluster.Cluster, error) {
	plan, err := p.Plan(name)
	if err != nil {
		return nil, err
	}
	if err := dockerAnswers(ctx, p.o.dockerBin); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(plan.Dir, 0o700); err != nil {
		return nil, err
	}
	kp := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	p.o.logger.Infof("%s: kind create %s with %s", name, plan.ClusterName, plan.NodeImage)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		done <- kp.Create(plan.ClusterName,
			kindcluster.CreateWithNodeImage(plan.NodeImage),
			kindcluster.CreateWithRawConfig([]byte(plan.Config)),
			kindcluster.CreateWithKubeconfigPath(plan.Kubeconfig),
			kindcluster.CreateWithWaitForReady(p.o.wait),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false))
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		p.o.logger.Warnf("%s: cancelled; waiting for kind create to return so the cluster can be deleted", name)
		<-done
		err = ctx.Err()
	}
	c := &Cluster{name: name, plan: plan, kp: kp, ownDir: p.o.dir == ""}
	if err != nil {
		logs := filepath.Join(plan.Dir, "logs")
		if lerr := kp.CollectLogs(plan.ClusterName, logs); lerr == nil {
			err = fmt.Errorf("%w (node logs in %s)", err, logs)
		}
		kp.Delete(plan.ClusterName, plan.Kubeconfig)
		return nil, fmt.Errorf("kind cluster %s: %w", name, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", plan.Kubeconfig)
	if err != nil {
		c.Stop(context.Background())
		return nil, fmt.Errorf("kind cluster %s: kubeconfig: %w", name, err)
	}
	c.rest = cfg
	p.o.logger.Infof("%s: kind cluster ready in %s", name, time.Since(start).Round(time.Second))
	return c, nil
}

// dockerAnswers fails fast, naming the fix, when no Docker engine runs.
func dockerAnswers(ctx context.Context, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kind needs a Docker engine and `%s info` failed: %v: %s (start dockerd, or use --substrate local)",
			bin, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Cluster is a running kind cluster.
type Cluster struct {
	name   string
	plan   Plan
	kp     *kindcluster.Provider
	rest   *rest.Config
	ownDir bool

	mu   sync.Mutex
	done bool
}

var _ cluster.Cluster = (*Cluster)(nil)

func (c *Cluster) Name() string             { return c.name }
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }
func (c *Cluster) KubeconfigPath() string   { return c.plan.Kubeconfig }
func (c *Cluster) Substrate() string        { return "kind node " + c.plan.NodeImage }
func (c *Cluster) Capabilities() cluster.Capabilities {
	return cluster.Capabilities{PodsRun: true, ContainersRun: true, Owned: true}
}

// Stop deletes the kind cluster (containers, network state, kubeconfig).
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	c.done = true
	err := c.kp.Delete(c.plan.ClusterName, c.plan.Kubeconfig)
	if c.ownDir {
		os.RemoveAll(c.plan.Dir)
	}
	if err != nil {
		return fmt.Errorf("kind cluster %s: delete: %w", c.name, err)
	}
	return nil
}
