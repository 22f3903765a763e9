package result

import "fmt"

// Assessment sorts a run's stages and checks by what stands between the
// run and "clear". It is the one place that decides: the CLI's exit code,
// the evidence page, run.json and JUnit all read it.
type Assessment struct {
	// Headline counts the headline stages.
	Headline int
	// Failed are headline stages whose verdict is fail, cancelled or one
	// this package does not know (never taken for a pass).
	Failed []Stage
	// NotRun are headline stages that did not run.
	NotRun []Stage
	// NotApplicable are headline stages the estate's shape cannot carry:
	// they do not cost the clear, but every reader is told which and why.
	NotApplicable []Stage
	// Limitations are headline stages that failed only where stock fails
	// the same way: not the engine's fail, never a pass either.
	Limitations []Stage
	// Unproven are headline stages marked pass that something inside
	// contradicts (a failed or unproven check, a BREAK that did not prove).
	Unproven []UnprovenStage
	// Outside are non-headline stages that failed: they do not cost the
	// run its "clear", but every reader is told.
	Outside []Stage
	// OracleFindings are the checks stock alone broke, each a promise the
	// engine under test kept (OracleFinding): they do not cost the clear,
	// and every reader is told, as stock's.
	OracleFindings []CheckNotRun
	// ChecksNotRun are the checks of passing stages that did not run,
	// e.g. on a substrate without containers. A clear run says how many.
	ChecksNotRun []CheckNotRun
	// Aborted are headline stages stopped by a machinery error: every
	// check they would have recorded after it did not run, so the run
	// is short of checks it cannot name, as well as failed.
	Aborted []AbortedStage
	// Cancelled is the run's cancellation, if any.
	Cancelled *Cancellation
	// Sabotaged is set for a run whose BREAKs skipped their corruptions.
	Sabotaged bool
}

// UnprovenStage is a passing stage with the reasons it cannot be backed.
type UnprovenStage struct {
	Stage Stage
	Why   []string
}

// AbortedStage is a stage an error stopped: Recorded checks were
// measured before it, the rest never ran.
type AbortedStage struct {
	Stage    string `json:"stage"`
	Recorded int    `json:"recorded"`
	Reason   string `json:"reason"`
}

// CheckNotRun is one check that did not run, with its stage and reason;
// for an oracle finding, the reason is what stock did.
type CheckNotRun struct {
	Stage  string `json:"stage"`
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// Assess sorts the run.
func (r *Run) Assess() Assessment {
	a := Assessment{Cancelled: r.Cancelled, Sabotaged: r.Sabotaged}
	for _, s := range r.Stages {
		if !s.Headline {
			if s.Verdict != Pass && s.Verdict != NotRun && s.Verdict != NotApplicable {
				a.Outside = append(a.Outside, s)
			}
			continue
		}
		a.Headline++
		for _, c := range s.Checks {
			if c.Verdict == OracleFinding {
				a.OracleFindings = append(a.OracleFindings, CheckNotRun{Stage: s.ID, Check: c.Name, Reason: c.Detail})
			}
		}
		if s.Aborted != "" {
			a.Aborted = append(a.Aborted, AbortedStage{Stage: s.ID, Recorded: len(s.Checks), Reason: s.Aborted})
		}
		switch s.Verdict {
		case Pass:
			if why := Contradictions(s); len(why) > 0 {
				a.Unproven = append(a.Unproven, UnprovenStage{Stage: s, Why: why})
			}
			for _, c := range s.Checks {
				if c.Verdict == NotRun {
					a.ChecksNotRun = append(a.ChecksNotRun, CheckNotRun{Stage: s.ID, Check: c.Name, Reason: c.Detail})
				}
			}
		case NotRun:
			a.NotRun = append(a.NotRun, s)
		case NotApplicable:
			a.NotApplicable = append(a.NotApplicable, s)
		case Limitation:
			a.Limitations = append(a.Limitations, s)
		default:
			a.Failed = append(a.Failed, s)
		}
	}
	return a
}

// Clear is the run's verdict: at least one headline stage that applies
// to the estate, every one of them passed and backed by its checks and
// BREAKs, and not cancelled. A limitation is not the engine's fail, but
// it is no pass either. Checks not run on the substrate and stages the
// estate's shape cannot carry do not cost the clear, but ChecksNotRun and
// NotApplicable carry them so no reader takes such a run for a full one.
func (a Assessment) Clear() bool {
	return a.Cancelled == nil && !a.Sabotaged && a.Headline > len(a.NotApplicable) && len(a.Failed) == 0 && len(a.NotRun) == 0 && len(a.Limitations) == 0 && len(a.Unproven) == 0 && len(a.Aborted) == 0
}

// Clear reports whether the run is clear (see Assessment.Clear).
func (r *Run) Clear() bool { return r.Assess().Clear() }

// Failed lists the stages that failed.
func (r *Run) Failed() []Stage {
	var out []Stage
	for _, s := range r.Stages {
		if s.Verdict == Fail {
			out = append(out, s)
		}
	}
	return out
}

// Contradictions lists what, inside a stage marked pass, says otherwise:
// a check that failed or is unproven, or a BREAK that did not prove.
func Contradictions(s Stage) []string {
	var why []string
	for _, b := range s.Breaks {
		switch {
		case b.Side == "oracle":
		case b.EngineFinding:
			why = append(why, "BREAK "+b.Name+" is an engine finding")
		case b.Outcome != Proved:
			why = append(why, fmt.Sprintf("BREAK %s %s", b.Name, orUnknown(string(b.Outcome))))
		}
	}
	for _, c := range s.Checks {
		switch c.Verdict {
		case Pass, OracleFinding:
			if len(c.ProvedBy) == 0 && c.NoBreak == "" {
				why = append(why, "check "+c.Name+" has no proof")
			}
		case NotRun:
		case Unproven:
			why = append(why, "check "+c.Name+" is unproven")
		default:
			why = append(why, fmt.Sprintf("check %s: %s", c.Name, c.Verdict))
		}
	}
	return why
}

func orUnknown(s string) string {
	if s == "" {
		return "has no outcome"
	}
	return s
}
