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
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
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
	var p runParams
	p.tf.register(fs)
	fs.StringVar(&p.engine, "engine", "", "engine under test: a path, or a pinned engine such as tofu@1.9.4 (built on demand; default: the pinned OpenTofu)")
	fs.StringVar(&p.oracle, "oracle", "", "the oracle: a pinned engine, terraform@1.11.4 (default) or tofu@1.12.6")
	fs.StringVar(&p.substrate, "substrate", "local", "local, kind or kubeconfig")
	fs.StringVar(&p.subjectKC, "subject-kubeconfig", "", "with --substrate kubeconfig: the subject's cluster")
	fs.StringVar(&p.oracleKC, "oracle-kubeconfig", "", "with --substrate kubeconfig: the oracle's cluster")
	out := fs.String("out", "", "directory for evidence.md, run.json and junit.xml (default out/<estate>; with --all, out/ holding a folder per estate)")
	fs.StringVar(&p.estates, "estates", "estates", "directory holding the estates")
	fs.BoolVar(&p.keep, "keep", false, "keep the work directory (roots, states, engine logs)")
	stages := fs.String("stages", "", "comma-separated stages to run (with what they depend on); default all")
	rec := fs.Bool("record", false, "keep the evidence in a new conformance/runs/<run>/ and append its rows to the ledger (needs a clean tree; commit them)")
	all := fs.Bool("all", false, "run every estate in --estates, one after another, each into <out>/<estate>/, and write <out>/index.md")
	shardArg := fs.String("shard", "", "with --all: run only shard I of N of the estates (sorted by name, round robin) and write shard.json for `gauntlet merge`")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	p.reproduce = "go run ./tools/gauntlet run " + strings.Join(args, " ")
	if *stages != "" {
		p.stages = strings.Split(*stages, ",")
	}
	sh, err := parseShard(*shardArg)
	if err != nil {
		return err
	}
	if *all || sh.N > 0 {
		if fs.NArg() != 0 || !*all {
			return fmt.Errorf("usage: gauntlet run --all [--shard I/N] [flags]  (no estate name with --all; --shard needs --all)")
		}
		return runAll(ctx, p, *out, *rec, sh)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: gauntlet run <estate> [flags]  (gauntlet list shows the estates)")
	}
	p.name, p.out = fs.Arg(0), *out
	if p.out == "" {
		p.out = filepath.Join("out", p.name)
	}
	// A recorded run is checked before any cluster starts: a dirty tree
	// is refused here, not after a minute of running.
	if *rec {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("record: the running binary: %w", err)
		}
		if p.rc, err = prepareRecord(ctx, exe, p.name, p.substrate, p.stages, p.engine, p.oracle); err != nil {
			return err
		}
	}
	res, err := runOne(ctx, p)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return runExit(res.ExitCode)
	}
	return nil
}

// runParams is one estate's run as `run` (and `run --all`, `record`)
// starts it.
type runParams struct {
	name, estates, out        string
	engine, oracle, substrate string
	subjectKC, oracleKC       string
	keep                      bool
	stages                    []string
	tf                        toolchainFlags
	reproduce                 string
	// rc records the run when set (run --record); session, when set,
	// labels the run with the session's commit (its own recordings
	// aside, the tree is clean).
	rc      *recording
	session *recordSession
}

// runOne runs one estate, writes its evidence to p.out, prints its
// stages and, with p.rc, records it: the one path every command that runs
// an estate for evidence takes.
func runOne(ctx context.Context, p runParams) (*result.Run, error) {
	spec, err := estate.Load(p.estates, p.name)
	if err != nil {
		return nil, err
	}
	l := log.New(os.Stderr)
	if err := ensureCorpus(ctx, spec, p.tf.cache, p.tf.offline, l); err != nil {
		return nil, err
	}
	commit := gitCommit(ctx)
	if p.session != nil {
		commit = p.session.commit(ctx)
	}
	opts := []gauntlet.Option{
		gauntlet.WithLogger(l), gauntlet.WithSubstrate(p.substrate), gauntlet.WithOffline(p.tf.offline), gauntlet.WithKeep(p.keep),
		gauntlet.WithCommit(commit), gauntlet.WithReproduce(p.reproduce),
	}
	if p.substrate == "kubeconfig" {
		opts = append(opts, gauntlet.WithKubeconfigs(p.subjectKC, p.oracleKC))
	}
	switch {
	case isEngineSpec(p.engine):
		opts = append(opts, gauntlet.WithEnginePin(p.engine))
	case p.engine != "":
		opts = append(opts, gauntlet.WithEngine(p.engine))
	}
	if p.oracle != "" {
		opts = append(opts, gauntlet.WithOraclePin(p.oracle))
	}
	if p.tf.cache != "" {
		opts = append(opts, gauntlet.WithCacheDir(p.tf.cache))
	}
	if len(p.stages) > 0 {
		opts = append(opts, gauntlet.WithStages(p.stages...))
	}
	if p.keep {
		opts = append(opts, gauntlet.WithWorkDir(filepath.Join(p.out, "work")))
	}
	start := time.Now()
	res, err := gauntlet.Run(ctx, spec, opts...)
	if err != nil {
		return nil, err
	}
	paths, err := evidence.WriteAll(p.out, res)
	if err != nil {
		return nil, err
	}
	fmt.Printf("%s in %s: %s\n", p.name, time.Since(start).Round(100*time.Millisecond), evidence.Headline(res))
	for _, s := range res.Stages {
		fmt.Printf("  %-22s %-8s %s\n", s.ID, s.Verdict, s.Duration.Round(100*time.Millisecond))
	}
	for _, path := range paths {
		fmt.Println("wrote", path)
	}
	if p.rc != nil {
		dir, err := p.rc.record(ctx, res)
		if err != nil {
			return res, fmt.Errorf("record: %w", err)
		}
		p.rc.dir = dir
		fmt.Printf("recorded in %s and %s: commit both; `gauntlet status` derives proof from them\n", ledgerPath, dir)
	}
	return res, nil
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
