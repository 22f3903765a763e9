// Package expect judges a run of an estate against what its estate.yaml
// says to expect: the findings it lists, the stages gauntlet cannot derive a
// plan for, the stages it skips. The estate's test (gauntlettest) and the
// conformance gate (an estate's cell in the ledger) judge by this one
// function, so a run the test would fail can never prove a cell.
package expect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Stage is one stage of a run, judged.
type Stage struct {
	ID string
	// Fails lists why the stage is not what the estate expects; empty
	// when it is.
	Fails []string
	// Skip, when Fails is empty, says why the stage proves nothing and
	// fails nothing: not run or not applicable for a reason the estate
	// declares, or a finding the estate lists. Empty for a pass.
	Skip string
}

// OK reports whether the stage is what the estate expects.
func (s Stage) OK() bool { return len(s.Fails) == 0 }

// Judge judges every stage of run against spec, in run order.
func Judge(spec *estate.Spec, run *result.Run) []Stage {
	// Stages the estate expects not to pass: its findings, and (in run
	// order) every stage that did not run because one of those did not.
	blocked := map[string]bool{}
	for id := range spec.Findings {
		blocked[id] = true
	}
	for _, s := range run.Stages {
		if s.Verdict == result.NotRun && s.Cause == result.CauseBlocked && blocked[s.BlockedBy] {
			blocked[s.ID] = true
		}
	}
	out := make([]Stage, 0, len(run.Stages))
	for _, s := range run.Stages {
		out = append(out, stage(spec, s, blocked))
	}
	return out
}

// Problems lists every stage of a judged run that is not what the estate
// expects, one line each ("stage: why").
func Problems(stages []Stage) []string {
	var out []string
	for _, s := range stages {
		for _, f := range s.Fails {
			out = append(out, s.ID+": "+f)
		}
	}
	return out
}

func stage(spec *estate.Spec, s result.Stage, blocked map[string]bool) Stage {
	j := Stage{ID: s.ID}
	fail := func(format string, a ...any) Stage {
		j.Fails = append(j.Fails, fmt.Sprintf(format, a...))
		return j
	}
	if finding, ok := spec.Findings[s.ID]; ok {
		if why := Unlike(finding, s); len(why) > 0 {
			return fail("the estate lists a finding for %s (%s), but the run reports otherwise: %s. Update the entry if this is what the root does now (remove it if the stage passes); else it is a new failure", s.ID, finding.Why, strings.Join(why, "; "))
		}
		j.Skip = fmt.Sprintf("%s as the estate's finding says (%s): %s", s.Verdict, finding.Why, s.Detail)
		return j
	}
	if skip, why := notDerived(spec, s); skip != "" {
		j.Skip = skip
		return j
	} else if why != "" {
		return fail("%s", why)
	}
	switch s.Verdict {
	case result.NotRun:
		// Not run for a declared reason (the estate skips it, the engine
		// lacks what it needs): a skip, never a pass. Anything else is a
		// stage that should have run.
		if s.Cause.Declared() || blocked[s.ID] {
			j.Skip = "not run: " + s.Reason
			return j
		}
		return fail("not run: %s", s.Reason)
	case result.NotApplicable:
		// The estate's shape cannot carry it (a root of one object has no
		// neighbour to keep through a removal): never a pass, never a fail.
		j.Skip = "not applicable to this estate: " + s.Reason
		return j
	case result.Pass:
	case result.Limitation:
		// Not the engine's fail, but nothing can tell a provider's
		// behaviour from a gauntlet defect that fails both sides alike: a
		// person says which, in estate.yaml.
		return fail("stock fails it the same way (a limitation): if it is the estate's or the provider's, say so in estate.yaml findings: %s; else it is gauntlet's own defect. %s", s.ID, s.Detail)
	default:
		return fail("%s: %s %s", s.Verdict, s.Reason, s.Detail)
	}
	if why := result.Contradictions(s); len(why) > 0 {
		j.Fails = append(j.Fails, "passed, but cannot be backed: "+strings.Join(why, "; "))
	}
	for _, c := range s.Checks {
		if c.Verdict == result.Pass && len(c.ProvedBy) == 0 && c.NoBreak == "" {
			j.Fails = append(j.Fails, fmt.Sprintf("check %q passed with no BREAK proving it", c.Name))
		}
	}
	for _, b := range s.Breaks {
		if b.Side != "oracle" && !b.Failed {
			j.Fails = append(j.Fails, fmt.Sprintf("BREAK %s %s: %s", b.Name, b.Outcome, b.Detail))
		}
	}
	return j
}

