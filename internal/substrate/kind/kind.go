// Package kind starts full-fidelity clusters with sigs.k8s.io/kind: real
// nodes in Docker, real kubelets, real pods. The node image is always
// pinned by digest (third_party/pins.json), and the kubeconfig is written
// into the run's own directory, never the user's ~/.kube/config.
//
// The default node image is the one gauntlet builds itself from the pins
// (package nodeimage), because nothing can be pulled where gauntlet runs:
// Start builds it on first use and loads it into the engine, and tells
// kubeadm where its preloaded images are. The Docker engine is the host's
// when one answers, else one gauntlet starts from Debian's packages
// (package docker) and stops when the last cluster of the provider stops.
// kind runs the docker CLI itself, so while gauntlet's own engine is in
// use the process's DOCKER_HOST and PATH point at it.
package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/docker"
	"github.com/gauntlet-k8s/gauntlet/internal/nodeimage"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	glog "github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
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
	cacheDir  string
	offline   bool
	ownEngine bool
	engine    *docker.Engine
	track     []docker.Option
}

// WithDir is where kubeconfigs and collected logs go. Default: a new
// directory under os.TempDir(), removed by Stop.
func WithDir(dir string) Option { return optionFunc(func(o *options) { o.dir = dir }) }

// WithNodeImage uses this node image; it must be pinned by digest
// (name:tag@sha256:...). Default: the pins' image for WithKubernetes.
func WithNodeImage(image string) Option { return optionFunc(func(o *options) { o.image = image }) }

// WithKubernetes picks the pinned node image of this Kubernetes version
// ("v1.37.2"). Default: the first pinned node image, gauntlet's own.
func WithKubernetes(version string) Option { return optionFunc(func(o *options) { o.k8s = version }) }

// WithLogger receives progress. Default: log.Discard().
func WithLogger(l glog.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithWaitForReady bounds kind's wait for the control plane. Default: 3m.
func WithWaitForReady(d time.Duration) Option { return optionFunc(func(o *options) { o.wait = d }) }

// WithCgroupV1 says whether the host runs cgroup v1, where kubelet 1.37
// must be told failCgroupV1: false. Default: detected from /sys/fs/cgroup.
func WithCgroupV1(v1 bool) Option { return optionFunc(func(o *options) { o.cgroupV1 = &v1 }) }

// WithCacheDir is where the node image and gauntlet's own Docker engine
// are kept. Default: toolchain.DefaultCacheDir().
func WithCacheDir(dir string) Option { return optionFunc(func(o *options) { o.cacheDir = dir }) }

// WithOffline never downloads (Debian packages, Go modules). Default: false.
func WithOffline(offline bool) Option { return optionFunc(func(o *options) { o.offline = offline }) }

// WithOwnEngine uses gauntlet's own Docker engine even where the host's
// answers. Default: the host's engine when it answers.
func WithOwnEngine() Option { return optionFunc(func(o *options) { o.ownEngine = true }) }

// WithEngine uses this engine and leaves stopping it to the caller.
// Default: docker.Ensure when the first cluster starts.
func WithEngine(e *docker.Engine) Option { return optionFunc(func(o *options) { o.engine = e }) }

// WithTrack records what gauntlet's own Docker engine starts and mounts
// (docker.WithTrack). Default: nothing is recorded.
func WithTrack(group func(pid int), mountRoot func(dir string)) Option {
	return optionFunc(func(o *options) { o.track = []docker.Option{docker.WithTrack(group, mountRoot)} })
}

// Provider starts kind clusters. One provider may start several clusters
// at once; they share one Docker engine.
type Provider struct {
	pins *toolchain.Pins
	o    *options

	mu    sync.Mutex
	users int
	host  *hostState
	// image serialises building and loading the node image.
	image sync.Mutex
}

// New returns a kind Provider whose node image comes from pins.
func New(pins *toolchain.Pins, opts ...Option) *Provider {
	o := &options{logger: glog.Discard(), wait: 3 * time.Minute}
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
	// Built says the node image is gauntlet's own, built from the pins.
	Built bool
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
	built := p.pins.IsBuiltNodeImage(img)
	var nb *toolchain.NodeBuild
	if built {
		nb = p.pins.Kind.NodeBuild
	}
	return Plan{
		ClusterName: "gauntlet-" + name,
		NodeImage:   img,
		Built:       built,
		Kubeconfig:  filepath.Join(dir, name+".kubeconfig"),
		Dir:         dir,
		Config:      clusterConfig(v1, nb),
	}, nil
}

// clusterConfig is kind's config: one node (the self-built image's static
// CNI serves exactly one); on a cgroup v1 host kubelet 1.37 refuses to
// start unless its config allows it; with the self-built image kubeadm
// takes the preloaded images by their names and tags.
func clusterConfig(cgroupV1 bool, nb *toolchain.NodeBuild) string {
	cfg := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n"
	var patches []string
	if cgroupV1 {
		patches = append(patches, "kind: KubeletConfiguration\nfailCgroupV1: false\n")
	}
	if nb != nil {
		patches = append(patches, fmt.Sprintf("kind: ClusterConfiguration\nimageRepository: %s\netcd:\n  local:\n    imageTag: %s\ndns:\n  imageTag: %s\n",
			nb.ImageRepository, nb.Image("etcd").Tag, nb.Image("coredns").Tag))
	}
	if len(patches) > 0 {
		cfg += "kubeadmConfigPatches:\n"
		for _, p := range patches {
			cfg += "- |\n  " + strings.ReplaceAll(strings.TrimSuffix(p, "\n"), "\n", "\n  ") + "\n"
		}
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
	e, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	c, err := p.start(ctx, name, plan, e)
	if err != nil {
		p.release(context.Background())
		return nil, err
	}
	return c, nil
}

func (p *Provider) start(ctx context.Context, name string, plan Plan, e *docker.Engine) (*Cluster, error) {
	image := plan.NodeImage
	if plan.Built {
		id, err := p.nodeImage(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("kind cluster %s: node image: %w", name, err)
		}
		image = id
	}
	if err := os.MkdirAll(plan.Dir, 0o700); err != nil {
		return nil, err
	}
	kp := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	if existing, err := kp.List(); err == nil && slices.Contains(existing, plan.ClusterName) {
		p.o.logger.Warnf("%s: a kind cluster %s is left from an earlier run; deleting it", name, plan.ClusterName)
		if err := kp.Delete(plan.ClusterName, ""); err != nil {
			return nil, fmt.Errorf("kind cluster %s: delete the leftover %s: %w", name, plan.ClusterName, err)
		}
	}
	p.o.logger.Infof("%s: kind create %s with %s", name, plan.ClusterName, plan.NodeImage)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		done <- kp.Create(plan.ClusterName,
			kindcluster.CreateWithNodeImage(image),
			kindcluster.CreateWithRawConfig([]byte(plan.Config)),
			kindcluster.CreateWithKubeconfigPath(plan.Kubeconfig),
			kindcluster.CreateWithWaitForReady(p.o.wait),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false))
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		p.o.logger.Warnf("%s: cancelled; waiting for kind create to return so the cluster can be deleted", name)
		<-done
		err = ctx.Err()
	}
	c := &Cluster{name: name, plan: plan, kp: kp, ownDir: p.o.dir == "", provider: p, engine: e}
	if err != nil {
		logs := filepath.Join(plan.Dir, "logs")
		if lerr := kp.CollectLogs(plan.ClusterName, logs); lerr == nil {
			err = fmt.Errorf("%w (node logs in %s)", err, logs)
		}
		kp.Delete(plan.ClusterName, plan.Kubeconfig)
		return nil, fmt.Errorf("kind cluster %s: %w", name, err)
	}
	p.o.logger.Infof("%s: kind create returned after %s; waiting for CoreDNS", name, time.Since(start).Round(100*time.Millisecond))
	cfg, err := clientcmd.BuildConfigFromFlags("", plan.Kubeconfig)
	if err == nil {
		err = waitSettled(ctx, cfg, 2*time.Minute)
	}
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("kind cluster %s: %w", name, err)
	}
	c.rest = cfg
	p.o.logger.Infof("%s: kind cluster ready in %s (node Ready, CoreDNS available)", name, time.Since(start).Round(100*time.Millisecond))
	return c, nil
}

