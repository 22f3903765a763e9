package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster/kind"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster/kubeconfig"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster/local"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/runstate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
)

func runCluster(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "up" {
		return fmt.Errorf("usage: gauntlet cluster up [--substrate local] [--name NAME] [--dir DIR]")
	}
	fs := flag.NewFlagSet("cluster up", flag.ContinueOnError)
	var tf toolchainFlags
	tf.register(fs)
	substrate := fs.String("substrate", "local", "local (control plane as child processes), kind or kubeconfig")
	name := fs.String("name", "gauntlet", "cluster name")
	dir := fs.String("dir", "", "parent directory for the cluster's files (default: the system temp dir)")
	kubeconfigPath := fs.String("kubeconfig", "", "with --substrate kubeconfig: the kubeconfig of the existing cluster")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	l := log.New(os.Stderr)
	// Recorded like a run, so a SIGKILL leaves nothing past the next command.
	state, err := runstate.Open("", "cluster up "+*name)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := state.End(sctx); err != nil {
			l.Warnf("%v", err)
		}
	}()
	p, err := provider(ctx, *substrate, *dir, *kubeconfigPath, &tf, l, state)
	if err != nil {
		return err
	}
	start := time.Now()
	c, err := p.Start(ctx, *name)
	if err != nil {
		return err
	}
	if lc, ok := c.(*local.Cluster); ok {
		state.Dir(lc.Dir())
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Stop(sctx); err != nil {
			l.Warnf("stop: %v", err)
		}
		l.Infof("%s stopped and cleaned up", c.Name())
	}()
	fmt.Printf("cluster %q ready in %s on %s\nkubeconfig: %s\n\n  export KUBECONFIG=%s\n\nCtrl-C stops it and removes everything it made.\n",
		c.Name(), time.Since(start).Round(10*time.Millisecond), c.Substrate(), c.KubeconfigPath(), c.KubeconfigPath())
	<-ctx.Done()
	return nil
}

// provider builds the cluster provider for a substrate name.
func provider(ctx context.Context, substrate, dir, kubeconfigPath string, tf *toolchainFlags, l log.Logger, state *runstate.State) (cluster.Provider, error) {
	group := func(pid int) {
		if err := state.Group(pid); err != nil {
			l.Warnf("%v", err)
		}
	}
	switch substrate {
	case "local":
		tc, err := toolchain.Resolve(ctx, tf.options(l, toolchain.WithTools(local.Tools()...))...)
		if err != nil {
			return nil, err
		}
		opts := []local.Option{local.WithLogger(l), local.WithStarted(group)}
		if dir != "" {
			opts = append(opts, local.WithParentDir(dir))
		}
		return local.New(tc, opts...), nil
	case "kind":
		pins, err := toolchain.DefaultPins()
		if err != nil {
			return nil, err
		}
		opts := []kind.Option{kind.WithLogger(l), kind.WithOffline(tf.offline), kind.WithTrack(group, func(d string) { state.MountRoot(d) })}
		if dir != "" {
			opts = append(opts, kind.WithDir(dir))
		}
		if tf.cache != "" {
			opts = append(opts, kind.WithCacheDir(tf.cache))
		}
		return kind.New(pins, opts...), nil
	case "kubeconfig":
		if kubeconfigPath == "" {
			return nil, fmt.Errorf("--substrate kubeconfig needs --kubeconfig PATH")
		}
		return kubeconfig.New(kubeconfigPath), nil
	default:
		return nil, fmt.Errorf("substrate %q: want local, kind or kubeconfig", substrate)
	}
}
