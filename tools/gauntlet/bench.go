package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// runBench times whole runs of an estate: per stage and in total, with
// the engine calls and API requests each stage made. Figures, not
// assertions: the machine is noisy, so it reports the median of n runs.
func runBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	n := fs.Int("n", 3, "runs")
	substrate := fs.String("substrate", "local", "local, kind or kubeconfig")
	estates := fs.String("estates", "estates", "directory holding the estates")
	verbose := fs.Bool("v", false, "show each run's progress")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 || *n < 1 {
		return fmt.Errorf("usage: gauntlet bench <estate> [-n runs]")
	}
	spec, err := estate.Load(*estates, fs.Arg(0))
	if err != nil {
		return err
	}
	l := log.Discard()
	if *verbose {
		l = log.New(os.Stderr)
	}
	runs, walls, err := runMany(ctx, spec, *n, *substrate, l)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tmedian\tmin\tmax\tengine floor\tsubject calls\toracle calls\tsubject requests\toracle requests\t")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n", s.ID, ds[len(ds)/2].Round(10*time.Millisecond), ds[0].Round(10*time.Millisecond),
			ds[len(ds)-1].Round(10*time.Millisecond), fl.Round(10*time.Millisecond), f["subject.engine_calls"], f["oracle.engine_calls"], f["subject.api_requests"], f["oracle.api_requests"])
	}
	slices.Sort(walls)
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t\t%d\t\t\n", "TOTAL (wall, incl. clusters)", walls[len(walls)/2].Round(100*time.Millisecond),
		walls[0].Round(100*time.Millisecond), walls[len(walls)-1].Round(100*time.Millisecond), floor.Round(100*time.Millisecond), calls, reqs)
	tw.Flush()
	fmt.Println(strings.Repeat("-", 20))
	fmt.Printf("%d run(s) of %s on %s; engine floor, calls and API requests are from the first run\n", *n, spec.Name, runs[0].Substrate)
	if floor > 0 {
		fmt.Printf("wall / engine floor = %.2f (median wall %s over the slower side's engine time %s): gauntlet's own overhead, clusters included\n",
			float64(walls[len(walls)/2])/float64(floor), walls[len(walls)/2].Round(100*time.Millisecond), floor.Round(100*time.Millisecond))
	}
	return nil
}

// runMany runs the estate n times on the substrate, one after the other,
// saying after each how it went. A cancelled run ends the series.
func runMany(ctx context.Context, spec *estate.Spec, n int, substrate string, l log.Logger) ([]*result.Run, []time.Duration, error) {
	var runs []*result.Run
	var walls []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		res, err := gauntlet.Run(ctx, spec, gauntlet.WithLogger(l), gauntlet.WithSubstrate(substrate))
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
