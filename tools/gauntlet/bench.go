package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func benchCommand() cli.Command {
	return cli.Command{
		Name: "bench", Args: "<estate>", MinArgs: 1, MaxArgs: 1,
		Summary: "time whole runs of an estate per stage, with engine calls and API requests",
		Doc: "Runs the estate n times, one after the other, and prints per stage the median, minimum and maximum time, the engine " +
			"floor (the slower side's engine time, which no gauntlet can go below) and each side's engine calls and API requests, " +
			"then the whole run's wall time against that floor. Figures, not assertions: the machine is noisy, so it reports the " +
			"median. Exits 0 whatever the runs' verdicts; 3 when a run could not happen.",
		Examples: []cli.Example{
			{What: "three runs on local control planes", Command: "gauntlet bench corpus-k8s-metrics-server -n 3"},
			{What: "a pinned engine's figures, with each run's progress", Command: "gauntlet bench corpus-k8s-metrics-server --engine tofu@1.9.4 -v"},
		},
		Setup: repeatedRuns("bench", 3, 1, "time `N` runs (at least 1)", runBench),
	}
}

// runBench times whole runs of an estate: per stage and in total, with
// the engine calls and API requests each stage made. Figures, not
// assertions: the machine is noisy, so it reports the median of n runs.
func runBench(ctx context.Context, spec *estate.Spec, n int, opts []gauntlet.Option) error {
	runs, walls, err := runMany(ctx, spec, n, opts)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tmedian\tmin\tmax\tengine floor\twall/floor\tsubject calls\toracle calls\tsubject requests\toracle requests\t")
	var calls, reqs int
	var floor time.Duration
	for i, s := range runs[0].Stages {
		var ds []time.Duration
		for _, r := range runs {
			ds = append(ds, r.Stages[i].Duration)
		}
		slices.Sort(ds)
		f := s.Figures
		// The floor: the slower side's engine calls, the part of a stage
		// no gauntlet can go below (the sides run at once).
		fl := time.Duration(max(f["subject.engine_ms"], f["oracle.engine_ms"])) * time.Millisecond
		floor += fl
		calls += f["subject.engine_calls"] + f["oracle.engine_calls"]
		reqs += f["subject.api_requests"] + f["oracle.api_requests"]
		ratio := "-"
		if fl > 0 {
			ratio = fmt.Sprintf("%.2f", float64(ds[len(ds)/2])/float64(fl))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n", s.ID, ds[len(ds)/2].Round(10*time.Millisecond), ds[0].Round(10*time.Millisecond),
			ds[len(ds)-1].Round(10*time.Millisecond), fl.Round(10*time.Millisecond), ratio, f["subject.engine_calls"], f["oracle.engine_calls"], f["subject.api_requests"], f["oracle.api_requests"])
	}
	slices.Sort(walls)
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\t%d\t\t%d\t\t\n", "TOTAL (wall, incl. clusters)", walls[len(walls)/2].Round(100*time.Millisecond),
		walls[0].Round(100*time.Millisecond), walls[len(walls)-1].Round(100*time.Millisecond), floor.Round(100*time.Millisecond), calls, reqs)
	tw.Flush()
	fmt.Println()
	printCallsBy(os.Stdout, runs[0])
	fmt.Println(strings.Repeat("-", 20))
	fmt.Printf("%d run(s) of %s on %s; engine floor, calls and API requests are from the first run\n", n, spec.Name, runs[0].Substrate)
	if floor > 0 {
		fmt.Printf("wall / engine floor = %.2f (median wall %s over the slower side's engine time %s): gauntlet's own overhead, clusters included\n",
			float64(walls[len(walls)/2])/float64(floor), walls[len(walls)/2].Round(100*time.Millisecond), floor.Round(100*time.Millisecond))
	}
	return nil
}

