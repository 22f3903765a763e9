package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/docker"
	"github.com/gauntlet-k8s/gauntlet/internal/nodeimage"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// pinsFile is the pins file --repin rewrites, relative to the checkout.
const pinsFile = "third_party/pins.json"

func kindNodeImageCommand() cli.Command {
	return cli.Command{
		Name:    "kind node-image",
		Summary: "build the pinned kind node image and load it into Docker",
		Doc: "Builds the kind node image from pinned Debian packages and Go sources, checks it is the image " + pinsFile + " pins by " +
			"digest (or, with --repin, rewrites that pin and the locked package set for review), and loads it into a Docker " +
			"engine: the host's, else one gauntlet starts from pinned packages for this and stops. About 29 minutes cold on two " +
			"cores; runs on --substrate kind build it on demand.",
		Examples: []cli.Example{
			{What: "build, verify against the pin, load", Command: "gauntlet kind node-image"},
			{What: "accept a changed build: rewrite the pins, do not load", Command: "gauntlet kind node-image --repin --load=false"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var tf toolchainFlags
			tf.register(fs, false)
			repin := fs.Bool("repin", false, "accept the package set and digest the build produces: rewrite them in "+pinsFile+" (review the diff)")
			load := fs.Bool("load", true, "load the image into a Docker engine: the host's, else one gauntlet starts for this and stops (--load=false to skip)")
			return func(ctx context.Context, _ []string) error { return nodeImage(ctx, &tf, *repin, *load) }
		},
	}
}

func nodeImage(ctx context.Context, tf *toolchainFlags, repin, load bool) error {
	l := log.New(os.Stderr)
	opts := []nodeimage.Option{nodeimage.WithLogger(l), nodeimage.WithOffline(tf.offline)}
	if tf.cache != "" {
		opts = append(opts, nodeimage.WithCacheDir(tf.cache))
	}
	if repin {
		opts = append(opts, nodeimage.WithUnlockedPackages())
	}
	start := time.Now()
	res, err := nodeimage.Build(ctx, opts...)
	if err != nil {
		return err
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return err
	}
	pinned, _ := pins.BuiltNodeImage()
	fmt.Printf("node image %s\n  docker id  %s\n  layer      %d MB, %d Debian packages\n  files      %s\n  built in   %s\n",
		res.Image, res.ID, res.LayerSize>>20, len(res.Packages), res.Dir, time.Since(start).Round(100*time.Millisecond))
	if res.Image != pinned.Image || !equal(res.Packages, pins.Kind.NodeBuild.Debian.Locked) {
		if !repin {
			return fmt.Errorf("the build is %s but %s pins %s: not the pinned image (re-pin with --repin if the pins changed on purpose)",
				res.Image, pinsFile, pinned.Image)
		}
		if err := repinFile(pinsFile, pinned.Image, res); err != nil {
			return err
		}
		fmt.Printf("re-pinned in %s: %s and %d locked packages (was %s)\n", pinsFile, res.Image, len(res.Packages), pinned.Image)
	} else {
		fmt.Printf("  matches    the pin in %s\n", pinsFile)
	}
	if !load {
		return nil
	}
	dopts := []docker.Option{docker.WithLogger(l), docker.WithOffline(tf.offline)}
	if tf.cache != "" {
		dopts = append(dopts, docker.WithCacheDir(tf.cache))
	}
	e, err := docker.Ensure(ctx, dopts...)
	if err != nil {
		return fmt.Errorf("the image is built in %s, but loading it needs a Docker engine: %w", res.Dir, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.Stop(sctx); err != nil {
			l.Warnf("stop the Docker engine: %v", err)
		}
	}()
	if err := nodeimage.Load(ctx, e, res, l); err != nil {
		return err
	}
	fmt.Printf("  loaded in  %s\n", e.Describe())
	return nil
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// repinFile rewrites the node image's digest and locked packages in the
// checkout's pins file. It refuses a file that does not round-trip
// through the pins unchanged, so nothing but those two pins can change.
func repinFile(path, old string, res *nodeimage.Result) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--repin rewrites %s in the checkout (run it from the repository's root): %w", path, err)
	}
	p, err := toolchain.ParsePins(raw, os.DirFS(filepath.Join(filepath.Dir(path), "tools")))
	if err != nil {
		return err
	}
	if b, err := marshalPins(p); err != nil || !bytes.Equal(b, raw) {
		return errors.Join(fmt.Errorf("%s does not round-trip through the pins unchanged; update it by hand: image %s, locked %s",
			path, res.Image, strings.Join(res.Packages, " ")), err)
	}
	found := false
	for i := range p.Kind.NodeImages {
		if p.Kind.NodeImages[i].Build && p.Kind.NodeImages[i].Image == old {
			p.Kind.NodeImages[i].Image = res.Image
			found = true
		}
	}
	if !found {
		return fmt.Errorf("%s has no node image %s marked build (it changed since this binary was built: run again)", path, old)
	}
	p.Kind.NodeBuild.Debian.Locked = res.Packages
	out, err := marshalPins(p)
	if err != nil {
		return err
	}
	if _, err := toolchain.ParsePins(out, os.DirFS(filepath.Join(filepath.Dir(path), "tools"))); err != nil {
		return fmt.Errorf("the re-pinned file would not be valid: %w", err)
	}
	return os.WriteFile(path, out, 0o644)
}

func marshalPins(p *toolchain.Pins) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(p)
	return buf.Bytes(), err
}
