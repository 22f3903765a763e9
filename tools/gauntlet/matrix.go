package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/matrix"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func matrixCommand() cli.Command {
	return cli.Command{
		Name: "matrix", Args: "<estate> | --all", MinArgs: 0, MaxArgs: 1,
		Summary: "run an estate with many pinned engines against one oracle and write the parity table",
		Doc: "Builds the named pinned engines first (one at a time), then runs the estate once per engine against one oracle and " +
			"writes the parity table - stage x engine, each fail naming the checks that differ, each not-run why - with the stages " +
			"whose outcome changed between consecutive versions of one engine, to matrix.md, matrix.html, matrix.json and junit.xml, and each " +
			"engine's own evidence in a folder per engine. The oracle runs once, recorded, and is replayed for the other engines " +
			"unless --oracle-live. Exits 1 when any engine's run is not clear. With --all it does so for every estate, one after " +
			"another, each into <out>/<estate>/, and writes <out>/index.md (exit 1 when any estate's matrix is not clear, 3 when the " +
			"rest are clear but some could not run); --shard I/N takes only the I-th of N parts of the estates and leaves shard.json " +
			"for `gauntlet merge`.",
		Examples: []cli.Example{
			{What: "three engines against the pinned terraform", Command: "gauntlet matrix corpus-k8s-metrics-server --engines tofu@1.8.11,tofu@1.12.6,terraform@1.5.7"},
			{What: "every pinned engine against stock OpenTofu, keeping earlier runs of this commit", Command: "gauntlet matrix corpus-k8s-metrics-server --engines all --oracle tofu@1.12.6 --reuse"},
			{What: "the first of two shards of every estate (out/shards/matrix-1-of-2), for `gauntlet merge`", Command: "gauntlet matrix --all --shard 1/2 --engines tofu@1.9.4,tofu@1.12.6"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f matrixFlags
			f.tf = &toolchainFlags{}
			f.tf.register(fs, false)
			var page pageFlags
			page.register(fs)
			estates := registerEstates(fs)
			fs.StringVar(&f.engines, "engines", "", "the pinned engines to run, comma-separated `LIST` such as tofu@1.9.4,terraform@1.5.7, or all (required)")
			fs.StringVar(&f.oracle, "oracle", "terraform", "the oracle, a pinned `ENGINE`: terraform (terraform@1.11.4) or tofu@1.12.6")
			fs.StringVar(&f.substrate, "substrate", "local", "where the clusters run, `NAME`: local or kind")
			fs.StringVar(&f.out, "out", "", "the `DIR` to write matrix.md, matrix.html, matrix.json, junit.xml and one evidence folder per engine to; with --all, the folder holding one per estate and index.md (default: out/matrix/<estate>; with --all, out/matrix, or out/shards/matrix-I-of-N with --shard)")
			fs.StringVar(&f.stages, "stages", "", "run only these stages, comma-separated `IDS`, with the stages they depend on (default: all)")
			fs.IntVar(&f.jobs, "jobs", 0, "engine runs at once, `N`, each with its own two clusters (default: one per two cores on local, 1 on kind)")
			fs.BoolVar(&f.oracleLive, "oracle-live", false, "run the oracle live with every engine instead of once, recorded, and replayed for the others")
			fs.BoolVar(&f.reuse, "reuse", false, "keep an engine's earlier run in the output folder when it is of this (clean) commit, the same binaries, oracle, substrate and stages")
			registerReattach(fs, &f.reattach)
			var every allFlags
			every.register(fs, true)
			return func(ctx context.Context, args []string) error {
				if f.engines == "" {
					return cli.Usagef("matrix", "--engines is required: a comma-separated list of pinned engines, or all")
				}
				if err := checkSubstrate("matrix", f.substrate, "local", "kind"); err != nil {
					return err
				}
				var err error
				if f.page, err = page.options("matrix"); err != nil {
					return err
				}
				f.estates = *estates
				f.reproduce = "go run ./tools/gauntlet matrix " + strings.Join(fs.CommandLine(), " ")
				if err := every.check("matrix", args); err != nil {
					return err
				}
				if every.all {
					return forEstates(ctx, "matrix", f.estates, every.shard, f.out, filepath.Join("out", "matrix"), func(name, dir string) error {
						return runMatrix(ctx, name, dir, f)
					})
				}
				return runMatrix(ctx, args[0], f.out, f)
			}
		},
	}
}

