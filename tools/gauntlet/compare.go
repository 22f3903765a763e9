package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/compare"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/matrix"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func compareCommand() cli.Command {
	return cli.Command{
		Name: "compare", Args: "<estate>... | --all", MinArgs: 0, MaxArgs: -1,
		Summary: "run estates with an engine build and a baseline engine and report what the build changes",
		Doc: "Runs each estate (on the local substrate) with the build and with the baseline, -n times each, alternating, the oracle's " +
			"side recorded by the first baseline run and replayed for the others, and writes report.md, report.json, report.html, " +
			"summary.md (a pull request comment; appended to $GITHUB_STEP_SUMMARY when that is set) and junit.xml (a case per estate x stage) " +
			"with every run's evidence in <estate>/baseline-<i>/ and <estate>/build-<i>/. Every estate x stage is the same, new (the " +
			"build introduced a difference: a verdict, a failing check's finding, the requests sent by verb and resource, or an exact " +
			"figure), removed, shared (a limitation when estate.yaml says stock does it too) or unsteady; a request count from one run a side " +
			"within the poll tolerance is listed as unconfirmed (a wait loop polls as often as the cluster takes), one beyond it, or an " +
			"increase in most stages, as a likely new difference; engine time is a ratio with " +
			"its spread, flagged only outside it. Exits 1 when the build introduced a new difference, 3 when there is none but a run " +
			"could not happen or a stage is unsteady (nothing is concluded about it). --shard I/N with --all takes only the I-th of N " +
			"parts of the estates; each shard's report stands alone.",
		Examples: []cli.Example{
			{What: "your build against the last release on every estate", Command: "gauntlet compare --all --engine ./bin/tofu --baseline tofu@1.12.6"},
			{What: "the parity of reattached providers: the same engine, its providers reattached on the build's side only", Command: "gauntlet compare --all --engine tofu@1.12.6 --baseline tofu@1.12.6 --reattach-providers build -n 1"},
			{What: "the first of four CI jobs (out/shards/compare-1-of-4)", Command: "gauntlet compare --all --shard 1/4 --engine ./bin/tofu --baseline tofu@1.12.6"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f compareFlags
			f.tf.register(fs, false)
			var page pageFlags
			page.register(fs)
			estates := registerEstates(fs)
			fs.StringVar(&f.engine, "engine", "", "the build, `ENGINE`: the path of any Terraform-compatible CLI, or a pinned engine such as tofu@1.11.5 (required)")
			fs.StringVar(&f.baseline, "baseline", "", "the baseline, a pinned `ENGINE` such as tofu@1.12.6 (required)")
			fs.StringVar(&f.oracle, "oracle", "terraform", "the oracle, a pinned `ENGINE`: terraform (terraform@1.11.4) or tofu@1.12.6")
			fs.IntVar(&f.n, "n", 3, "runs of each side per estate, `N`: engine time is flagged only outside their spread")
			out := fs.String("out", "", "the `DIR` to write report.md, report.json, report.html, summary.md, junit.xml and <estate>/<side>-<i>/ evidence to (default: out/compare, or out/shards/compare-I-of-N with --shard)")
			fs.StringVar(&f.reattach, "reattach-providers", "", "start each run's provider plugins once and reattach its engine calls to them (TF_REATTACH_PROVIDERS) on `SIDES`: both, or build only - with the same engine as --baseline, the parity of reattached providers (docs/performance.md) (default: neither)")
			var every allFlags
			every.register(fs, false)
			var from multiFlag
			fs.Var(&from, "from", "rebuild the report from the runs a compare left in `DIR` (<estate>/baseline-<i>/run.json, <estate>/build-<i>/run.json), running nothing: a compare that was stopped, or several shards' folders folded into one report in --out (repeatable)")
			return func(ctx context.Context, args []string) error {
				if len(from) > 0 {
					if len(args) > 0 || every.all {
						return cli.Usagef("compare", "--from rebuilds a report from run folders: it takes no estate and no --all")
					}
					if *out == "" {
						*out = filepath.Join("out", "compare")
					}
					return compareFrom(from, *estates, *out, f.engine, f.baseline)
				}
				if f.engine == "" || f.baseline == "" {
					return cli.Usagef("compare", "--engine and --baseline are both required: the build and the engine it is compared with")
				}
				if f.n < 1 {
					return cli.Usagef("compare", "-n %d: want at least 1 run a side", f.n)
				}
				if f.reattach != "" && f.reattach != "both" && f.reattach != "build" {
					return cli.Usagef("compare", "--reattach-providers %q: want both or build", f.reattach)
				}
				var err error
				if f.page, err = page.options("compare"); err != nil {
					return err
				}
				if err := every.check("compare", args); err != nil {
					return err
				}
				f.shard, f.out = every.shard, *out
				if f.out == "" {
					f.out = every.shard.dir("compare", filepath.Join("out", "compare"))
				}
				if err := f.resolve(); err != nil {
					return err
				}
				specs, err := compareEstates(*estates, args, every.all, every.shard)
				if err != nil {
					return err
				}
				return runCompare(ctx, f, specs)
			}
		},
	}
}

type compareFlags struct {
	tf                       toolchainFlags
	engine, baseline, oracle string
	// reattach is the sides whose providers are reattached: "", "both" or
	// "build".
	reattach string
	n        int
	out      string
	shard    shard
	page     []evidence.Option
	// Set by resolve: the build as a matrix column, the baseline and the
	// oracle as pinned engines.
	build       matrix.Subject
	base, orc   toolchain.EngineRef
	buildPinned *toolchain.EngineRef
}

// resolve checks the engines named on the command line before anything
// runs: an engine that is not pinned, or a build that is not an
// executable file, is a usage error.
func (f *compareFlags) resolve() error {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return err
	}
	if f.base, err = pins.Engine(f.baseline); err != nil {
		return cli.Usagef("compare", "--baseline: %w", err)
	}
	if f.orc, err = pins.Engine(f.oracle); err != nil {
		return cli.Usagef("compare", "--oracle: %w", err)
	}
	if isEngineSpec(f.engine) {
		ref, err := pins.Engine(f.engine)
		if err != nil {
			return cli.Usagef("compare", "--engine: %w", err)
		}
		f.build, f.buildPinned = matrix.Subject{Pin: f.engine}, &ref
		return nil
	}
	p, err := filepath.Abs(f.engine)
	if err != nil {
		return fmt.Errorf("--engine %s: %w", f.engine, err)
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return cli.Usagef("compare", "--engine %s: not an executable file (or name a pinned engine, e.g. tofu@1.11.5)", f.engine)
	}
	f.build = matrix.Subject{Path: p}
	return nil
}

