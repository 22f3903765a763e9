package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/compare"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// TestCompareSelectsEstatesAndShardsThemByName: --all with --shard I/N
// splits the estates as run, matrix and mutants do (every estate in
// exactly one shard); named estates are taken once each, sorted.
func TestCompareSelectsEstatesAndShardsThemByName(t *testing.T) {
	all, err := compareEstates("../../estates", nil, true, shard{})
	if err != nil || len(all) < 3 {
		t.Fatalf("all: %d estates, %v", len(all), err)
	}
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		part, err := compareEstates("../../estates", nil, true, shard{I: i, N: 3})
		if err != nil {
			t.Fatalf("shard %d/3: %v", i, err)
		}
		for _, s := range part {
			seen[s.Name]++
		}
	}
	for _, s := range all {
		if seen[s.Name] != 1 {
			t.Errorf("%s is in %d shards, want exactly one", s.Name, seen[s.Name])
		}
	}
	two, err := compareEstates("../../estates", []string{"reference-k8s-platform-app", "corpus-k8s-metrics-server", "reference-k8s-platform-app"}, false, shard{})
	if err != nil || len(two) != 2 || two[0].Name != "corpus-k8s-metrics-server" {
		t.Errorf("two by name: %d, %v", len(two), err)
	}
	if _, err := compareEstates("../../estates", []string{"no-such-estate"}, false, shard{}); err == nil {
		t.Errorf("an unknown estate was taken")
	}
	if _, err := compareEstates("../../estates", nil, true, shard{I: len(all) + 1, N: len(all) + 1}); err == nil {
		t.Errorf("a shard with no estate was taken")
	}
}

