package mutant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Cell is what one stage did with one mutant.
type Cell string

const (
	// Check: a check of the stage failed - the stage caught the mutant.
	Check Cell = "check"
	// Finding: a BREAK held on the subject but proved on the oracle, an
	// engine finding - also a catch.
	Finding Cell = "finding"
	// Break: the stage failed only because a BREAK did not prove or a
	// check is unproven; the page blames the gauntlet, not the engine, so
	// it is no catch.
	Break Cell = "break"
	// Error: the stage could not finish (an engine call failed, a timeout,
	// a read) or was cancelled: a machinery failure, no catch.
	Error Cell = "error"
	// Pass and NotRun are the stage's own verdicts.
	Pass   Cell = "pass"
	NotRun Cell = "not_run"
	// NotApplicable is the stage's own verdict too: the estate's shape
	// cannot carry it, so it can catch no mutant.
	NotApplicable Cell = "not_applicable"
)

// caught reports whether a cell is a kill.
func (c Cell) caught() bool { return c == Check || c == Finding }

// Status is a mutant's outcome.
type Status string

const (
	// Killed: an expected stage caught it.
	Killed Status = "killed"
	// Survived: no stage caught it and none failed.
	Survived Status = "survived"
	// Unrelated: only stages it does not name caught it.
	Unrelated Status = "unrelated"
	// Machinery: stages failed, but none by a check (an error, a BREAK
	// that did not prove), or the run could not happen.
	Machinery Status = "machinery"
	// OtherCause: a stage it names failed a check, but with no finding of
	// the kind the mutant causes (a cascade of an earlier failure, a
	// check that failed for another reason): not a kill.
	OtherCause Status = "other_cause"
)

// StageCell is one stage's cell with what decided it.
type StageCell struct {
	Stage string `json:"stage"`
	Cell  Cell   `json:"cell"`
	// Check and Detail are the first failed check (or BREAK, or the
	// error) of a failed stage.
	Check  string `json:"check,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Row is one mutant's line of the matrix.
type Row struct {
	Mutant
	Status Status `json:"status"`
	// KilledBy is the first expected stage that caught the mutant; Check
	// is the check that failed with the finding the mutant causes, and
	// Finding that finding (the victim, the field, wanted and got).
	KilledBy string `json:"killed_by,omitempty"`
	Check    string `json:"check,omitempty"`
	Finding  string `json:"finding,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Why explains any status but killed.
	Why      string        `json:"why,omitempty"`
	Stages   []StageCell   `json:"stages"`
	Duration time.Duration `json:"duration_ns"`
}

// Classify says what a stage's result did with the mutant.
func Classify(s result.Stage) StageCell {
	c := StageCell{Stage: s.ID}
	switch s.Verdict {
	case result.Pass:
		c.Cell = Pass
		return c
	case result.NotRun:
		c.Cell, c.Detail = NotRun, s.Reason
		return c
	case result.NotApplicable:
		c.Cell, c.Detail = NotApplicable, s.Reason
		return c
	case result.Limitation:
		// The mutant fails it as stock does: nothing told them apart.
		c.Cell, c.Detail = Pass, "limitation: stock fails it the same way"
		return c
	case result.Fail:
	default:
		c.Cell, c.Detail = Error, fmt.Sprintf("stage %s", s.Verdict)
		return c
	}
	for _, ch := range s.Checks {
		if ch.Verdict == result.Fail {
			c.Cell, c.Check, c.Detail = Check, ch.Name, ch.Detail
			return c
		}
	}
	for _, b := range s.Breaks {
		if b.EngineFinding {
			c.Cell, c.Check, c.Detail = Finding, "BREAK "+b.Name, b.Detail
			return c
		}
	}
	// A BREAK that did not prove comes first: the checks it leaves
	// unproven are its consequence.
	for _, b := range s.Breaks {
		if !b.Failed && b.Side != "oracle" {
			c.Cell, c.Check, c.Detail = Break, "BREAK "+b.Name, b.Detail
			if b.Outcome == result.CouldNotRun || b.Outcome == result.CouldNotUndo {
				c.Cell = Error
			}
			return c
		}
	}
	for _, ch := range s.Checks {
		if ch.Verdict == result.Unproven {
			c.Cell, c.Check, c.Detail = Break, ch.Name, "unproven: no BREAK made it fail"
			return c
		}
	}
	c.Cell, c.Detail = Error, couldNotFinish(s.Detail)
	return c
}

// couldNotFinish keeps the runner's "could not finish" part of a detail.
func couldNotFinish(detail string) string {
	if i := strings.Index(detail, "The stage could not finish:"); i >= 0 {
		return strings.TrimSpace(detail[i:])
	}
	return detail
}