// notDerived judges a stage against the estate's not_derived list: a
// skip when it did not run for want of a derived plan and the estate says
// so, a fail when it did not and the estate does not say so (the
// derivation regressed, or the gap is new: list it), or when the estate
// says so and the stage ran (the entry is stale). Both empty: the stage
// is judged as any other.
func notDerived(spec *estate.Spec, s result.Stage) (skip, fail string) {
	gap, listed := spec.NotDerived[s.ID]
	notDerived := s.Verdict == result.NotRun && s.Cause == result.CauseNotDerived
	switch {
	case notDerived && listed:
		return fmt.Sprintf("not run, as estate.yaml's not_derived says (%s): %s", gap, s.Reason), ""
	case notDerived:
		return "", fmt.Sprintf("not run: %s. Gauntlet derived no plan for %s: if that is this root's shape today, say so under not_derived in estate.yaml (or write the stage's section)", s.Reason, s.ID)
	case listed && s.Verdict != result.NotRun:
		return "", fmt.Sprintf("estate.yaml lists %s under not_derived (%s), but the stage is %s: remove the entry", s.ID, gap, s.Verdict)
	}
	return "", ""
}

// Unlike lists how a stage's run differs from the finding the estate
// lists for it, empty when it is exactly that: the verdict, every finding
// of its checks that did not pass (as many, each the same check, side,
// victim, field, want and got), no check that could not measure or is
// unproven, every subject BREAK of its other checks proved, and how it
// stopped short - the same sides, each stopped by an engine that printed
// the diagnostic named.
func Unlike(f estate.Finding, s result.Stage) []string {
	var why []string
	if string(s.Verdict) != f.Verdict {
		why = append(why, fmt.Sprintf("verdict %s, not %s", s.Verdict, f.Verdict))
	}
	listed := map[estate.Found]int{}
	for _, x := range f.Found {
		listed[x]++
	}
	var extra []string
	for _, c := range s.Checks {
		if c.Verdict == result.Pass || c.Verdict == result.NotRun {
			continue
		}
		if len(c.Findings) == 0 {
			why = append(why, fmt.Sprintf("check %q is %s without a finding (%s)", c.Name, c.Verdict, strings.Join(c.MeasurementErrors, "; ")))
		}
		for _, g := range c.Findings {
			k := estate.Found{Check: c.Name, Side: g.Side, Address: g.Address, Object: g.Object, Field: g.Field, Want: g.Want, Got: g.Got}
			if listed[k] > 0 {
				listed[k]--
				continue
			}
			extra = append(extra, foundString(k))
		}
	}
	if len(extra) > 0 {
		why = append(why, "reported, not listed: "+strings.Join(extra, ", "))
	}
	var missing []string
	for _, x := range f.Found {
		if listed[x] > 0 {
			listed[x]--
			missing = append(missing, foundString(x))
		}
	}
	if len(missing) > 0 {
		why = append(why, "listed, not reported: "+strings.Join(missing, ", "))
	}
	// The listed failure excuses its own checks only: a subject's BREAK
	// of any other check that did not prove still counts.
	excused := map[string]bool{}
	for _, x := range f.Found {
		excused[x.Check] = true
	}
	for _, b := range s.Breaks {
		if b.Side == "oracle" || b.Failed || (len(b.Covers) > 0 && !slices.ContainsFunc(b.Covers, func(c string) bool { return !excused[c] })) {
			continue
		}
		why = append(why, fmt.Sprintf("BREAK %s %s: %s", b.Name, b.Outcome, b.Detail))
	}
	switch st := f.Stopped; {
	case st == nil && len(s.StoppedBy) > 0:
		why = append(why, fmt.Sprintf("stopped short by %s: %s", strings.Join(s.StoppedBy, " and "), firstLine(s.Aborted)))
	case st != nil && !sameSides(st.Sides, s.StoppedBy):
		why = append(why, fmt.Sprintf("stopped by %s, not %s", orNone(s.StoppedBy), strings.Join(st.Sides, " and ")))
	case st != nil && !printed(s.Aborted, st.Error):
		why = append(why, fmt.Sprintf("no engine printed %q where it stopped (%s)", st.Error, firstLine(s.Aborted)))
	}
	return why
}

func foundString(x estate.Found) string {
	victim := x.Address
	if victim == "" {
		victim = x.Object
	}
	return fmt.Sprintf("%s: %s: %s %s want %s got %s", x.Check, x.Side, victim, x.Field, x.Want, x.Got)
}

func sameSides(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

func orNone(sides []string) string {
	if len(sides) == 0 {
		return "nothing"
	}
	return strings.Join(sides, " and ")
}

// printed reports whether an engine's diagnostic with this summary is in
// a stopped stage's error: a line that is the summary, or the summary and
// its detail after a colon, as the engines print a diagnostic.
func printed(aborted, summary string) bool {
	for _, l := range strings.Split(aborted, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "│"))
		if l == summary || strings.HasPrefix(l, summary+":") {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
