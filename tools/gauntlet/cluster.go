package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/runstate"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func clusterUpCommand() cli.Command {
	return cli.Command{
		Name:    "cluster up",
		Summary: "start a substrate cluster and keep it until Ctrl-C",
		Doc: "Starts one cluster on a substrate - the same a run would start - prints its kubeconfig, and keeps it until Ctrl-C, " +
			"which stops it and removes everything it made (exit 0). For poking at what gauntlet runs on; recorded like a run, so " +
			"even a SIGKILL leaves nothing past the next gauntlet command.",
		Examples: []cli.Example{
			{What: "a local control plane", Command: "gauntlet cluster up"},
			{What: "a kind cluster with the pinned node image (as root)", Command: "gauntlet cluster up --substrate kind --name poke"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var tf toolchainFlags
			tf.register(fs, true)
			substrate := fs.String("substrate", "local", "where the cluster runs, `NAME`: local (control plane as child processes), kind or kubeconfig")
			name := fs.String("name", "gauntlet", "the cluster's `NAME`")
			dir := fs.String("dir", "", "the parent `DIR` of the cluster's files (default: the system temp dir)")
			kubeconfigPath := fs.String("kubeconfig", "", "with --substrate kubeconfig: the `PATH` of the existing cluster's kubeconfig")
			return func(ctx context.Context, _ []string) error {
				if err := checkSubstrate("cluster up", *substrate, "local", "kind", "kubeconfig"); err != nil {
					return err
				}
				if (*substrate == "kubeconfig") != (*kubeconfigPath != "") {
					return cli.Usagef("cluster up", "--kubeconfig PATH goes with --substrate kubeconfig, and only with it")
				}
				return clusterUp(ctx, &tf, *substrate, *name, *dir, *kubeconfigPath)
			}
		},
	}
}

func clusterUp(ctx context.Context, tf *toolchainFlags, substrate, name, dir, kubeconfigPath string) error {
	l := log.New(os.Stderr)
	// Recorded like a run, so a SIGKILL leaves nothing past the next command.
	state, err := runstate.Open("", "cluster up "+name)
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
	p, err := provider(ctx, substrate, dir, kubeconfigPath, tf, l, state)
	if err != nil {
		return err
	}
	start := time.Now()
	c, err := p.Start(ctx, name)
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
func provider(ctx context.Context, name, dir, kubeconfigPath string, tf *toolchainFlags, l log.Logger, state *runstate.State) (cluster.Provider, error) {
	return substrate.New(ctx, name, substrate.Config{
		Logger: l, ParentDir: dir, KindDir: dir, Offline: tf.offline, CacheDir: tf.cache, Kubeconfig: kubeconfigPath,
		Toolchain: func(ctx context.Context) (*toolchain.Toolchain, error) {
			return toolchain.Resolve(ctx, tf.options(l, toolchain.WithTools(local.Tools()...))...)
		},
		Track: func(pid int) {
			if err := state.Group(pid); err != nil {
				l.Warnf("%v", err)
			}
		},
		MountRoot: func(d string) { state.MountRoot(d) },
	})
}