// Score decides a mutant's row from its run (nil with runErr when the run
// could not happen).
func Score(m Mutant, res *result.Run, runErr error) Row {
	row := Row{Mutant: m}
	if runErr != nil {
		row.Status, row.Why = Machinery, "the run could not happen: "+runErr.Error()
		return row
	}
	row.Duration = res.Duration
	var unrelated, broken, other []StageCell
	for _, s := range res.Stages {
		c := Classify(s)
		row.Stages = append(row.Stages, c)
		expected := slices.Contains(m.Expect, s.ID)
		switch {
		case c.Cell.caught() && expected && row.KilledBy == "":
			check, f, ok := m.caughtBy(s)
			if !ok {
				other = append(other, c)
				continue
			}
			row.KilledBy, row.Check, row.Detail, row.Finding = s.ID, check, c.Detail, f
		case c.Cell.caught() && !expected:
			unrelated = append(unrelated, c)
		case c.Cell == Break || c.Cell == Error:
			broken = append(broken, c)
		}
	}
	if res.Cancelled != nil {
		row.Status, row.Why = Machinery, "the run was cancelled ("+res.Cancelled.Signal+")"
		return row
	}
	switch {
	case row.KilledBy != "":
		row.Status = Killed
	case len(other) > 0:
		row.Status = OtherCause
		row.Why = fmt.Sprintf("%s failed %s, but with no finding of the kind this mutant causes (%s): %s", other[0].Stage, other[0].Check, m.causes(), other[0].Detail)
	case len(unrelated) > 0:
		row.Status = Unrelated
		row.Why = fmt.Sprintf("caught only by %s, which it does not name (%s: %s)", unrelated[0].Stage, unrelated[0].Check, unrelated[0].Detail)
	case len(broken) > 0:
		row.Status = Machinery
		row.Why = fmt.Sprintf("no check failed; %s failed by %s: %s", broken[0].Stage, broken[0].Cell, firstOf(broken[0]))
	default:
		row.Status = Survived
		row.Why = "every stage it names (" + strings.Join(m.Expect, ", ") + ") " + expectedVerdicts(row.Stages, m.Expect)
	}
	return row
}

func firstOf(c StageCell) string {
	if c.Check != "" {
		return c.Check + ": " + c.Detail
	}
	return c.Detail
}

// expectedVerdicts says what the expected stages did, e.g. "passed".
func expectedVerdicts(cells []StageCell, expect []string) string {
	var parts []string
	for _, c := range cells {
		if slices.Contains(expect, c.Stage) {
			s := c.Stage + " " + string(c.Cell)
			if (c.Cell == NotRun || c.Cell == NotApplicable) && c.Detail != "" {
				s += " (" + c.Detail + ")"
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "was not in the run"
	}
	return "did not catch it: " + strings.Join(parts, "; ")
}

// StopAfter is the early stop for a mutant's run: once one of its
// expected stages caught it by its cause, the rest of the run cannot
// change the row.
func StopAfter(m Mutant) func(result.Stage) bool {
	return func(s result.Stage) bool {
		if !slices.Contains(m.Expect, s.ID) || !Classify(s).Cell.caught() {
			return false
		}
		_, _, ok := m.caughtBy(s)
		return ok
	}
}

// caughtBy finds the kill in a stage that caught the mutant: a failed
// check with a subject-side finding of a field the mutant causes (its
// Finds; any finding when it names none), or a BREAK that found the
// engine out. A check that failed only by a measurement error, or only on
// the oracle's side, is no kill.
func (m Mutant) caughtBy(s result.Stage) (check, finding string, ok bool) {
	for _, ch := range s.Checks {
		if ch.Verdict != result.Fail {
			continue
		}
		for i := range ch.Findings {
			f := &ch.Findings[i]
			if f.Side == "oracle" || (len(m.Finds) > 0 && !slices.Contains(m.Finds, f.Field)) {
				continue
			}
			return ch.Name, f.Error(), true
		}
	}
	for _, b := range s.Breaks {
		if b.EngineFinding {
			return "BREAK " + b.Name, b.Detail, true
		}
	}
	return "", "", false
}

// causes names the findings a mutant causes, for a row's why.
func (m Mutant) causes() string {
	if len(m.Finds) == 0 {
		return "any finding"
	}
	return "a finding on " + strings.Join(m.Finds, " or ")
}

// Matrix is the kill matrix of one estate.
type Matrix struct {
	Estate    string        `json:"estate"`
	Substrate string        `json:"substrate"`
	Engine    string        `json:"engine"`
	AllStages bool          `json:"all_stages"`
	Rows      []Row         `json:"rows"`
	Duration  time.Duration `json:"duration_ns"`
	StartedAt time.Time     `json:"started_at"`
}

// Score is the mutation score: killed mutants of all.
func (m *Matrix) Score() (killed, total int) {
	for _, r := range m.Rows {
		if r.Status == Killed {
			killed++
		}
	}
	return killed, len(m.Rows)
}

// Err is nil when every mutant was killed by a stage it names; else it
// lists the defects of the gauntlet the matrix found.
func (m *Matrix) Err() error {
	var bad []string
	for _, r := range m.Rows {
		if r.Status != Killed {
			bad = append(bad, r.Name+" "+string(r.Status))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	k, n := m.Score()
	return fmt.Errorf("mutation score %d/%d: %s", k, n, strings.Join(bad, ", "))
}
