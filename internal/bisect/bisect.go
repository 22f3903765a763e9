// Package bisect finds where, between two engine versions, a stage's
// outcome changes: the adjacent pair of candidates (ordered by version)
// where one shows the finding and the next does not. A probe runs the
// stage on one engine and says good, bad or skip (neither: it could not
// tell), as git bisect does; skipped candidates are stepped around.
package bisect

import (
	"context"
	"fmt"
)

// Outcome is what a probe of one engine said.
type Outcome string

const (
	// Good: the stage passed.
	Good Outcome = "good"
	// Bad: the stage failed with the finding sought.
	Bad Outcome = "bad"
	// Skip: neither (not run, failed for another reason): it cannot place
	// this engine.
	Skip Outcome = "skip"
)

// Step is one probe: the engine, what it said and why, and where its
// evidence is.
type Step struct {
	Engine   string  `json:"engine"`
	Outcome  Outcome `json:"outcome"`
	Why      string  `json:"why"`
	Evidence string  `json:"evidence,omitempty"`
}

// Probe runs the stage on one engine.
type Probe func(ctx context.Context, engine string) (Step, error)

// Result is a bisection: every step in order and the boundary found -
// Before is the last candidate with the outcome of the first endpoint,
// After the first with the other's. Exact is false when skipped
// candidates lie between them.
type Result struct {
	Candidates []string `json:"candidates"`
	Steps      []Step   `json:"steps"`
	Before     string   `json:"before"`
	After      string   `json:"after"`
	Exact      bool     `json:"exact"`
}

// Run bisects candidates (ordered by version) between the indices good
// and bad, in either order (a bug that appeared, or one that was fixed):
// both ends are probed first and must be what they are said to be.
func Run(ctx context.Context, candidates []string, good, bad int, probe Probe) (*Result, error) {
	lo, hi := min(good, bad), max(good, bad)
	if lo < 0 || hi >= len(candidates) || lo == hi {
		return nil, fmt.Errorf("bisect: the good and the bad end must be two of the %d candidates (got %d and %d)", len(candidates), good, bad)
	}
	r := &Result{Candidates: candidates}
	seen := map[int]Outcome{}
	at := func(i int) (Outcome, error) {
		if o, ok := seen[i]; ok {
			return o, nil
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		s, err := probe(ctx, candidates[i])
		if err != nil {
			return "", fmt.Errorf("bisect: %s: %w", candidates[i], err)
		}
		r.Steps = append(r.Steps, s)
		seen[i] = s.Outcome
		return s.Outcome, nil
	}
	for _, end := range []struct {
		i    int
		want Outcome
	}{{bad, Bad}, {good, Good}} {
		got, err := at(end.i)
		if err != nil {
			return r, err
		}
		if got != end.want {
			return r, fmt.Errorf("bisect: %s was named %s but is %s: see its step", candidates[end.i], end.want, got)
		}
	}
	first := seen[lo]
	// Invariant: lo has first's outcome, hi the other; between them some
	// candidates may be skipped.
	for {
		var open []int
		for i := lo + 1; i < hi; i++ {
			if seen[i] != Skip {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			break
		}
		mid := open[len(open)/2]
		o, err := at(mid)
		if err != nil {
			return r, err
		}
		switch o {
		case first:
			lo = mid
		case Skip:
		default:
			hi = mid
		}
	}
	r.Before, r.After = candidates[lo], candidates[hi]
	r.Exact = hi == lo+1
	return r, nil
}
