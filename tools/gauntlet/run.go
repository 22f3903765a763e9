package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/unpinned"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func runCommand() cli.Command {
	return cli.Command{
		Name: "run", Args: "<estate> | --all", MinArgs: 0, MaxArgs: 1,
		Summary: "run an estate's gauntlet and write its evidence",
		Doc: "Runs the estate through its life - cold deploy, migrate, replan, no-op apply, drift, rename, remove, count, exit codes and parallelism, replace, crash, " +
			"teardown, plan-review-apply, greenfield - with the engine under test on one cluster and the pinned stock oracle on a second, " +
			"every check proven by a BREAK. Resolves the toolchain and imports the estate's corpus files first (from $GAUNTLET_CORPUS_DIR, " +
			"else ../shared/corpus, else a git fetch when online), prints each stage's verdict, and writes evidence.md, run.json and " +
			"junit.xml. Exits 0 only when the run is clear, 1 when it is not. With --all it runs every estate, one after another, each " +
			"into <out>/<estate>/, and writes <out>/index.md; --shard I/N runs only the I-th of N parts of them and leaves shard.json " +
			"for `gauntlet merge`. --all exits 1 when any estate's run is not clear, 3 when every run that finished was clear but some " +
			"estate could not run.",
		Examples: []cli.Example{
			{What: "the main job: one estate on local control planes, evidence in out/corpus-k8s-metrics-server", Command: "gauntlet run corpus-k8s-metrics-server"},
			{What: "your own engine build on two existing clusters", Command: "gauntlet run corpus-k8s-metrics-server --engine ./bin/tofu --substrate kubeconfig --subject-kubeconfig a.yaml --oracle-kubeconfig b.yaml"},
			{What: "the second half of every estate, for `gauntlet merge` with the first (out/shards/run-2-of-2)", Command: "gauntlet run --all --shard 2/2"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var p runParams
			p.tf.register(fs, false)
			p.sides.register(fs)
			var page pageFlags
			page.register(fs)
			estates := registerEstates(fs)
			out := fs.String("out", "", "the `DIR` to write evidence.md, run.json and junit.xml to; with --all, the folder holding one per estate and index.md (default: out/<estate>; with --all, out, or out/shards/run-I-of-N with --shard)")
			fs.BoolVar(&p.keep, "keep", false, "keep the work directory, in <out>/work: roots, states, one log per engine call")
			stages := fs.String("stages", "", "run only these stages, comma-separated `IDS`, with the stages they depend on (default: all)")
			rec := fs.Bool("record", false, "keep the evidence in a new conformance/runs/<run>/ and append its rows to the ledger; needs a clean tree and the runner built from it (commit both afterwards)")
			var every allFlags
			every.register(fs, true)
			return func(ctx context.Context, args []string) error {
				// The sides are checked before anything starts: a usage
				// error names the fix.
				if _, err := p.sides.options("run"); err != nil {
					return err
				}
				var err error
				if p.page, err = page.options("run"); err != nil {
					return err
				}
				p.estates = *estates
				if *rec && p.sides.reattach {
					return cli.Usagef("run", "--record with --reattach-providers: the ledger's proofs come from runs whose engine calls start their own providers, as in production; drop one of them")
				}
				p.reproduce = "go run ./tools/gauntlet run " + strings.Join(fs.CommandLine(), " ")
				if *stages != "" {
					p.stages = strings.Split(*stages, ",")
				}
				if err := every.check("run", args); err != nil {
					return err
				}
				if every.all {
					return runAll(ctx, p, *out, *rec, every.shard)
				}
				p.name, p.out = args[0], *out
				if p.out == "" {
					p.out = filepath.Join("out", p.name)
				}
				// A recorded run is checked before any cluster starts: a
				// dirty tree, or a binary not built from it, is refused
				// here, not after a minute of running.
				if *rec {
					exe, err := os.Executable()
					if err != nil {
						return fmt.Errorf("record: the running binary: %w", err)
					}
					if p.rc, err = prepareRecord(ctx, exe, p.name, p.sides.substrate, p.stages, p.sides.engine, p.sides.oracle); err != nil {
						return err
					}
				}
				res, err := runOne(ctx, p)
				if err != nil {
					return err
				}
				return runOutcome(res)
			}
		},
	}
}

// runOutcome is a finished run's exit: nil when clear, its own code (1,
// or 128+signal) otherwise.
func runOutcome(res *result.Run) error {
	switch {
	case res.Cancelled != nil:
		return &cli.ExitError{Code: res.ExitCode, Err: fmt.Errorf("the run was cancelled (%s during %q)", res.Cancelled.Signal, res.Cancelled.Stage)}
	case res.ExitCode != 0:
		return &cli.ExitError{Code: res.ExitCode, Err: fmt.Errorf("the run is not clear (exit %d)", res.ExitCode)}
	}
	return nil
}

