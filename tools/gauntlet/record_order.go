package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
)

// lastDurations is how long each cell's latest recorded run took
// ("estate/substrate" -> its run.json duration), read from the run
// folders the ledger names; a folder it cannot read is left out.
func lastDurations(l *conformance.Ledger, runs string) map[string]time.Duration {
	last := map[string]string{}
	for _, r := range l.Rows {
		last[r.Estate+"/"+r.Substrate] = r.Run
	}
	out := map[string]time.Duration{}
	for cell, run := range last {
		b, err := os.ReadFile(filepath.Join(runs, run, "run.json"))
		if err != nil {
			continue
		}
		var d struct {
			Duration time.Duration `json:"duration_ns"`
		}
		if json.Unmarshal(b, &d) == nil && d.Duration > 0 {
			out[cell] = d.Duration
		}
	}
	return out
}

// longestFirst orders the cells by their last run's duration, longest
// first, a cell never recorded (no duration to go by) before them all:
// with --jobs N the record then ends close to total/N instead of waiting
// on a long cell that started last (the list scheduler's worst case). Ties
// keep the order given.
func longestFirst(needs []conformance.Need, took map[string]time.Duration) []conformance.Need {
	out := slices.Clone(needs)
	key := func(n conformance.Need) time.Duration {
		d, ok := took[n.Name()]
		if !ok {
			return time.Duration(1<<63 - 1)
		}
		return d
	}
	slices.SortStableFunc(out, func(a, b conformance.Need) int {
		ka, kb := key(a), key(b)
		switch {
		case ka > kb:
			return -1
		case ka < kb:
			return 1
		}
		return 0
	})
	return out
}

// estimate says how long the record should take at jobs cells at once,
// from the cells' last durations (a schedule of the order given, each
// cell on the first free slot), or nothing when no cell was timed before.
func estimate(needs []conformance.Need, took map[string]time.Duration, jobs int) string {
	slots := make([]time.Duration, max(1, jobs))
	timed, unknown := 0, 0
	for _, n := range needs {
		d, ok := took[n.Name()]
		if !ok {
			unknown++
			continue
		}
		timed++
		i := slices.Index(slots, slices.Min(slots))
		slots[i] += d
	}
	if timed == 0 {
		return ""
	}
	s := fmt.Sprintf("expected: about %s at %d at a time, from the last recorded run of %d of the %d cells", slices.Max(slots).Round(time.Minute), len(slots), timed, len(needs))
	if unknown > 0 {
		s += fmt.Sprintf(" (%d never timed, not counted)", unknown)
	}
	return s
}
