package tape

import (
	"context"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"k8s.io/client-go/rest"
)

// Cluster is the oracle's cluster as the run sees it. Recording, c is the
// live cluster, whose client configs then go through the tape; replaying,
// c is nil and the cluster is a stand-in that answers from the
// recording and starts nothing.
func (s *Side) Cluster(c cluster.Cluster) cluster.Cluster {
	if s.replay {
		s.t.mu.Lock()
		f := s.t.facts
		s.t.mu.Unlock()
		return &replayed{s: s, f: f}
	}
	s.t.mu.Lock()
	s.t.facts = facts{name: c.Name(), substrate: c.Substrate(), caps: c.Capabilities()}
	s.t.mu.Unlock()
	return &recording{Cluster: c, s: s}
}

type recording struct {
	cluster.Cluster
	s *Side
}

func (c *recording) RESTConfig() *rest.Config { return c.s.Wrap(c.Cluster.RESTConfig()) }

// replayed stands for the recorded cluster.
type replayed struct {
	s *Side
	f facts
}

func (c *replayed) Name() string { return c.f.name }

// RESTConfig points nowhere: every request is answered by the tape
// before it could leave the process.
func (c *replayed) RESTConfig() *rest.Config {
	return c.s.Wrap(&rest.Config{Host: "https://oracle.replay.invalid", BearerToken: "replay",
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 1000, Burst: 1000})
}
func (c *replayed) KubeconfigPath() string             { return "" }
func (c *replayed) Capabilities() cluster.Capabilities { return c.f.caps }
func (c *replayed) Substrate() string                  { return c.f.substrate + ", replayed from its recording" }
func (c *replayed) Stop(context.Context) error         { return nil }
