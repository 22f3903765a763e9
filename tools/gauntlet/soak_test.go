package main

import (
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func soakRun(mutate func(*result.Run)) *result.Run {
	r := &result.Run{Stages: []result.Stage{
		{ID: "cold_deploy", Verdict: result.Pass,
			Checks:  []result.Check{{Name: "objects", Verdict: result.Pass}},
			Breaks:  []result.Break{{Name: "delete", Side: "subject", Outcome: result.Proved}},
			Figures: map[string]int{"subject.engine_calls": 3, "oracle.engine_calls": 3, "subject.plans": 1, "subject.api_requests": 40}},
		{ID: "drift", Verdict: result.NotRun, Reason: "the estate skips it: x"},
	}}
	if mutate != nil {
		mutate(r)
	}
	return r
}

func TestSoakTable(t *testing.T) {
	// API requests vary with controllers' timing: shown, not compared.
	same := soakTable([]*result.Run{soakRun(nil), soakRun(func(r *result.Run) { r.Stages[0].Figures["subject.api_requests"] = 47 })})
	for _, r := range same {
		if len(r.diffs) != 0 {
			t.Errorf("%s differs: %v", r.id, r.diffs)
		}
	}
	if same[0].requests != "40-47/0" || same[0].subjectCalls != "3" {
		t.Errorf("figures shown as %q, %q", same[0].requests, same[0].subjectCalls)
	}

	for name, tc := range map[string]struct {
		mutate func(*result.Run)
		want   string
	}{
		"verdict": {func(r *result.Run) { r.Stages[0].Verdict = result.Fail }, `verdict: 1x "fail" vs 2x "pass"`},
		"reason":  {func(r *result.Run) { r.Stages[1].Reason = "cold_deploy did not pass (fail)" }, "verdict: "},
		"check":   {func(r *result.Run) { r.Stages[0].Checks[0].Verdict = result.Fail }, "checks: "},
		"break":   {func(r *result.Run) { r.Stages[0].Breaks[0].Outcome = result.Held }, "BREAK outcomes: "},
		"calls":   {func(r *result.Run) { r.Stages[0].Figures["oracle.engine_calls"] = 4 }, "oracle.engine_calls: "},
		"plans":   {func(r *result.Run) { r.Stages[0].Figures["subject.plans"] = 2 }, "subject.plans: "},
		"missing": {func(r *result.Run) { r.Stages = r.Stages[:1] }, "present in 2 of 3 runs"},
	} {
		t.Run(name, func(t *testing.T) {
			rows := soakTable([]*result.Run{soakRun(nil), soakRun(nil), soakRun(tc.mutate)})
			var all []string
			for _, r := range rows {
				all = append(all, r.diffs...)
			}
			if len(all) != 1 || !strings.Contains(all[0], tc.want) {
				t.Fatalf("diffs %q, want one containing %q", all, tc.want)
			}
		})
	}
}