// runParams is one estate's run as `run` (and `run --all`, `record`)
// starts it.
type runParams struct {
	name, estates, out string
	sides              sideFlags
	keep               bool
	stages             []string
	tf                 toolchainFlags
	reproduce          string
	// page are the evidence page's options (--format).
	page []evidence.Option
	// rc records the run when set (run --record); session, when set,
	// labels the run with the session's commit (its own recordings
	// aside, the tree is clean).
	rc      *recording
	session *recordSession
	// built is sides.engine already built (an engine no pin names), when
	// the caller built it; runOne builds it otherwise.
	built *unpinned.Engine
}

// runOne runs one estate, writes its evidence to p.out, prints its
// stages and, with p.rc, records it: the one path every command that runs
// an estate for evidence takes.
func runOne(ctx context.Context, p runParams) (*result.Run, error) {
	l := log.New(os.Stderr)
	// An engine no pin names is built here, unless the caller did, and
	// given to the run by path.
	built := p.built
	if built == nil {
		var err error
		if built, err = p.tf.unpinnedEngine(ctx, p.sides.engine, l); err != nil {
			return nil, err
		}
	}
	if built != nil {
		p.sides.engine = built.Path
	}
	sideOpts, err := p.sides.options("run")
	if err != nil {
		return nil, err
	}
	spec, err := estate.Load(p.estates, p.name)
	if err != nil {
		return nil, err
	}
	if err := p.tf.ensureCorpus(ctx, spec, l); err != nil {
		return nil, err
	}
	commit := gitCommit(ctx)
	if p.session != nil {
		commit = p.session.commit(ctx)
	}
	opts := append(p.tf.runOptions(l),
		gauntlet.WithKeep(p.keep), gauntlet.WithCommit(commit), gauntlet.WithReproduce(p.reproduce),
		// The run's details cite the failing calls' logs here, beside
		// the evidence, not in the work directory that is removed.
		gauntlet.WithFailedLogs(filepath.Join(p.out, "logs")))
	opts = append(opts, sideOpts...)
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
	if built != nil {
		// What the path is, for the page's "Reproduce it" and run.json.
		res.Environment = append(res.Environment, "engine "+built.String())
	}
	paths, err := evidence.WriteAll(p.out, res, p.page...)
	if err != nil {
		return nil, err
	}
	fmt.Printf("%s in %s: %s\n", p.name, time.Since(start).Round(100*time.Millisecond), evidence.Headline(res))
	for _, s := range res.Stages {
		fmt.Printf("  %-22s %-14s %s\n", s.ID, s.Verdict, s.Duration.Round(100*time.Millisecond))
	}
	for _, path := range paths {
		fmt.Println("wrote", path)
	}
	if p.rc != nil {
		dir, err := p.rc.record(ctx, res, p.page...)
		if err != nil {
			return res, fmt.Errorf("record: %w", err)
		}
		p.rc.dir = dir
		fmt.Printf("recorded in %s and %s: commit both; `gauntlet status` derives proof from them\n", ledgerPath, dir)
	}
	return res, nil
}

// sideFlags pick the two sides of a run: the engine under test, the
// oracle, and the clusters they run on. run, bench and soak share them.
type sideFlags struct {
	engine, oracle, substrate string
	subjectKC, oracleKC       string
	reattach                  bool
}

func (f *sideFlags) register(fs *cli.FlagSet) {
	fs.StringVar(&f.engine, "engine", "", "the engine under test, `ENGINE`: the path of any Terraform-compatible CLI, a pinned engine such as tofu@1.9.4, or any other release or commit the Go module proxy serves (tofu@1.10.7, tofu@<commit>), each built on demand - an unpinned one is said so on its page (default: the pinned OpenTofu)")
	fs.StringVar(&f.oracle, "oracle", "", "the oracle, a pinned `ENGINE`: terraform@1.11.4 or tofu@1.12.6 (default: the pinned terraform)")
	fs.StringVar(&f.substrate, "substrate", "local", "where the clusters run, `NAME`: local (control planes as child processes), kind (real nodes, as root) or kubeconfig (two existing clusters)")
	fs.StringVar(&f.subjectKC, "subject-kubeconfig", "", "with --substrate kubeconfig: the `PATH` of the subject's cluster's kubeconfig")
	fs.StringVar(&f.oracleKC, "oracle-kubeconfig", "", "with --substrate kubeconfig: the `PATH` of the oracle's cluster's kubeconfig (another cluster than the subject's)")
	registerReattach(fs, &f.reattach)
}

// registerReattach is --reattach-providers, for every command that runs
// estates on its own clusters.
func registerReattach(fs *cli.FlagSet, on *bool) {
	fs.BoolVar(on, "reattach-providers", false, "start each side's provider plugins once and reattach every engine call to them (TF_REATTACH_PROVIDERS) but init and the interrupted applies; off until its parity is shown on every estate (docs/performance.md), never recorded")
}

