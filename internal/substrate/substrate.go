// Package substrate is the one switch over substrate names: it builds the
// cluster provider a run, a command or a test asks for by name.
package substrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/kind"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/kubeconfig"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Names are the substrates, in the order a message lists them.
var names = []string{"local", "kind", "kubeconfig"}

// Names returns the substrate names: local (a control plane as child
// processes), kind (a node container per cluster) and kubeconfig (a
// cluster that already exists).
func Names() []string { return slices.Clone(names) }

// Check refuses a name that is no substrate.
func Check(name string) error {
	if slices.Contains(names, name) {
		return nil
	}
	return fmt.Errorf("substrate %q: want %s", name, strings.Join(names, ", "))
}

// Config is what the substrates need; each reads only its own fields.
type Config struct {
	Logger log.Logger
	// Toolchain resolves the control plane's binaries (local only), so a
	// kind or kubeconfig provider never builds them.
	Toolchain func(ctx context.Context) (*toolchain.Toolchain, error)
	// Pins name the node image's sources (kind); nil means the default
	// pins.
	Pins *toolchain.Pins
	// ParentDir holds each local cluster's folder; "" is the system temp
	// dir.
	ParentDir string
	// KindDir holds the kind clusters' kubeconfigs and is kept on stop;
	// "" is a folder of each cluster's own, removed on stop.
	KindDir string
	// Offline: never download (kind's node image build).
	Offline bool
	// CacheDir is the gauntlet cache (kind); "" is the default.
	CacheDir string
	// Track records each process group and mount root a cluster makes, so
	// a killed run's leftovers are found by the next command.
	Track     func(pid int)
	MountRoot func(dir string)
	// Kubeconfig is the existing cluster's kubeconfig (kubeconfig only).
	Kubeconfig string
}

// New builds the provider for the substrate name.
func New(ctx context.Context, name string, c Config) (cluster.Provider, error) {
	track := c.Track
	if track == nil {
		track = func(int) {}
	}
	mountRoot := c.MountRoot
	if mountRoot == nil {
		mountRoot = func(string) {}
	}
	switch name {
	case "local":
		if c.Toolchain == nil {
			return nil, fmt.Errorf("substrate local: no toolchain to start the control plane from")
		}
		tc, err := c.Toolchain(ctx)
		if err != nil {
			return nil, err
		}
		opts := []local.Option{local.WithStarted(track)}
		if c.Logger != nil {
			opts = append(opts, local.WithLogger(c.Logger))
		}
		if c.ParentDir != "" {
			opts = append(opts, local.WithParentDir(c.ParentDir))
		}
		return local.New(tc, opts...), nil
	case "kind":
		pins := c.Pins
		if pins == nil {
			var err error
			if pins, err = toolchain.DefaultPins(); err != nil {
				return nil, err
			}
		}
		opts := []kind.Option{kind.WithOffline(c.Offline), kind.WithTrack(track, mountRoot)}
		if c.Logger != nil {
			opts = append(opts, kind.WithLogger(c.Logger))
		}
		if c.KindDir != "" {
			opts = append(opts, kind.WithDir(c.KindDir))
		}
		if c.CacheDir != "" {
			opts = append(opts, kind.WithCacheDir(c.CacheDir))
		}
		return kind.New(pins, opts...), nil
	case "kubeconfig":
		if c.Kubeconfig == "" {
			return nil, fmt.Errorf("substrate kubeconfig needs the existing cluster's kubeconfig")
		}
		return kubeconfig.New(c.Kubeconfig), nil
	}
	return nil, Check(name)
}
