package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/compare"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/matrix"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
)

// runCompare runs every selected estate with an engine build and with a
// baseline engine, n times each, the oracle's side recorded once per
// estate and replayed, and writes report.md, report.json and report.html
// with every run's evidence. It exits 1 when the build introduced a new
// difference.
func runCompare(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var tf toolchainFlags
	tf.register(fs)
	engineFlag := fs.String("engine", "", "the build: a path to a Terraform-compatible CLI, or a pinned engine such as tofu@1.11.5")
	baselineFlag := fs.String("baseline", "", "the baseline: a pinned engine, e.g. tofu@1.12.6")
	oracle := fs.String("oracle", "terraform", "stock, the oracle: terraform@1.11.4 (default) or tofu@1.12.6")
	estates := fs.String("estates", "all", "the estates: all, or names separated by commas")
	shard := fs.String("shard", "", "I/N: only the I-th of N shards of the selected estates (by name, round robin), e.g. 1/4")
	n := fs.Int("n", 3, "runs of each side per estate: engine time is flagged only outside their spread")
	out := fs.String("out", filepath.Join("out", "compare"), "directory for report.md, report.json, report.html and <estate>/<side>-<i>/ evidence")
	dir := fs.String("dir", "estates", "directory holding the estates")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *engineFlag == "" || *baselineFlag == "" || *n < 1 {
		return fmt.Errorf("usage: gauntlet compare --engine PATH|tofu@X --baseline tofu@Y [--estates all|a,b] [--shard I/N] [-n 3] [--out DIR]")
	}
	if len(tf.tools) > 0 {
		return fmt.Errorf("--tool is not supported here: give the build with --engine")
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return err
	}
	base, err := pins.Engine(*baselineFlag)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	orc, err := pins.Engine(*oracle)
	if err != nil {
		return fmt.Errorf("--oracle: %w", err)
	}
	build := matrix.Subject{Pin: *engineFlag}
	if !isEngineSpec(*engineFlag) {
		p, err := filepath.Abs(*engineFlag)
		if err != nil {
			return err
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("--engine %s: not an executable file (or name a pinned engine, e.g. tofu@1.11.5)", *engineFlag)
		}
		build = matrix.Subject{Path: p}
	} else if _, err := pins.Engine(*engineFlag); err != nil {
		return fmt.Errorf("--engine: %w", err)
	}
	specs, err := selectEstates(*dir, *estates, *shard)
	if err != nil {
		return err
	}
	l := log.New(os.Stderr)
	// The pinned engines are built (one at a time) before any run.
	for _, e := range []string{build.Pin, base.String()} {
		if e == "" {
			continue
		}
		ref, _ := pins.Engine(e)
		if _, err := toolchain.Resolve(ctx, tf.options(l, toolchain.WithTools(ref.Tool))...); err != nil {
			return fmt.Errorf("engine %s: %w", e, err)
		}
	}
	in := compare.Input{Engine: *engineFlag, Baseline: base.String(), Oracle: orc.String(), Shard: *shard}
	start := time.Now()
	commit := gitCommit(ctx)
	for i, spec := range specs {
		l.Infof("compare %d/%d: %s", i+1, len(specs), spec.Name)
		if err := ensureCorpus(ctx, spec, tf.cache, tf.offline, l); err != nil {
			return err
		}
		// Sides alternate so that runs going at once pair a build with a
		// baseline; the first baseline run records the oracle's side.
		var subjects []matrix.Subject
		for k := 1; k <= *n; k++ {
			subjects = append(subjects,
				matrix.Subject{Label: fmt.Sprintf("baseline #%d", k), Tool: fmt.Sprintf("baseline-%d", k), Pin: base.String()},
				matrix.Subject{Label: fmt.Sprintf("build #%d", k), Tool: fmt.Sprintf("build-%d", k), Pin: build.Pin, Path: build.Path})
		}
		m, err := matrix.Run(ctx, spec, matrix.Options{Subjects: subjects, Oracle: orc.String(), Substrate: "local", CacheDir: tf.cache,
			Offline: tf.offline, Commit: commit, Logger: l})
		if err != nil {
			return fmt.Errorf("%s: %w", spec.Name, err)
		}
		er := compare.EstateRuns{Name: spec.Name, Title: spec.Title, Findings: spec.Findings}
		for _, col := range m.Columns {
			rep := compare.Rep{Run: col.Run, Error: col.Error, Dir: spec.Name + "/" + col.Tool}
			if strings.HasPrefix(col.Tool, "build-") {
				er.Build = append(er.Build, rep)
			} else {
				er.Baseline = append(er.Baseline, rep)
			}
		}
		in.Estates = append(in.Estates, er)
		if ctx.Err() != nil {
			break
		}
	}
	r, paths, err := compare.WriteAll(*out, in)
	if err != nil {
		return err
	}
	fmt.Printf("compare %s against %s: %d estate(s), %d run(s) a side each, in %s\n", *engineFlag, base, len(specs), *n, time.Since(start).Round(time.Second))
	fmt.Println(r.Headline())
	for _, d := range r.New {
		fmt.Printf("  NEW %s · %s (%s): %s\n", d.Estate, d.Stage, d.Kind, d.What)
	}
	for _, d := range r.Timing {
		fmt.Printf("  TIME %s · %s: %s\n", d.Estate, d.Stage, d.What)
	}
	for _, d := range r.Removed {
		fmt.Printf("  REMOVED %s · %s: %s\n", d.Estate, d.Stage, d.What)
	}
	for _, p := range paths[:min(3, len(paths))] {
		fmt.Println("wrote", p)
	}
	fmt.Printf("and %d evidence files, one folder per run\n", max(0, len(paths)-3))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(r.New) > 0 {
		return runExit(1)
	}
	return nil
}

// selectEstates loads the named estates (or all), sorted by name, and
// keeps shard I of N of them.
func selectEstates(dir, names, shard string) ([]*estate.Spec, error) {
	var list []string
	if strings.TrimSpace(names) == "all" {
		all, err := estate.List(dir)
		if err != nil {
			return nil, err
		}
		list = all
	} else {
		for _, s := range strings.Split(names, ",") {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(list, s) {
				list = append(list, s)
			}
		}
	}
	slices.Sort(list)
	if shard != "" {
		i, n, err := parseShard(shard)
		if err != nil {
			return nil, err
		}
		var kept []string
		for k, name := range list {
			if k%n == i-1 {
				kept = append(kept, name)
			}
		}
		list = kept
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no estate selected (--estates %s, --shard %q)", names, shard)
	}
	var out []*estate.Spec
	for _, name := range list {
		spec, err := estate.Load(dir, name)
		if err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	return out, nil
}

// parseShard reads "I/N", 1 <= I <= N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, e.g. 2/4", s)
	}
	return i, n, nil
}