// TestCompareUsage: compare's command line is checked before anything
// runs - a missing side, -n 0, a shard without --all, an engine that is
// not pinned or a build that is not executable are usage errors (exit 2).
func TestCompareUsage(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "tofu")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	side := []string{"--engine", "tofu@1.11.5", "--baseline", "tofu@1.12.6"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--all", "--baseline", "tofu@1.12.6"}, "--engine and --baseline are both required"},
		{[]string{"compare", "e", "--engine", "./bin/tofu"}, "--engine and --baseline are both required"},
		{append([]string{"compare", "--all", "-n", "0"}, side...), "-n 0: want at least 1 run a side"},
		{append([]string{"compare", "--all", "--reattach-providers", "baseline"}, side...), `--reattach-providers "baseline": want both or build`},
		{append([]string{"compare"}, side...), "want <estate>"},
		{append([]string{"compare", "e", "--shard", "1/2"}, side...), "--shard needs --all"},
		{append([]string{"compare", "e", "--all"}, side...), "--all takes every estate"},
		{append([]string{"compare", "--all", "--shard", "3/2"}, side...), `invalid value "3/2" for flag -shard`},
		{[]string{"compare", "--all", "--engine", "tofu@1.11.5", "--baseline", "tofu@0.0.1"}, "--baseline: "},
		{[]string{"compare", "--all", "--engine", "tofu@0.0.1", "--baseline", "tofu@1.12.6"}, "--engine: "},
		{append([]string{"compare", "--all", "--oracle", "terraform@0.0.1"}, side...), "--oracle: "},
		{[]string{"compare", "--all", "--engine", notExec, "--baseline", "tofu@1.12.6"}, "not an executable file"},
	} {
		code, _, stderr := gauntletCLI(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "(see gauntlet compare -h)") {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestCompareExitCodes: a new difference is not clear (1); no new
// difference but a run that could not happen, or a stage whose
// repetitions disagree, says nothing about those stages (3); else clear.
func TestCompareExitCodes(t *testing.T) {
	run := func(v result.Verdict) *result.Run {
		return &result.Run{Stages: []result.Stage{{ID: "cold_deploy", Verdict: v, Detail: string(v)}}}
	}
	// One build run (nil: it could not happen) and the baseline's runs.
	estate := func(build *result.Run, baseline ...*result.Run) compare.EstateRuns {
		e := compare.EstateRuns{Name: "e", Build: []compare.Rep{{Run: build, Error: "the cluster did not start"}}}
		for _, r := range baseline {
			e.Baseline = append(e.Baseline, compare.Rep{Run: r})
		}
		return e
	}
	pass, fail := run(result.Pass), run(result.Fail)
	for _, tc := range []struct {
		name string
		e    compare.EstateRuns
		code int
	}{
		{"the same", estate(pass, pass), cli.ExitClear},
		{"both fail alike (shared)", estate(fail, fail), cli.ExitClear},
		{"the build fails where the baseline passed", estate(fail, pass), cli.ExitNotClear},
		{"the build passes where the baseline failed (removed)", estate(pass, fail), cli.ExitClear},
		{"a build run could not happen", estate(nil, pass), cli.ExitCouldNotRun},
		{"the baseline's repetitions disagree", estate(pass, pass, fail), cli.ExitCouldNotRun},
	} {
		r := compare.Compare(compare.Input{Estates: []compare.EstateRuns{tc.e}})
		if code := cli.ExitCode(compareOutcome(r), nil); code != tc.code {
			t.Errorf("%s: exit %d, want %d (%s)", tc.name, code, tc.code, r.Headline())
		}
	}
}

// compare --from rebuilds one report from the run folders compares left:
// two shards' folders fold into one report, running nothing, the engines
// named from the runs; an estate in two folders is refused.
func TestCompareFromFoldsShardsIntoOneReport(t *testing.T) {
	run, err := os.ReadFile("../../internal/compare/testdata/metrics-server-pass.run.json")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "compare-1-of-2"), filepath.Join(root, "compare-2-of-2")
	for dir, name := range map[string]string{a: "corpus-k8s-metrics-server", b: "reference-k8s-platform-app"} {
		for _, tool := range []string{"baseline-1", "build-1"} {
			if err := os.MkdirAll(filepath.Join(dir, name, tool), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, tool, "run.json"), run, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(root, "merged")
	step := filepath.Join(root, "step-summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", step)
	code, stdout, stderr := gauntletCLI(t, "compare", "--from", a, "--from", b, "--out", out, "--estates", "../../estates")
	if code != 0 {
		t.Fatalf("compare --from: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The pull request's check: the summary, appended to the job summary
	// too, and a JUnit case per estate x stage.
	sum, err := os.ReadFile(step)
	if err != nil || !strings.Contains(string(sum), "### gauntlet compare: ") || !strings.Contains(string(sum), "no new difference") {
		t.Errorf("$GITHUB_STEP_SUMMARY: %v\n%s", err, sum)
	}
	if ju, err := os.ReadFile(filepath.Join(out, compare.JUnitFile)); err != nil || strings.Count(string(ju), "<testcase ") < 30 || strings.Contains(string(ju), "<failure") {
		t.Errorf("junit.xml: %v\n%.600s", err, ju)
	}
	raw, err := os.ReadFile(filepath.Join(out, compare.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var r compare.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Estates) != 2 || r.Estates[0].Name != "corpus-k8s-metrics-server" || r.Estates[1].Name != "reference-k8s-platform-app" || r.Repetitions != 1 {
		t.Errorf("merged report: %d estates, %d repetitions: %+v", len(r.Estates), r.Repetitions, r.Estates)
	}
	if !strings.HasPrefix(r.Engine, "tofu@") || !strings.HasPrefix(r.Oracle, "terraform@") || len(r.New) != 0 {
		t.Errorf("engines %q / %q / %q, new %v", r.Engine, r.Baseline, r.Oracle, r.New)
	}
	if _, err := os.Stat(filepath.Join(out, "reference-k8s-platform-app", "build-1", "evidence.md")); err != nil {
		t.Errorf("the runs' evidence is not written beside the report: %v", err)
	}
	if code, _, stderr := gauntletCLI(t, "compare", "--from", a, "--from", a, "--out", out); code != 3 || !strings.Contains(stderr, "more than one folder") {
		t.Errorf("the same estate twice: exit %d, %s", code, stderr)
	}
	if code, _, stderr := gauntletCLI(t, "compare", "--from", a, "--all"); code != 2 {
		t.Errorf("--from with --all: exit %d, %s; want a usage error", code, stderr)
	}
}