// nodeImage makes the self-built node image present in the engine and
// returns the image ID kind runs.
func (p *Provider) nodeImage(ctx context.Context, e *docker.Engine) (string, error) {
	p.image.Lock()
	defer p.image.Unlock()
	opts := []nodeimage.Option{nodeimage.WithPins(p.pins), nodeimage.WithLogger(p.o.logger), nodeimage.WithOffline(p.o.offline)}
	if p.o.cacheDir != "" {
		opts = append(opts, nodeimage.WithCacheDir(p.o.cacheDir))
	}
	return nodeimage.Ensure(ctx, e, opts...)
}

// Cluster is a running kind cluster.
type Cluster struct {
	name     string
	plan     Plan
	kp       *kindcluster.Provider
	rest     *rest.Config
	ownDir   bool
	provider *Provider
	engine   *docker.Engine

	mu   sync.Mutex
	done bool
}

var _ cluster.Cluster = (*Cluster)(nil)

func (c *Cluster) Name() string             { return c.name }
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }
func (c *Cluster) KubeconfigPath() string   { return c.plan.Kubeconfig }
func (c *Cluster) Substrate() string {
	s := "kind " + c.provider.pins.Kind.Version + " node " + c.plan.NodeImage
	if c.plan.Built {
		s += " (built here from the pins)"
	}
	return s + " on " + c.engine.Describe()
}
func (c *Cluster) Capabilities() cluster.Capabilities {
	return cluster.Capabilities{PodsRun: true, ContainersRun: true, Owned: true}
}

// Stop deletes the kind cluster (containers, their volumes, the
// kubeconfig); the last cluster of the provider also takes down what the
// provider brought up for them (the engine it started, the kind network
// and /lib/modules it made).
func (c *Cluster) Stop(ctx context.Context) error {
	first, err := c.stop()
	if first {
		if rerr := c.provider.release(ctx); err == nil {
			err = rerr
		}
	}
	return err
}

// stop deletes the cluster once; first says whether this call did.
func (c *Cluster) stop() (first bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false, nil
	}
	c.done = true
	err = c.kp.Delete(c.plan.ClusterName, c.plan.Kubeconfig)
	if c.ownDir {
		os.RemoveAll(c.plan.Dir)
	}
	if err != nil {
		return true, fmt.Errorf("kind cluster %s: delete: %w", c.name, err)
	}
	return true, nil
}
