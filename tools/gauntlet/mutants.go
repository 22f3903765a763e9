package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/mutant"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func mutantsCommand() cli.Command {
	return cli.Command{
		Name: "mutants", Args: "<estate> | --all", MinArgs: 0, MaxArgs: 1,
		Summary: "run the gauntlet with each mutant engine as the subject and write the kill matrix",
		Doc: "Runs the estate's gauntlet once per mutant engine - the pinned OpenTofu wrapped by gauntlet-mutant, breaking one promise " +
			"the way a real engine regression would - and writes the kill matrix, score first and survivors before kills, to " +
			"mutants.md and mutants.json. Exits 1 unless every mutant was caught by a stage it names. With --all it does so for every " +
			"estate, one after another, each into <out>/<estate>/, and writes <out>/index.md (exit 1 when any estate has a survivor, " +
			"3 when the rest are killed but some could not run); --shard I/N takes only the I-th of N parts of the estates and leaves " +
			"shard.json for `gauntlet merge`.",
		Examples: []cli.Example{
			{What: "every mutant, stopping each once an expected stage caught it", Command: "gauntlet mutants corpus-k8s-metrics-server"},
			{What: "one mutant and the planted survivor, every stage for each (a full matrix; exits 1: identity survives)", Command: "gauntlet mutants corpus-k8s-metrics-server --mutants drop-one-create,identity --all-stages"},
			{What: "every estate's kill matrix, the second of three shards (out/shards/mutants-2-of-3), for `gauntlet merge`", Command: "gauntlet mutants --all --shard 2/3"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var tf toolchainFlags
			tf.register(fs, false)
			estates := registerEstates(fs)
			substrate := fs.String("substrate", "local", "where the clusters run, `NAME`: local or kind")
			out := fs.String("out", "", "the `DIR` to write mutants.md and mutants.json to; with --all, the folder holding one per estate and index.md (default: out/<estate>; with --all, out, or out/shards/mutants-I-of-N with --shard)")
			only := fs.String("mutants", "", "run only these mutants, comma-separated `NAMES` (default: all but identity, the planted survivor that shows the matrix reports survivors)")
			allStages := fs.Bool("all-stages", false, "run every stage for every mutant (a full matrix) instead of stopping once an expected stage caught it")
			var every allFlags
			every.register(fs, true)
			return func(ctx context.Context, args []string) error {
				if err := checkSubstrate("mutants", *substrate, "local", "kind"); err != nil {
					return err
				}
				if err := every.check("mutants", args); err != nil {
					return err
				}
				one := func(name, dir string) error {
					return runMutants(ctx, name, &tf, *estates, *substrate, dir, *only, *allStages)
				}
				if every.all {
					return forEstates(ctx, "mutants", *estates, every.shard, *out, "out", one)
				}
				return one(args[0], *out)
			}
		},
	}
}

// runMutants runs the estate's gauntlet once per mutant engine and writes
// the kill matrix; it fails when any mutant was not caught by a stage it
// names.
func runMutants(ctx context.Context, name string, tf *toolchainFlags, estates, substrate, out, only string, all bool) error {
	spec, err := estate.Load(estates, name)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join("out", spec.Name)
	}
	var names []string
	if only != "" {
		names = strings.Split(only, ",")
	}
	ms, err := mutant.Select(names)
	if err != nil {
		return err
	}
	l := log.New(os.Stderr)
	if err := tf.ensureCorpus(ctx, spec, l); err != nil {
		return err
	}
	start := time.Now()
	m, err := mutant.Run(ctx, spec, mutant.Options{Mutants: ms, Substrate: substrate, CacheDir: tf.cache, Offline: tf.offline, Logger: l, AllStages: all,
		// The rows cite the failing calls' logs here, beside the matrix.
		FailedLogs: filepath.Join(out, "logs")})
	if err != nil {
		return err
	}
	paths, err := mutant.WriteAll(out, m)
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
	if err := m.Err(); err != nil {
		return cli.NotClear(err)
	}
	return nil
}
