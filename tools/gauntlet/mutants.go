package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/mutant"
)

// runMutants runs the estate's gauntlet once per mutant engine and writes
// the kill matrix; it fails when any mutant was not caught by a stage it
// names.
func runMutants(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	var tf toolchainFlags
	tf.register(fs)
	substrate := fs.String("substrate", "local", "local or kind")
	out := fs.String("out", "", "directory for mutants.md and mutants.json (default out/<estate>)")
	estates := fs.String("estates", "estates", "directory holding the estates")
	only := fs.String("mutants", "", "comma-separated mutants to run (default: all; `identity` is the planted survivor)")
	all := fs.Bool("all-stages", false, "run every stage for every mutant (a full matrix) instead of stopping once an expected stage caught it")
	every := fs.Bool("all", false, "every estate in --estates, one after another, each into <out>/<estate>/ (default out: out)")
	shardArg := fs.String("shard", "", "with --all: only shard I of N of the estates (sorted by name, round robin), and shard.json for `gauntlet merge`")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if (fs.NArg() != 1) == !*every || (*shardArg != "" && !*every) {
		return fmt.Errorf("usage: gauntlet mutants <estate> | --all [--shard I/N] [--mutants a,b] [--all-stages]")
	}
	if len(tf.tools) > 0 {
		return fmt.Errorf("--tool is not supported here: mutants wrap the pinned tofu")
	}
	sh, err := parseShard(*shardArg)
	if err != nil {
		return err
	}
	one := func(name, dir string) error {
		spec, err := estate.Load(*estates, name)
		if err != nil {
			return err
		}
		if dir == "" {
			dir = filepath.Join("out", spec.Name)
		}
		var names []string
		if *only != "" {
			names = strings.Split(*only, ",")
		}
		ms, err := mutant.Select(names)
		if err != nil {
			return err
		}
		l := log.New(os.Stderr)
		if err := ensureCorpus(ctx, spec, tf.cache, tf.offline, l); err != nil {
			return err
		}
		start := time.Now()
		m, err := mutant.Run(ctx, spec, mutant.Options{Mutants: ms, Substrate: *substrate, CacheDir: tf.cache, Offline: tf.offline, Logger: l, AllStages: *all})
		if err != nil {
			return err
		}
		paths, err := mutant.WriteAll(dir, m)
		if err != nil {
			return err
		}
		k, n := m.Score()
		fmt.Printf("%s: mutation score %d/%d in %s\n", spec.Name, k, n, time.Since(start).Round(time.Second))
		for _, r := range m.Rows {
			what := r.Why
			if r.Status == mutant.Killed {
				what = r.KilledBy + ": " + r.Check
			}
			fmt.Printf("  %-18s %-9s %-7s %s\n", r.Name, r.Status, r.Duration.Round(time.Second), what)
		}
		for _, p := range paths {
			fmt.Println("wrote", p)
		}
		return m.Err()
	}
	if *every {
		return forEstates(ctx, "mutants", *estates, sh, *out, "out", one)
	}
	return one(fs.Arg(0), *out)
}
