package main

import (
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func TestPrintCallsBySumsStagesCostliestFirst(t *testing.T) {
	run := &result.Run{Stages: []result.Stage{
		{ID: "cold_deploy", Calls: map[string]map[string]result.CallTally{
			"subject": {"init": {N: 1, MS: 900}, "apply": {N: 1, MS: 2000}},
			"oracle":  {"init": {N: 1, MS: 800}, "apply": {N: 1, MS: 2100}},
		}},
		{ID: "migrate", Calls: map[string]map[string]result.CallTally{
			"subject": {"plan": {N: 4, MS: 1600}, "state list": {N: 2, MS: 400}},
			"oracle":  {"plan": {N: 4, MS: 1500}},
		}},
		{ID: "fence"}, // not run: no calls
	}}
	var b strings.Builder
	printCallsBy(&b, run)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var firsts []string
	for _, l := range lines[1:] {
		firsts = append(firsts, strings.Fields(l)[0])
	}
	if got, want := strings.Join(firsts, ","), "apply,plan,init,state,TOTAL"; got != want {
		t.Errorf("rows %s, want %s:\n%s", got, want, b.String())
	}
	total := strings.Fields(lines[len(lines)-1])
	if got := strings.Join(total[3:], " "); got != "8 4.9 6 4.4" {
		t.Errorf("total %q, want subject 8 calls 4.9 s and oracle 6 calls 4.4 s:\n%s", got, b.String())
	}
	if !strings.Contains(b.String(), "0.40") { // the subject's plans: 1.6 s over 4
		t.Errorf("no per-call time for plan:\n%s", b.String())
	}
}