type matrixFlags struct {
	tf                                               *toolchainFlags
	estates, engines, oracle, substrate, out, stages string
	jobs                                             int
	oracleLive, reuse, reattach                      bool
	reproduce                                        string
	page                                             []evidence.Option
}

// runMatrix runs an estate once per engine against one oracle and writes
// the parity table and every engine's evidence to out (default
// out/matrix/<estate>).
func runMatrix(ctx context.Context, name, out string, f matrixFlags) error {
	tf := f.tf
	spec, err := estate.Load(f.estates, name)
	if err != nil {
		return err
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return err
	}
	refs, err := engineRefs(pins, f.engines)
	if err != nil {
		return err
	}
	var specs []string
	for _, e := range refs {
		specs = append(specs, e.String())
	}
	if _, _, err := matrix.Resolve(pins, specs, f.oracle); err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join("out", "matrix", spec.Name)
	}
	var selected []string
	if f.stages != "" {
		selected = strings.Split(f.stages, ",")
	}
	l := log.New(os.Stderr)
	if err := tf.ensureCorpus(ctx, spec, l); err != nil {
		return err
	}
	// Every engine is built (one at a time) before the first run starts,
	// so no run waits on a build and a build failure costs no run.
	shas := map[string]string{}
	for _, e := range refs {
		tc, err := toolchain.Resolve(ctx, tf.options(l, toolchain.WithTools(e.Tool))...)
		if err != nil {
			return fmt.Errorf("engine %s: %w", e, err)
		}
		b, _ := tc.Binary(e.Tool)
		shas[e.Tool] = b.SHA256
	}
	_, orc, _ := matrix.Resolve(pins, specs, f.oracle)
	commit := gitCommit(ctx)
	var reuseRun func(string) *result.Run
	if f.reuse {
		reuseRun = func(tool string) *result.Run {
			raw, err := os.ReadFile(filepath.Join(out, tool, evidence.JSONFile))
			if err != nil {
				return nil
			}
			var r result.Run
			if err := json.Unmarshal(raw, &r); err != nil {
				l.Warnf("matrix: %s: earlier run.json unreadable: %v", tool, err)
				return nil
			}
			var ref toolchain.EngineRef
			for _, e := range refs {
				if e.Tool == tool {
					ref = e
				}
			}
			want := matrix.Want{Estate: spec.Name, Commit: commit, Substrate: f.substrate, Subject: ref, Oracle: orc, SubjectSHA: shas[tool],
				Stages: selected, ReattachProviders: f.reattach}
			if err := matrix.Reusable(&r, want); err != nil {
				l.Infof("matrix: %s runs again: %v", ref, err)
				return nil
			}
			return &r
		}
	}
	start := time.Now()
	m, err := matrix.Run(ctx, spec, matrix.Options{Engines: specs, Oracle: f.oracle, Substrate: f.substrate, CacheDir: tf.cache,
		Offline: tf.offline, Stages: selected, Commit: commit, Logger: l, Reuse: reuseRun, Jobs: f.jobs, OracleLive: f.oracleLive,
		ReattachProviders: f.reattach, Reproduce: f.reproduce, Out: out})
	if err != nil {
		return err
	}
	paths, err := matrix.WriteAll(out, m, f.page...)
	if err != nil {
		return err
	}
	t := matrix.Parity(m)
	fmt.Printf("%s: %d engines against %s in %s, %d at a time\n", spec.Name, len(m.Columns), m.Oracle, time.Since(start).Round(time.Second), m.Jobs)
	fmt.Printf("  %-20s", "stage")
	for _, e := range t.Engines {
		fmt.Printf(" %-16s", e)
	}
	fmt.Println()
	for _, row := range t.Rows {
		fmt.Printf("  %-20s", row.Stage)
		for _, c := range row.Cells {
			fmt.Printf(" %-16s", c.Verdict)
		}
		fmt.Println()
	}
	for _, p := range paths[:min(4, len(paths))] {
		fmt.Println("wrote", p)
	}
	fmt.Printf("and %d evidence files, one folder per engine\n", max(0, len(paths)-4))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !m.Clear() {
		return cli.NotClear(fmt.Errorf("not every engine's run is clear (see %s)", out))
	}
	return nil
}
