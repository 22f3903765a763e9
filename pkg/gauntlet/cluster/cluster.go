// Package cluster defines what gauntlet needs of a Kubernetes substrate.
// The providers gauntlet ships live in internal/substrate: local (a
// control plane of child processes, the default), kind (real nodes in
// Docker) and kubeconfig (an existing cluster, used as is); another
// substrate implements Provider.
package cluster

import (
	"context"

	"k8s.io/client-go/rest"
)

// Cluster is one running substrate a stage can act on.
type Cluster interface {
	// Name is the name the cluster was started with ("subject", "oracle").
	Name() string
	// RESTConfig returns a fresh copy of the admin client config.
	RESTConfig() *rest.Config
	// KubeconfigPath is a kubeconfig file for the admin identity, owned by
	// the run (never the user's own kubeconfig).
	KubeconfigPath() string
	// Capabilities says what the substrate can show.
	Capabilities() Capabilities
	// Substrate describes the substrate for evidence pages, e.g.
	// "local control plane v1.37.2 (etcd 3.7.3, kwok 0.8.0)".
	Substrate() string
	// Stop tears the cluster down and removes what the provider created.
	// It is safe to call more than once.
	Stop(ctx context.Context) error
}

// Capabilities are the substrate facts a stage may depend on.
type Capabilities struct {
	// PodsRun: pods reach Running and Deployments become Available (kwok
	// fakes this on the local substrate; kind runs real containers).
	PodsRun bool
	// ContainersRun: containers really execute, so a workload can serve
	// traffic (e.g. an aggregated API backed by a Deployment answers).
	ContainersRun bool
	// Owned: the provider created the cluster and Stop destroys it.
	Owned bool
}

// Provider starts clusters of one substrate.
type Provider interface {
	// Start starts a cluster and waits until it is ready, bounded by ctx.
	// On error nothing the provider started is left running.
	Start(ctx context.Context, name string) (Cluster, error)
}
