package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
)

// The record runs the longest cells first, a never-timed one before all,
// and its estimate is the schedule of that order on --jobs slots.
func TestLongestFirst(t *testing.T) {
	needs := []conformance.Need{{Estate: "a", Substrate: "local"}, {Estate: "b", Substrate: "local"}, {Estate: "c", Substrate: "local"}, {Estate: "d", Substrate: "kind"}, {Estate: "new", Substrate: "local"}}
	took := map[string]time.Duration{"a/local": 2 * time.Minute, "b/local": 2 * time.Minute, "c/local": 9 * time.Minute, "d/kind": 5 * time.Minute}
	var got []string
	for _, n := range longestFirst(needs, took) {
		got = append(got, n.Name())
	}
	if want := "new/local c/local d/kind a/local b/local"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
	// In the order given, the long c starts after a and b and ends at 11
	// min on two slots; longest first, c and d start at once and a, b
	// follow d: 9 min.
	if est := estimate(needs, took, 2); !strings.Contains(est, "about 11m0s at 2 at a time") {
		t.Errorf("estimate in the given order: %s", est)
	}
	est := estimate(longestFirst(needs, took), took, 2)
	if !strings.Contains(est, "about 9m0s at 2 at a time") || !strings.Contains(est, "4 of the 5 cells") || !strings.Contains(est, "1 never timed") {
		t.Errorf("estimate longest first: %s", est)
	}
	if estimate(needs[4:], took, 2) != "" {
		t.Errorf("an estimate with nothing timed")
	}
}
