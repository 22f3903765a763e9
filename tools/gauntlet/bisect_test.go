package main

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/bisect"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/internal/unpinned"
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

func TestReleaseCandidates(t *testing.T) {
	served := map[string]bool{"v1.9.4": true, "v1.10.0": true, "v1.10.2": true, "v1.10.3": true}
	b := unpinned.Builder{Lookup: func(_ context.Context, mod, v string) (unpinned.Module, error) {
		if !served[v] {
			return unpinned.Module{}, fmt.Errorf("%s@%s: not served", mod, v)
		}
		return unpinned.Module{Version: v}, nil
	}}
	names, gi, bi, err := releaseCandidates(context.Background(), b, "tofu@1.10.3", "tofu@1.9.4")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tofu@1.9.4", "tofu@1.10.0", "tofu@1.10.2", "tofu@1.10.3"}; !slices.Equal(names, want) || gi != 3 || bi != 0 {
		t.Errorf("candidates %v, good at %d, bad at %d; want %v, 3, 0", names, gi, bi, want)
	}
	for _, c := range [][2]string{{"tofu@1.10.3", "terraform@1.5.7"}, {"tofu@1.10.3", "tofu@1.10.3"}, {"tofu@1.10.3", "tofu@1.10.1"}} {
		if _, _, _, err := releaseCandidates(context.Background(), b, c[0], c[1]); err == nil {
			t.Errorf("good %s, bad %s accepted", c[0], c[1])
		}
	}
}
