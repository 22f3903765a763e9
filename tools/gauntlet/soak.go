package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func soakCommand() cli.Command {
	return cli.Command{
		Name: "soak", Args: "<estate>", MinArgs: 1, MaxArgs: 1,
		Summary: "run an estate n times and report any stage whose verdicts or figures differ",
		Doc: "Runs the estate n times, one after the other, and reports every stage whose outcome differs between runs: its verdict " +
			"(and reason), a check's verdict, a BREAK's outcome, or a figure that must repeat exactly (engine calls, plans, planned " +
			"changes); API request counts depend on controllers' timing, so they are shown as a range, not compared. Exits 1 if " +
			"anything differs: a flaky stage is a bug to fix, not to retry.",
		Examples: []cli.Example{
			{What: "twenty runs on local control planes", Command: "gauntlet soak corpus-k8s-metrics-server -n 20"},
			{What: "five runs on two existing clusters", Command: "gauntlet soak corpus-k8s-metrics-server -n 5 --substrate kubeconfig --subject-kubeconfig a.yaml --oracle-kubeconfig b.yaml"},
		},
		Setup: repeatedRuns("soak", 20, 2, "compare `N` runs (at least 2)", runSoak),
	}
}

// runSoak runs an estate n times and reports every stage whose outcome
// differs between runs: its verdict (and reason), a check's verdict, a
// BREAK's outcome, or a figure that must repeat exactly (engine calls,
// plans, planned changes). API request counts depend on controllers'
// timing, so they are shown as a range, not compared.
func runSoak(ctx context.Context, spec *estate.Spec, n int, opts []gauntlet.Option) error {
	runs, _, err := runMany(ctx, spec, n, opts)
	if err != nil {
		return err
	}
	rows := soakTable(runs)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tverdicts\tchecks\tBREAKs\tsubject calls\toracle calls\tplans (s/o)\tAPI requests (s/o)\tsame?")
	differ := 0
	for _, r := range rows {
		same := "yes"
		if len(r.diffs) > 0 {
			same = "NO"
			differ++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.id, r.verdicts, r.checks, r.breaks, r.subjectCalls, r.oracleCalls, r.plans, r.requests, same)
	}
	tw.Flush()
	clear := 0
	for _, r := range runs {
		if r.Clear() {
			clear++
		}
	}
	fmt.Printf("clear in %d of %d runs (the run's verdict, result.Run.Clear)\n", clear, len(runs))
	if clear != 0 && clear != len(runs) {
		differ++
	}
	fmt.Printf("%d runs of %s on %s: ", len(runs), spec.Name, runs[0].Substrate)
	if differ == 0 {
		fmt.Println("every stage's verdict, checks, BREAK outcomes and figures are identical in every run")
		return nil
	}
	fmt.Println("these differ between runs:")
	if clear != 0 && clear != len(runs) {
		fmt.Printf("  the run's verdict: clear in %d, not clear in %d\n", clear, len(runs)-clear)
	}
	for _, r := range rows {
		for _, d := range r.diffs {
			fmt.Printf("  %s: %s\n", r.id, d)
		}
	}
	return cli.NotClear(fmt.Errorf("%d stage(s) differ between runs: a flaky stage is a bug to fix, not to retry", differ))
}

// soakRow is one stage across every run.
type soakRow struct {
	id                                                                   string
	verdicts, checks, breaks, subjectCalls, oracleCalls, plans, requests string
	diffs                                                                []string
}

// exactFigures must repeat run after run.
func exactFigures() []string {
	return []string{"subject.engine_calls", "oracle.engine_calls", "subject.plans", "oracle.plans",
		"subject.planned_changes", "oracle.planned_changes"}
}

// soakTable compares the runs stage by stage (runs have the same stages
// in the same order: stage.Canonical).
func soakTable(runs []*result.Run) []soakRow {
	var rows []soakRow
	for i, s := range runs[0].Stages {
		row := soakRow{id: s.ID}
		var stages []result.Stage
		for _, r := range runs {
			if i < len(r.Stages) && r.Stages[i].ID == s.ID {
				stages = append(stages, r.Stages[i])
			}
		}
		if len(stages) != len(runs) {
			row.diffs = append(row.diffs, fmt.Sprintf("present in %d of %d runs", len(stages), len(runs)))
		}
		verdict := func(s result.Stage) string {
			if s.Verdict == result.NotRun || s.Verdict == result.NotApplicable {
				return string(s.Verdict) + " (" + s.Reason + ")"
			}
			return string(s.Verdict)
		}
		var d string
		row.verdicts, d = tally(stages, verdict)
		row.diffs = appendDiff(row.diffs, "verdict", d)
		row.checks, d = tally(stages, func(s result.Stage) string {
			var out []string
			for _, c := range s.Checks {
				out = append(out, c.Name+"="+string(c.Verdict))
			}
			return strings.Join(out, ", ")
		})
		row.checks = summary(stages, func(s result.Stage) int { return len(s.Checks) }, row.checks)
		row.diffs = appendDiff(row.diffs, "checks", d)
		row.breaks, d = tally(stages, func(s result.Stage) string {
			var out []string
			for _, b := range s.Breaks {
				out = append(out, fmt.Sprintf("%s[%s]=%s", b.Name, b.Side, b.Outcome))
			}
			return strings.Join(out, ", ")
		})
		row.breaks = summary(stages, func(s result.Stage) int { return len(s.Breaks) }, row.breaks)
		row.diffs = appendDiff(row.diffs, "BREAK outcomes", d)
		for _, f := range exactFigures() {
			_, d := tally(stages, func(s result.Stage) string { return fmt.Sprint(s.Figures[f]) })
			row.diffs = appendDiff(row.diffs, f, d)
		}
		row.subjectCalls = spread(stages, "subject.engine_calls")
		row.oracleCalls = spread(stages, "oracle.engine_calls")
		row.plans = spread(stages, "subject.plans") + "/" + spread(stages, "oracle.plans")
		row.requests = spread(stages, "subject.api_requests") + "/" + spread(stages, "oracle.api_requests")
		rows = append(rows, row)
	}
	return rows
}

// tally returns the value when every stage has the same one, else a
// count of each value and a description of the difference.
func tally(stages []result.Stage, key func(result.Stage) string) (string, string) {
	counts := map[string]int{}
	for _, s := range stages {
		counts[key(s)]++
	}
	if len(counts) == 1 {
		for k := range counts {
			return k, ""
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%dx %q", counts[k], k))
	}
	return "DIFFER", strings.Join(parts, " vs ")
}

// summary shortens a long identical value in the table to a count.
func summary(stages []result.Stage, n func(result.Stage) int, v string) string {
	if v == "DIFFER" || len(stages) == 0 {
		return v
	}
	return fmt.Sprintf("%d same", n(stages[0]))
}

func appendDiff(diffs []string, what, d string) []string {
	if d == "" {
		return diffs
	}
	return append(diffs, what+": "+d)
}

// spread is a figure as "n" when it repeats, else "min-max".
func spread(stages []result.Stage, key string) string {
	if len(stages) == 0 {
		return "-"
	}
	lo, hi := stages[0].Figures[key], stages[0].Figures[key]
	for _, s := range stages[1:] {
		lo, hi = min(lo, s.Figures[key]), max(hi, s.Figures[key])
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}
