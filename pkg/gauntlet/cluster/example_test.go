package cluster_test

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
)

// existing is a substrate of the caller's own: it hands out clusters it
// did not start (say, two namespaces' worth of a shared test cluster).
type existing struct{ clusters map[string]cluster.Cluster }

func (e existing) Start(ctx context.Context, name string) (cluster.Cluster, error) {
	c, ok := e.clusters[name]
	if !ok {
		return nil, fmt.Errorf("no %s cluster", name)
	}
	return c, nil
}

// A substrate is a Provider; gauntlet.WithProvider runs both sides on it.
func ExampleProvider() {
	var p cluster.Provider = existing{}
	_, err := p.Start(context.Background(), "subject")
	fmt.Println(err)
	// Output:
	// no subject cluster
}
