package local

import (
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Option configures the local provider.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	parentDir    string
	logger       log.Logger
	pods         bool
	apiPort      int
	readyTimeout time.Duration
	stopGrace    time.Duration
	started      func(pid int)
}

// WithParentDir creates each cluster's directory (PKI, etcd data, logs,
// kubeconfig) under dir. Default: os.TempDir().
func WithParentDir(dir string) Option { return optionFunc(func(o *options) { o.parentDir = dir }) }

// WithLogger receives progress. Default: log.Discard().
func WithLogger(l log.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithPods runs kube-scheduler and kwok with one fake Node so pods reach
// Running and Deployments become Available. Default: true.
func WithPods(on bool) Option { return optionFunc(func(o *options) { o.pods = on }) }

// WithAPIServerPort asks for a kube-apiserver port. If it is taken,
// another free port is used and a warning logged. Default: any free port.
func WithAPIServerPort(port int) Option { return optionFunc(func(o *options) { o.apiPort = port }) }

// WithReadyTimeout bounds the wait for each component. Default: 60s.
func WithReadyTimeout(d time.Duration) Option {
	return optionFunc(func(o *options) { o.readyTimeout = d })
}

// WithStarted is called with the pid of every component right after it
// starts; each leads its own process group (e.g. for a run's state file,
// so the next gauntlet process can end what a killed one left).
func WithStarted(f func(pid int)) Option { return optionFunc(func(o *options) { o.started = f }) }

func defaults() *options {
	return &options{logger: log.Discard(), pods: true, readyTimeout: 60 * time.Second, stopGrace: 10 * time.Second}
}
