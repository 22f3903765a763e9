package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/matrix"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
)

// runMatrix runs an estate once per engine against one oracle and writes
// the parity table and every engine's evidence under out/matrix/<estate>.
func runMatrix(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var tf toolchainFlags
	tf.register(fs)
	engines := fs.String("engines", "", "comma-separated pinned engines, e.g. tofu@1.9.4,terraform@1.5.7, or `all`")
	oracle := fs.String("oracle", "terraform", "the oracle: terraform@1.11.4 (default) or tofu@1.12.6")
	substrate := fs.String("substrate", "local", "local or kind")
	out := fs.String("out", "", "directory for matrix.md, matrix.html, matrix.json, junit.xml and one evidence folder per engine (default out/matrix/<estate>)")
	estates := fs.String("estates", "estates", "directory holding the estates")
	stages := fs.String("stages", "", "comma-separated stages to run (with what they depend on); default all")
	jobs := fs.Int("jobs", 0, "engine runs at once, each with its own two clusters (default: one per two cores on local, 1 on kind)")
	oracleLive := fs.Bool("oracle-live", false, "run the oracle live with every engine (default: once, recorded, and replayed for the other engines)")
	reuse := fs.Bool("reuse", false, "keep an engine's earlier run in the output folder when it is of this (clean) commit, the same binaries, oracle, substrate and stages")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 || *engines == "" {
		return fmt.Errorf("usage: gauntlet matrix <estate> --engines tofu@1.9.4,terraform@1.5.7,... [--oracle terraform@1.11.4|tofu@1.12.6]")
	}
	if len(tf.tools) > 0 {
		return fmt.Errorf("--tool is not supported here: the matrix runs pinned engines")
	}
	spec, err := estate.Load(*estates, fs.Arg(0))
	if err != nil {
		return err
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return err
	}
	refs, err := engineRefs(pins, *engines)
	if err != nil {
		return err
	}
	var specs []string
	for _, e := range refs {
		specs = append(specs, e.String())
	}
	if _, _, err := matrix.Resolve(pins, specs, *oracle); err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join("out", "matrix", spec.Name)
	}
	var selected []string
	if *stages != "" {
		selected = strings.Split(*stages, ",")
	}
	l := log.New(os.Stderr)
	if err := ensureCorpus(ctx, spec, tf.cache, tf.offline, l); err != nil {
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
	_, orc, _ := matrix.Resolve(pins, specs, *oracle)
	commit := gitCommit(ctx)
	var reuseRun func(string) *result.Run
	if *reuse {
		reuseRun = func(tool string) *result.Run {
			raw, err := os.ReadFile(filepath.Join(*out, tool, evidence.JSONFile))
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
			if err := matrix.Reusable(&r, spec.Name, commit, *substrate, ref, orc, shas[tool], selected); err != nil {
				l.Infof("matrix: %s runs again: %v", ref, err)
				return nil
			}
			return &r
		}
	}
	start := time.Now()
	m, err := matrix.Run(ctx, spec, matrix.Options{Engines: specs, Oracle: *oracle, Substrate: *substrate, CacheDir: tf.cache,
		Offline: tf.offline, Stages: selected, Commit: commit, Logger: l, Reuse: reuseRun, Jobs: *jobs, OracleLive: *oracleLive,
		Reproduce: "go run ./tools/gauntlet matrix " + strings.Join(args, " ")})
	if err != nil {
		return err
	}
	paths, err := matrix.WriteAll(*out, m)
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
		return runExit(1)
	}
	return nil
}
