package conformance

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Proof is how far a requirement is proven right now.
type Proof string

const (
	// Proven: every claiming stage's latest recorded run passed, every
	// BREAK failed, from a clean commit no later commit has touched the
	// requirement's paths since.
	Proven Proof = "proven"
	// StaleProof: it was proven, but what it proved has changed since.
	StaleProof Proof = "stale-proof"
	// Dirty: the latest run came from uncommitted changes.
	Dirty Proof = "dirty"
	// Failed: the latest run of a claiming stage failed.
	Failed Proof = "failed"
	// NotRun: the latest run of a claiming stage did not run it.
	NotRun Proof = "not-run"
	// Unproven: no recorded run of a claiming stage, or no stage at all.
	Unproven Proof = "unproven"
)

// rank orders proofs worst first: a requirement is as proven as its
// weakest stage.
var rank = map[Proof]int{Failed: 0, Dirty: 1, StaleProof: 2, NotRun: 3, Unproven: 4, Proven: 5}

// History answers whether anything under paths changed after commit (or
// commit is not in the current history at all).
type History interface {
	ChangedSince(commit string, paths []string) (bool, string, error)
}

// Status is one requirement's derived state.
type Status struct {
	Requirement Requirement
	Stages      []string
	Proof       Proof
	// Why explains the proof in one line.
	Why string
}

// Derive computes every requirement's status from the coverage and the
// ledger; for each claiming stage only its latest recorded row counts.
func Derive(reg *Registry, cov Coverage, rows []Row, hist History) ([]Status, error) {
	latest := map[string]Row{}
	for _, r := range rows {
		if cur, ok := latest[r.Stage]; !ok || !r.Time.Before(cur.Time) {
			latest[r.Stage] = r
		}
	}
	var out []Status
	for _, q := range reg.Requirements {
		st := Status{Requirement: q, Stages: cov.Stages[q.ID], Proof: Unproven, Why: "no stage verifies it"}
		for i, s := range st.Stages {
			row, ok := latest[s]
			p, why := Unproven, "stage "+s+" has no recorded run"
			if ok {
				var err error
				if p, why, err = proofOf(row, q, hist); err != nil {
					return nil, err
				}
			}
			if i == 0 || rank[p] < rank[st.Proof] {
				st.Proof, st.Why = p, why
			}
		}
		out = append(out, st)
	}
	return out, nil
}

func proofOf(r Row, q Requirement, hist History) (Proof, string, error) {
	at := fmt.Sprintf("run %s (%s)", r.Run, r.Stage)
	switch {
	case r.Verdict == result.Fail:
		return Failed, at + " failed", nil
	case r.Verdict != result.Pass:
		return NotRun, at + " did not run it", nil
	case r.Breaks == 0 || r.BreaksFailed != r.Breaks:
		return Failed, fmt.Sprintf("%s passed but only %d of %d BREAKs failed: not load-bearing", at, r.BreaksFailed, r.Breaks), nil
	case r.Dirty():
		return Dirty, at + " ran from uncommitted changes", nil
	}
	changed, what, err := hist.ChangedSince(r.Commit, q.Paths)
	if err != nil {
		return "", "", err
	}
	if changed {
		return StaleProof, at + " proved it, but " + what, nil
	}
	why := at + " passed with every BREAK failing at " + shortHash(r.Commit)
	if r.ChecksNotRun > 0 {
		why += fmt.Sprintf(" (%d check(s) not run on %s)", r.ChecksNotRun, r.Substrate)
	}
	return Proven, why, nil
}

func shortHash(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

// Summary counts statuses by proof, e.g. "proven 16, unproven 2".
func Summary(st []Status) string {
	count := map[Proof]int{}
	for _, s := range st {
		count[s.Proof]++
	}
	var parts []string
	for _, p := range []Proof{Proven, StaleProof, Dirty, Failed, NotRun, Unproven} {
		if count[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p, count[p]))
		}
	}
	return strings.Join(parts, ", ")
}
