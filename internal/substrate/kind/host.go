package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/docker"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kindNetwork is the Docker network kind puts its nodes on.
const kindNetwork = "kind"

// libModules is the host directory kind mounts into every node; Docker
// creates it when it is missing.
const libModules = "/lib/modules"

// hostState is what the provider brought up for its clusters, to be taken
// down when the last of them stops.
type hostState struct {
	engine      *docker.Engine
	stopEngine  bool
	env         map[string]*string // saved DOCKER_HOST and PATH
	madeNetwork bool               // the kind network did not exist before
	hadModules  bool
}

// acquire returns the engine the provider's clusters share, starting or
// finding it for the first cluster, and points kind's docker CLI at it.
func (p *Provider) acquire(ctx context.Context) (*docker.Engine, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.host != nil {
		p.users++
		return p.host.engine, nil
	}
	h := &hostState{engine: p.o.engine}
	if h.engine == nil {
		opts := append([]docker.Option{docker.WithLogger(p.o.logger), docker.WithPins(p.pins), docker.WithOffline(p.o.offline)}, p.o.track...)
		if p.o.cacheDir != "" {
			opts = append(opts, docker.WithCacheDir(p.o.cacheDir))
		}
		if p.o.ownEngine {
			opts = append(opts, docker.WithOwnEngine())
		}
		e, err := docker.Ensure(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("kind needs a Docker engine: %w", err)
		}
		h.engine, h.stopEngine = e, true
	}
	h.env = map[string]*string{}
	if h.engine.Host != "" || h.engine.BinDir != "" {
		for _, kv := range h.engine.Env([]string{"PATH=" + os.Getenv("PATH")}) {
			k, v, _ := strings.Cut(kv, "=")
			if old, ok := os.LookupEnv(k); ok {
				h.env[k] = &old
			} else {
				h.env[k] = nil
			}
			os.Setenv(k, v)
		}
	}
	_, err := h.engine.Output(ctx, "network", "inspect", kindNetwork)
	h.madeNetwork = err != nil
	_, err = os.Stat(libModules)
	h.hadModules = err == nil
	p.host, p.users = h, 1
	return h.engine, nil
}

// release takes down, after the last cluster, what acquire brought up.
func (p *Provider) release(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.host == nil {
		return nil
	}
	if p.users--; p.users > 0 {
		return nil
	}
	h := p.host
	p.host = nil
	var errs []error
	// The network is the provider's to remove when it made it, or when the
	// engine is gauntlet's own (its data root, networks included, outlives
	// each run, and a bridge left defined keeps its interface on the host).
	if h.madeNetwork || h.engine.Owned {
		if out, err := h.engine.Output(ctx, "network", "inspect", "--format", "{{len .Containers}}", kindNetwork); err == nil && out == "0" {
			if _, err := h.engine.Output(ctx, "network", "rm", kindNetwork); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if !h.hadModules {
		// Docker made it for kind's read-only mount; rmdir only removes
		// it while it is empty.
		if err := os.Remove(libModules); err != nil && !os.IsNotExist(err) {
			p.o.logger.Warnf("kind: %s was created for kind's nodes and could not be removed: %v", libModules, err)
		}
	}
	if h.stopEngine {
		errs = append(errs, h.engine.Stop(ctx))
	}
	for k, v := range h.env {
		if v == nil {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, *v)
		}
	}
	return errors.Join(errs...)
}

// waitSettled waits until the cluster serves workloads: the default
// ServiceAccount exists and CoreDNS is available (kind's own wait stops
// at the control-plane node being Ready; anything resolving names before
// CoreDNS has endpoints fails).
func waitSettled(ctx context.Context, cfg *rest.Config, bound time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		last := settled(wctx, cs)
		if last == nil {
			return nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("not settled within %s: %v", bound, last)
		case <-time.After(time.Second):
		}
	}
}

func settled(ctx context.Context, cs kubernetes.Interface) error {
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ServiceAccount default/default does not exist yet")
		}
		return err
	}
	d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !available(d) {
		return fmt.Errorf("CoreDNS %d/%d available", d.Status.AvailableReplicas, d.Status.Replicas)
	}
	return nil
}

func available(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= want && d.Status.UpdatedReplicas >= want
}
