package main

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/bisect"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func TestBisectCandidates(t *testing.T) {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	refs, gi, bi, err := bisectCandidates(pins, "tofu@1.12.6", "tofu@1.8.11")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.String())
	}
	if len(got) < 2 || got[0] != "tofu@1.8.11" || got[len(got)-1] != "tofu@1.12.6" || gi != len(got)-1 || bi != 0 {
		t.Errorf("candidates %v, good at %d, bad at %d", got, gi, bi)
	}
	for _, c := range got {
		if c[:4] != "tofu" {
			t.Errorf("a terraform among tofu's candidates: %v", got)
		}
	}
	if _, _, _, err := bisectCandidates(pins, "tofu@1.12.6", "terraform@1.5.7"); err == nil {
		t.Error("two engines' versions accepted")
	}
	if _, _, _, err := bisectCandidates(pins, "tofu@1.12.6", "tofu@1.12.6"); err == nil {
		t.Error("the same engine twice accepted")
	}
}

func TestJudgeProbe(t *testing.T) {
	run := func(v result.Verdict, detail string) *result.Run {
		return &result.Run{Stages: []result.Stage{{ID: "migrate", Verdict: v, Detail: detail}}}
	}
	for _, tc := range []struct {
		run     *result.Run
		finding string
		want    bisect.Outcome
	}{
		{run(result.Pass, ""), "Call to unknown function", bisect.Good},
		{run(result.Fail, "x\nError: Call to unknown function\n"), "Call to unknown function", bisect.Bad},
		{run(result.Fail, "timed out"), "Call to unknown function", bisect.Skip},
		{run(result.Fail, "timed out"), "", bisect.Bad},
		{run(result.NotRun, ""), "", bisect.Skip},
		{&result.Run{}, "", bisect.Skip},
	} {
		if got := judgeProbe(tc.run, "migrate", tc.finding); got.Outcome != tc.want {
			t.Errorf("%+v with %q: %s (%s), want %s", tc.run.Stages, tc.finding, got.Outcome, got.Why, tc.want)
		}
	}
}
