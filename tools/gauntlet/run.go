package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/conformance"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// runExit carries the run's exit code (1 when not clear, 128+signal when
// a signal cancelled it) to main.
type runExit int

func (e runExit) Error() string {
	if e > 128 {
		return fmt.Sprintf("the run was cancelled (exit %d)", int(e))
	}
	return fmt.Sprintf("the run is not clear (exit %d)", int(e))
}
func (e runExit) ExitCode() int { return int(e) }

func runRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var tf toolchainFlags
	tf.register(fs)
	enginePath := fs.String("engine", "", "engine under test: a path, or a pinned engine such as tofu@1.9.4 (built on demand; default: the pinned OpenTofu)")
	oracle := fs.String("oracle", "", "the oracle: a pinned engine, terraform@1.11.4 (default) or tofu@1.12.6")
	substrate := fs.String("substrate", "local", "local, kind or kubeconfig")
	subjectKC := fs.String("subject-kubeconfig", "", "with --substrate kubeconfig: the subject's cluster")
	oracleKC := fs.String("oracle-kubeconfig", "", "with --substrate kubeconfig: the oracle's cluster")
	out := fs.String("out", "", "directory for evidence.md, run.json and junit.xml (default out/<estate>)")
	estates := fs.String("estates", "estates", "directory holding the estates")
	keep := fs.Bool("keep", false, "keep the work directory (roots, states, engine logs)")
	stages := fs.String("stages", "", "comma-separated stages to run (with what they depend on); default all")
	rec := fs.Bool("record", false, "keep the evidence in a new conformance/runs/<run>/ and append its rows to the ledger (needs a clean tree; commit them)")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: gauntlet run <estate> [flags]  (gauntlet list shows the estates)")
	}
	name := fs.Arg(0)
	spec, err := estate.Load(*estates, name)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join("out", name)
	}
	var selected []string
	if *stages != "" {
		selected = strings.Split(*stages, ",")
	}
	// A recorded run is checked before any cluster starts: a dirty tree
	// is refused here, not after a minute of running.
	var rc *recording
	if *rec {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("record: the running binary: %w", err)
		}
		if rc, err = prepareRecord(ctx, exe, name, *substrate, selected, *enginePath, *oracle); err != nil {
			return err
		}
	}
	l := log.New(os.Stderr)
	if err := ensureCorpus(ctx, spec, tf.cache, tf.offline, l); err != nil {
		return err
	}
	opts := []gauntlet.Option{
		gauntlet.WithLogger(l), gauntlet.WithSubstrate(*substrate), gauntlet.WithOffline(tf.offline), gauntlet.WithKeep(*keep),
		gauntlet.WithCommit(gitCommit(ctx)), gauntlet.WithReproduce("go run ./tools/gauntlet run " + strings.Join(args, " ")),
	}
	if *substrate == "kubeconfig" {
		opts = append(opts, gauntlet.WithKubeconfigs(*subjectKC, *oracleKC))
	}
	switch {
	case isEngineSpec(*enginePath):
		opts = append(opts, gauntlet.WithEnginePin(*enginePath))
	case *enginePath != "":
		opts = append(opts, gauntlet.WithEngine(*enginePath))
	}
	if *oracle != "" {
		opts = append(opts, gauntlet.WithOraclePin(*oracle))
	}
	if tf.cache != "" {
		opts = append(opts, gauntlet.WithCacheDir(tf.cache))
	}
	if len(selected) > 0 {
		opts = append(opts, gauntlet.WithStages(selected...))
	}
	if *keep {
		opts = append(opts, gauntlet.WithWorkDir(filepath.Join(*out, "work")))
	}
	start := time.Now()
	res, err := gauntlet.Run(ctx, spec, opts...)
	if err != nil {
		return err
	}
	paths, err := evidence.WriteAll(*out, res)
	if err != nil {
		return err
	}
	fmt.Printf("%s in %s: %s\n", name, time.Since(start).Round(100*time.Millisecond), evidence.Headline(res))
	for _, s := range res.Stages {
		fmt.Printf("  %-22s %-8s %s\n", s.ID, s.Verdict, s.Duration.Round(100*time.Millisecond))
	}
	for _, p := range paths {
		fmt.Println("wrote", p)
	}
	if rc != nil {
		dir, err := rc.record(ctx, res)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		fmt.Printf("recorded in %s and %s: commit both; `gauntlet status` derives proof from them\n", ledgerPath, dir)
	}
	if res.ExitCode != 0 {
		return runExit(res.ExitCode)
	}
	return nil
}

// isEngineSpec tells a pinned engine ("tofu@1.9.4") from a path: it has
// an @ and no slash.
func isEngineSpec(v string) bool {
	return strings.Contains(v, "@") && !strings.Contains(v, "/")
}

// reorder lets the estate name come before the flags.
func reorder(args []string) []string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return append(append([]string{}, args[1:]...), args[0])
	}
	return args
}

// gitCommit is the gauntlet checkout's commit, "-dirty" when it has
// uncommitted changes - untracked files that are not ignored included (an
// untracked .go file is compiled into the run); empty outside a git
// checkout.
func gitCommit(ctx context.Context) string {
	g := conformance.Git{Dir: "."}
	c, err := g.Head(ctx)
	if err != nil {
		return ""
	}
	if dirty, err := g.Dirty(ctx); err != nil || len(dirty) > 0 {
		c += "-dirty"
	}
	return c
}

func runList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	estates := fs.String("estates", "estates", "directory holding the estates")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names, err := estate.List(*estates)
	if err != nil {
		return err
	}
	for _, n := range names {
		spec, err := estate.Load(*estates, n)
		if err != nil {
			fmt.Printf("%-32s INVALID: %v\n", n, err)
			continue
		}
		fmt.Printf("%-32s lane %-11s set %-8s %s\n", n, spec.Lane, spec.Set, spec.Title)
	}
	return nil
}