// repeatedRuns is the Setup of bench and soak: run's flags for the sides
// and the toolchain, -n (default n, at least least) and -v; do runs the
// estate n times and says what came of it.
func repeatedRuns(cmd string, n, least int, nUsage string, do func(context.Context, *estate.Spec, int, []gauntlet.Option) error) func(*cli.FlagSet) cli.Action {
	return func(fs *cli.FlagSet) cli.Action {
		var tf toolchainFlags
		tf.register(fs, false)
		var sf sideFlags
		sf.register(fs)
		estates := registerEstates(fs)
		runs := fs.Int("n", n, nUsage)
		verbose := fs.Bool("v", false, "show each run's progress")
		return func(ctx context.Context, args []string) error {
			if *runs < least {
				return cli.Usagef(cmd, "-n %d: want at least %d run(s)", *runs, least)
			}
			spec, opts, err := manyRuns(ctx, cmd, args[0], &tf, &sf, *estates, *verbose)
			if err != nil {
				return err
			}
			return do(ctx, spec, *runs, opts)
		}
	}
}

// manyRuns loads the estate and makes the options bench and soak run it
// with: the sides' flags, the toolchain's, a logger that is quiet unless
// verbose; the estate's corpus files are imported first, as run does.
func manyRuns(ctx context.Context, cmd, name string, tf *toolchainFlags, sf *sideFlags, estates string, verbose bool) (*estate.Spec, []gauntlet.Option, error) {
	sideOpts, err := sf.options(cmd)
	if err != nil {
		return nil, nil, err
	}
	spec, err := estate.Load(estates, name)
	if err != nil {
		return nil, nil, err
	}
	l := log.Discard()
	if verbose {
		l = log.New(os.Stderr)
	}
	if err := tf.ensureCorpus(ctx, spec, l); err != nil {
		return nil, nil, err
	}
	return spec, append(tf.runOptions(l), sideOpts...), nil
}

// runMany runs the estate n times with opts, one after the other, saying
// after each how it went. A cancelled run ends the series.
func runMany(ctx context.Context, spec *estate.Spec, n int, opts []gauntlet.Option) ([]*result.Run, []time.Duration, error) {
	var runs []*result.Run
	var walls []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		res, err := gauntlet.Run(ctx, spec, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("run %d/%d: %w", i+1, n, err)
		}
		if res.Cancelled != nil {
			return nil, nil, fmt.Errorf("run %d/%d was cancelled (%s during %q)", i+1, n, res.Cancelled.Signal, res.Cancelled.Stage)
		}
		walls = append(walls, time.Since(start))
		fmt.Fprintf(os.Stderr, "run %d/%d: %s in %s (clear=%v)\n", i+1, n, spec.Name, walls[i].Round(100*time.Millisecond), res.Clear())
		runs = append(runs, res)
	}
	return runs, walls, nil
}

// printCallsBy prints a run's engine calls by subcommand and side, summed
// over its stages: where the engine-seconds go.
func printCallsBy(w io.Writer, run *result.Run) {
	sum := map[string]map[string]result.CallTally{"subject": {}, "oracle": {}}
	var subs []string
	for _, st := range run.Stages {
		for side, by := range st.Calls {
			for sub, t := range by {
				if sum[side] == nil {
					continue
				}
				if !slices.Contains(subs, sub) {
					subs = append(subs, sub)
				}
				c := sum[side][sub]
				sum[side][sub] = result.CallTally{N: c.N + t.N, MS: c.MS + t.MS}
			}
		}
	}
	if len(subs) == 0 {
		return
	}
	// The costliest first.
	cost := func(sub string) int { return sum["subject"][sub].MS + sum["oracle"][sub].MS }
	slices.SortFunc(subs, func(a, b string) int { return cost(b) - cost(a) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "engine calls by subcommand	subject calls	subject engine-s	oracle calls	oracle engine-s	subject s/call	")
	var tot [2]result.CallTally
	for _, sub := range subs {
		s, o := sum["subject"][sub], sum["oracle"][sub]
		tot[0] = result.CallTally{N: tot[0].N + s.N, MS: tot[0].MS + s.MS}
		tot[1] = result.CallTally{N: tot[1].N + o.N, MS: tot[1].MS + o.MS}
		per := "-"
		if s.N > 0 {
			per = fmt.Sprintf("%.2f", float64(s.MS)/1000/float64(s.N))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%d\t%.1f\t%s\t\n", sub, s.N, float64(s.MS)/1000, o.N, float64(o.MS)/1000, per)
	}
	fmt.Fprintf(tw, "%s\t%d\t%.1f\t%d\t%.1f\t\t\n", "TOTAL (first run)", tot[0].N, float64(tot[0].MS)/1000, tot[1].N, float64(tot[1].MS)/1000)
	tw.Flush()
}
