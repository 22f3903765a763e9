package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/conformance"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func runCommand() cli.Command {
	return cli.Command{
		Name: "run", Args: "<estate>", MinArgs: 1, MaxArgs: 1,
		Summary: "run an estate's gauntlet and write its evidence",
		Doc: "Runs the estate through its life - cold deploy, migrate, replan, no-op apply, drift, rename, remove, count, replace, crash, " +
			"teardown, plan-review-apply, greenfield - with the engine under test on one cluster and the pinned stock oracle on a second, " +
			"every check proven by a BREAK. Resolves the toolchain and imports the estate's corpus files first (from $GAUNTLET_CORPUS_DIR, " +
			"else ../shared/corpus, else a git fetch when online), prints each stage's verdict, and writes evidence.md, run.json and " +
			"junit.xml. Exits 0 only when the run is clear, 1 when it is not.",
		Examples: []cli.Example{
			{What: "the main job: one estate on local control planes, evidence in out/corpus-k8s-metrics-server", Command: "gauntlet run corpus-k8s-metrics-server"},
			{What: "a pinned OpenTofu 1.9 as the subject, stock OpenTofu as the oracle, two stages only", Command: "gauntlet run corpus-k8s-metrics-server --engine tofu@1.9.4 --oracle tofu@1.12.6 --stages drift_reconverge,day2_rename"},
			{What: "your own engine build on two existing clusters", Command: "gauntlet run corpus-k8s-metrics-server --engine ./bin/tofu --substrate kubeconfig --subject-kubeconfig a.yaml --oracle-kubeconfig b.yaml"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var tf toolchainFlags
			tf.register(fs, false)
			var sf sideFlags
			sf.register(fs)
			estates := registerEstates(fs)
			out := fs.String("out", "", "the `DIR` to write evidence.md, run.json and junit.xml to (default: out/<estate>)")
			keep := fs.Bool("keep", false, "keep the work directory, in <out>/work: roots, states, one log per engine call")
			stages := fs.String("stages", "", "run only these stages, comma-separated `IDS`, with the stages they depend on (default: all)")
			rec := fs.Bool("record", false, "keep the evidence in a new conformance/runs/<run>/ and append its rows to the ledger; needs a clean tree (commit both afterwards)")
			return func(ctx context.Context, args []string) error {
				return runOne(ctx, args[0], runFlags{tf: &tf, sides: &sf, estates: *estates, out: *out, keep: *keep, stages: *stages,
					record: *rec, reproduce: "go run ./tools/gauntlet run " + strings.Join(fs.CommandLine(), " ")})
			}
		},
	}
}

type runFlags struct {
	tf                   *toolchainFlags
	sides                *sideFlags
	estates, out, stages string
	keep, record         bool
	reproduce            string
}

func runOne(ctx context.Context, name string, f runFlags) error {
	sideOpts, err := f.sides.options("run")
	if err != nil {
		return err
	}
	spec, err := estate.Load(f.estates, name)
	if err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = filepath.Join("out", name)
	}
	var selected []string
	if f.stages != "" {
		selected = strings.Split(f.stages, ",")
	}
	// A recorded run is checked before any cluster starts: a dirty tree
	// is refused here, not after a minute of running.
	var rc *recording
	if f.record {
		if rc, err = prepareRecord(ctx, name, f.sides.substrate, selected, f.sides.engine, f.sides.oracle); err != nil {
			return err
		}
	}
	l := log.New(os.Stderr)
	if err := ensureCorpus(ctx, spec, f.tf.cache, f.tf.offline, l); err != nil {
		return err
	}
	opts := append([]gauntlet.Option{
		gauntlet.WithLogger(l), gauntlet.WithOffline(f.tf.offline), gauntlet.WithKeep(f.keep),
		gauntlet.WithCommit(gitCommit(ctx)), gauntlet.WithReproduce(f.reproduce),
	}, sideOpts...)
	if f.tf.cache != "" {
		opts = append(opts, gauntlet.WithCacheDir(f.tf.cache))
	}
	if len(selected) > 0 {
		opts = append(opts, gauntlet.WithStages(selected...))
	}
	if f.keep {
		opts = append(opts, gauntlet.WithWorkDir(filepath.Join(out, "work")))
	}
	start := time.Now()
	res, err := gauntlet.Run(ctx, spec, opts...)
	if err != nil {
		return err
	}
	paths, err := evidence.WriteAll(out, res)
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
	switch {
	case res.Cancelled != nil:
		return &cli.ExitError{Code: res.ExitCode, Err: fmt.Errorf("the run was cancelled (%s during %q)", res.Cancelled.Signal, res.Cancelled.Stage)}
	case res.ExitCode != 0:
		return &cli.ExitError{Code: res.ExitCode, Err: fmt.Errorf("the run is not clear (exit %d)", res.ExitCode)}
	}
	return nil
}

// sideFlags pick the two sides of a run: the engine under test, the
// oracle, and the clusters they run on. run, bench and soak share them.
type sideFlags struct {
	engine, oracle, substrate string
	subjectKC, oracleKC       string
}

func (f *sideFlags) register(fs *cli.FlagSet) {
	fs.StringVar(&f.engine, "engine", "", "the engine under test, `ENGINE`: the path of any Terraform-compatible CLI, or a pinned engine such as tofu@1.9.4, built on demand (default: the pinned OpenTofu)")
	fs.StringVar(&f.oracle, "oracle", "", "the oracle, a pinned `ENGINE`: terraform@1.11.4 or tofu@1.12.6 (default: the pinned terraform)")
	fs.StringVar(&f.substrate, "substrate", "local", "where the clusters run, `NAME`: local (control planes as child processes), kind (real nodes, as root) or kubeconfig (two existing clusters)")
	fs.StringVar(&f.subjectKC, "subject-kubeconfig", "", "with --substrate kubeconfig: the `PATH` of the subject's cluster's kubeconfig")
	fs.StringVar(&f.oracleKC, "oracle-kubeconfig", "", "with --substrate kubeconfig: the `PATH` of the oracle's cluster's kubeconfig (another cluster than the subject's)")
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
	return opts, nil
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