// compareEstates loads the estates compare runs, sorted by name: those
// named, or with --all this shard's part of every estate in dir (the
// split run, matrix and mutants use).
func compareEstates(dir string, names []string, all bool, sh shard) ([]*estate.Spec, error) {
	if all {
		every, err := estate.List(dir)
		if err != nil {
			return nil, err
		}
		names = sh.pick(every)
		if len(names) == 0 {
			return nil, fmt.Errorf("no estate in %s for --shard %s", dir, sh)
		}
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	specs := make([]*estate.Spec, 0, len(names))
	for _, name := range names {
		spec, err := estate.Load(dir, name)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// runCompare runs every estate with the build and with the baseline, n
// times each, the oracle's side recorded once per estate and replayed,
// and writes report.md, report.json and report.html with every run's
// evidence.
func runCompare(ctx context.Context, f compareFlags, specs []*estate.Spec) error {
	l := log.New(os.Stderr)
	// The pinned engines are built (one at a time) before any run, so no
	// run waits on a build and a build failure costs no run.
	engines := []toolchain.EngineRef{f.base}
	if f.buildPinned != nil {
		engines = append(engines, *f.buildPinned)
	}
	for _, e := range engines {
		if _, err := toolchain.Resolve(ctx, f.tf.options(l, toolchain.WithTools(e.Tool))...); err != nil {
			return fmt.Errorf("engine %s: %w", e, err)
		}
	}
	in := compare.Input{Engine: f.engine, Baseline: f.base.String(), Oracle: f.orc.String(), Shard: f.shard.String()}
	// The report names what differs between the sides: with the same
	// engine on both, the reattached providers are the build.
	if f.reattach != "" {
		in.Engine += " (providers reattached)"
	}
	if f.reattach == "both" {
		in.Baseline += " (providers reattached)"
	}
	start := time.Now()
	commit := gitCommit(ctx)
	for i, spec := range specs {
		if ctx.Err() != nil {
			break
		}
		l.Infof("compare %d/%d: %s", i+1, len(specs), spec.Name)
		er, err := compareRuns(ctx, f, spec, commit, l)
		if err != nil {
			// The estate could not run at all: the report says so and
			// the other estates still run.
			l.Warnf("compare: %s: %v", spec.Name, err)
			er.Build = []compare.Rep{{Error: err.Error()}}
		}
		in.Estates = append(in.Estates, er)
		// The report so far, after each estate: a compare of hours that
		// is stopped still leaves one (and --from rebuilds it whole).
		if i < len(specs)-1 {
			if _, _, err := compare.WriteAll(f.out, in, f.page...); err != nil {
				return err
			}
		}
	}
	r, paths, err := compare.WriteAll(f.out, in, f.page...)
	if err != nil {
		return err
	}
	return reportCompare(r, paths, in, len(specs), f.n, time.Since(start), ctx.Err())
}

// reportCompare prints what a compare found and gives its exit.
func reportCompare(r compare.Report, paths []string, in compare.Input, estates, n int, took time.Duration, cancelled error) error {
	when := "in " + took.Round(time.Second).String()
	if took == 0 {
		when = "rebuilt from their run folders"
	}
	fmt.Printf("compare %s against %s: %d of %d estate(s), %d run(s) a side each, %s\n", in.Engine, in.Baseline, len(in.Estates), estates, n, when)
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
	const reports = 5 // report.md, .json, .html, summary.md, junit.xml
	for _, p := range paths[:min(reports, len(paths))] {
		fmt.Println("wrote", p)
	}
	fmt.Printf("and %d evidence files, one folder per run\n", max(0, len(paths)-reports))
	if err := stepSummary(paths); err != nil {
		return err
	}
	if cancelled != nil {
		return cancelled
	}
	return compareOutcome(r)
}

// stepSummary appends summary.md to the file $GITHUB_STEP_SUMMARY names,
// when it is set: a CI job's summary shows the compare there.
func stepSummary(paths []string) error {
	dest := os.Getenv("GITHUB_STEP_SUMMARY")
	if dest == "" {
		return nil
	}
	for _, p := range paths {
		if filepath.Base(p) != compare.SummaryFile {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(dest, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
		}
		_, werr := f.Write(b)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
		}
		fmt.Println("appended", compare.SummaryFile, "to $GITHUB_STEP_SUMMARY")
	}
	return nil
}

// compareFrom rebuilds a report from the run folders compares left in
// dirs - a stopped compare's, or one per shard - into out: Compare is a
// pure function of the runs. The engines' names come from each folder's
// report.json, or else the flags, or else the runs themselves.
func compareFrom(dirs []string, estates, out, engineName, baseline string) error {
	in := compare.Input{Engine: engineName, Baseline: baseline}
	var shards []string
	n := 0
	for _, dir := range dirs {
		var was compare.Report
		if b, err := os.ReadFile(filepath.Join(dir, compare.JSONFile)); err == nil {
			if err := json.Unmarshal(b, &was); err != nil {
				return fmt.Errorf("compare --from %s: %s: %w", dir, compare.JSONFile, err)
			}
		}
		in.Engine, in.Baseline, in.Oracle = orDefault(in.Engine, was.Engine), orDefault(in.Baseline, was.Baseline), orDefault(in.Oracle, was.Oracle)
		if was.Shard != "" {
			shards = append(shards, was.Shard)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("compare --from: %w", err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			er, k, err := estateRunsIn(filepath.Join(dir, e.Name()), e.Name(), estates)
			if err != nil {
				return fmt.Errorf("compare --from %s: %w", dir, err)
			}
			if k == 0 {
				continue
			}
			if slices.ContainsFunc(in.Estates, func(x compare.EstateRuns) bool { return x.Name == er.Name }) {
				return fmt.Errorf("compare --from: estate %s is in more than one folder (give each shard's folder once)", er.Name)
			}
			in.Estates, n = append(in.Estates, er), max(n, k)
		}
	}
	if len(in.Estates) == 0 {
		return fmt.Errorf("compare --from %s: no run folder (<estate>/baseline-<i>/run.json or build-<i>/run.json) to compare", strings.Join(dirs, " "))
	}
	slices.SortFunc(in.Estates, func(a, b compare.EstateRuns) int { return strings.Compare(a.Name, b.Name) })
	first := in.Estates[0]
	if in.Engine == "" && len(first.Build) > 0 {
		in.Engine = engineLabel(first.Build[0].Run.Subject)
	}
	if in.Baseline == "" && len(first.Baseline) > 0 {
		in.Baseline = engineLabel(first.Baseline[0].Run.Subject)
	}
	if in.Oracle == "" {
		for _, r := range append(slices.Clone(first.Baseline), first.Build...) {
			in.Oracle = orDefault(in.Oracle, engineLabel(r.Run.Oracle))
		}
	}
	if len(dirs) == 1 && len(shards) == 1 {
		in.Shard = shards[0]
	}
	r, paths, err := compare.WriteAll(out, in)
	if err != nil {
		return err
	}
	return reportCompare(r, paths, in, len(in.Estates), n, 0, nil)
}

// estateRunsIn reads one estate's run folders: baseline-<i> and build-<i>,
// in order. Its title comes from the runs, its findings from estate.yaml
// when the estate is in estates.
func estateRunsIn(dir, name, estates string) (compare.EstateRuns, int, error) {
	er := compare.EstateRuns{Name: name}
	if spec, err := estate.Load(estates, name); err == nil {
		er.Title, er.Findings = spec.Title, spec.FindingWhy()
	}
	n := 0
	for _, side := range []string{"baseline", "build"} {
		for i := 1; ; i++ {
			tool := fmt.Sprintf("%s-%d", side, i)
			b, err := os.ReadFile(filepath.Join(dir, tool, "run.json"))
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return er, 0, err
			}
			var run result.Run
			if err := json.Unmarshal(b, &run); err != nil {
				return er, 0, fmt.Errorf("%s/%s/run.json: %w", name, tool, err)
			}
			rep := compare.Rep{Run: &run, Dir: name + "/" + tool}
			if side == "build" {
				er.Build = append(er.Build, rep)
			} else {
				er.Baseline = append(er.Baseline, rep)
			}
			n = max(n, i)
		}
	}
	return er, n, nil
}

// engineLabel names an engine of a run the way compare's flags do.
func engineLabel(e result.Engine) string {
	if e.Pinned != "" || e.Path == "" {
		return e.Name + "@" + e.Version
	}
	return e.Path
}

// compareRuns runs one estate with the build and the baseline, n times
// each, through the matrix.
func compareRuns(ctx context.Context, f compareFlags, spec *estate.Spec, commit string, l log.Logger) (compare.EstateRuns, error) {
	er := compare.EstateRuns{Name: spec.Name, Title: spec.Title, Findings: spec.FindingWhy()}
	if err := f.tf.ensureCorpus(ctx, spec, l); err != nil {
		return er, err
	}
	// Sides alternate so that runs going at once pair a build with a
	// baseline; the first baseline run records the oracle's side.
	var subjects []matrix.Subject
	for k := 1; k <= f.n; k++ {
		subjects = append(subjects,
			matrix.Subject{Label: fmt.Sprintf("baseline #%d", k), Tool: fmt.Sprintf("baseline-%d", k), Pin: f.base.String()},
			matrix.Subject{Label: fmt.Sprintf("build #%d", k), Tool: fmt.Sprintf("build-%d", k), Pin: f.build.Pin, Path: f.build.Path,
				ReattachProviders: f.reattach == "build"})
	}
	m, err := matrix.Run(ctx, spec, matrix.Options{Subjects: subjects, Oracle: f.orc.String(), Substrate: "local", CacheDir: f.tf.cache,
		Offline: f.tf.offline, Commit: commit, Logger: l, ReattachProviders: f.reattach == "both",
		// compare.WriteAll writes each run's evidence to <out>/<estate>/<tool>.
		Out: filepath.Join(f.out, spec.Name)})
	if err != nil {
		return er, err
	}
	for _, col := range m.Columns {
		rep := compare.Rep{Run: col.Run, Error: col.Error, Dir: spec.Name + "/" + col.Tool}
		if strings.HasPrefix(col.Tool, "build-") {
			er.Build = append(er.Build, rep)
		} else {
			er.Baseline = append(er.Baseline, rep)
		}
	}
	return er, nil
}

// compareOutcome is compare's exit: 1 when the build introduced a new
// difference; else 3 when a run could not happen or a stage is unsteady,
// since the comparison says nothing about those; else clear.
func compareOutcome(r compare.Report) error {
	if len(r.New) > 0 {
		return cli.NotClear(fmt.Errorf("the build introduced %d new difference(s)", len(r.New)))
	}
	failed := 0
	for _, e := range r.Estates {
		failed += len(e.Errors)
	}
	if unsteady := r.Counts[compare.Unsteady]; failed > 0 || unsteady > 0 {
		return fmt.Errorf("no new difference, but %d run(s) could not happen and %d stage(s) are unsteady: nothing is concluded about those", failed, unsteady)
	}
	return nil
}