// options checks the flags together (a usage error names the fix) and
// turns them into the run's options.
func (f *sideFlags) options(cmd string) ([]gauntlet.Option, error) {
	if err := checkSubstrate(cmd, f.substrate, "local", "kind", "kubeconfig"); err != nil {
		return nil, err
	}
	if f.substrate == "kubeconfig" {
		if f.subjectKC == "" || f.oracleKC == "" {
			return nil, cli.Usagef(cmd, "--substrate kubeconfig runs on two existing clusters: give --subject-kubeconfig PATH and --oracle-kubeconfig PATH")
		}
		if f.subjectKC == f.oracleKC {
			return nil, cli.Usagef(cmd, "--subject-kubeconfig and --oracle-kubeconfig are both %s: the two sides need two different clusters", f.subjectKC)
		}
	} else if f.subjectKC != "" || f.oracleKC != "" {
		return nil, cli.Usagef(cmd, "--subject-kubeconfig and --oracle-kubeconfig are for --substrate kubeconfig (this is --substrate %s)", f.substrate)
	}
	opts := []gauntlet.Option{gauntlet.WithSubstrate(f.substrate)}
	if f.substrate == "kubeconfig" {
		opts = append(opts, gauntlet.WithKubeconfigs(f.subjectKC, f.oracleKC))
	}
	switch {
	case isEngineSpec(f.engine):
		opts = append(opts, gauntlet.WithEnginePin(f.engine))
	case f.engine != "":
		opts = append(opts, gauntlet.WithEngine(f.engine))
	}
	if f.oracle != "" {
		opts = append(opts, gauntlet.WithOraclePin(f.oracle))
	}
	if f.reattach {
		opts = append(opts, gauntlet.WithReattachedProviders(true))
	}
	return opts, nil
}

// pageFlags pick the evidence page's layout; every command that writes
// evidence pages shares them.
type pageFlags struct{ format string }

func (f *pageFlags) register(fs *cli.FlagSet) {
	fs.StringVar(&f.format, "format", string(evidence.FormatSections), "the evidence pages' layout, `NAME`: sections (a summary table in run order, then a section per stage that ran) or seed (the earlier layout, for pages that must match it: one table row per stage, its whole detail in one cell)")
}

// options checks the layout's name (a usage error names the valid ones)
// and turns it into the page's options.
func (f *pageFlags) options(cmd string) ([]evidence.Option, error) {
	format, err := evidence.ParseFormat(f.format)
	if err != nil {
		var names []string
		for _, n := range evidence.Formats() {
			names = append(names, string(n))
		}
		return nil, cli.Usagef(cmd, "--format %q: want %s", f.format, strings.Join(names, " or "))
	}
	return []evidence.Option{evidence.WithFormat(format)}, nil
}

// checkSubstrate refuses a substrate the command cannot use, naming the
// ones it can.
func checkSubstrate(cmd, substrate string, allowed ...string) error {
	if slices.Contains(allowed, substrate) {
		return nil
	}
	if substrate == "kubeconfig" {
		return cli.Usagef(cmd, "--substrate kubeconfig is not for %s: it starts two clusters per engine run; use %s", cmd, strings.Join(allowed, " or "))
	}
	return cli.Usagef(cmd, "--substrate %q: want %s", substrate, strings.Join(allowed, ", "))
}

// registerEstates declares --estates.
func registerEstates(fs *cli.FlagSet) *string {
	return fs.String("estates", "estates", "the `DIR` holding the estates, one folder with an estate.yaml each")
}

// isEngineSpec tells a pinned engine ("tofu@1.9.4") from a path: it has
// an @ and no slash.
func isEngineSpec(v string) bool {
	return strings.Contains(v, "@") && !strings.Contains(v, "/")
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

func listCommand() cli.Command {
	return cli.Command{
		Name:    "list",
		Summary: "list the estates",
		Doc: "Lists every estate under --estates with its lane, set and title; an estate whose estate.yaml does not load is listed " +
			"as INVALID with the loader's error.",
		Examples: []cli.Example{{What: "the estates of this checkout", Command: "gauntlet list"}},
		Setup: func(fs *cli.FlagSet) cli.Action {
			estates := registerEstates(fs)
			return func(ctx context.Context, _ []string) error { return listEstates(*estates) }
		},
	}
}

func listEstates(estates string) error {
	names, err := estate.List(estates)
	if err != nil {
		return err
	}
	for _, n := range names {
		spec, err := estate.Load(estates, n)
		if err != nil {
			fmt.Printf("%-32s INVALID: %v\n", n, err)
			continue
		}
		fmt.Printf("%-32s lane %-11s set %-8s %s\n", n, spec.Lane, spec.Set, spec.Title)
	}
	return nil
}
