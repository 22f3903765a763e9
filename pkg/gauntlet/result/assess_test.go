package result

import (
	"strings"
	"testing"
)

func TestAssessIsTheOneVerdict(t *testing.T) {
	proven := Stage{ID: "migrate", Headline: true, Verdict: Pass,
		Checks: []Check{{Name: "plan is empty", Verdict: Pass, ProvedBy: []string{"state_rm"}},
			{Name: "APIService answers", Verdict: NotRun, Detail: "no kubelet"}},
		Breaks: []Break{{Name: "state_rm", Side: "subject", Outcome: Proved, Failed: true}}}
	clear := &Run{Stages: []Stage{proven}}
	if a := clear.Assess(); !a.Clear() || len(a.ChecksNotRun) != 1 || a.ChecksNotRun[0].Check != "APIService answers" {
		t.Errorf("a proven run: clear=%v, checks not run %v", a.Clear(), a.ChecksNotRun)
	}
	cases := map[string]*Run{
		"no stages":  {},
		"cancelled":  {Stages: []Stage{proven}, Cancelled: &Cancellation{Stage: "migrate", Signal: "interrupt"}},
		"sabotaged":  {Stages: []Stage{proven}, Sabotaged: true},
		"no proof":   {Stages: []Stage{withCheck(proven, Check{Name: "bare", Verdict: Pass})}},
		"unproven":   {Stages: []Stage{withCheck(proven, Check{Name: "bare", Verdict: Unproven})}},
		"held break": {Stages: []Stage{withBreak(proven, Break{Name: "weak", Side: "subject", Outcome: Held})}},
		"finding":    {Stages: []Stage{withBreak(proven, Break{Name: "f", Side: "subject", Outcome: Held, EngineFinding: true})}},
		"no outcome": {Stages: []Stage{withBreak(proven, Break{Name: "old", Failed: true})}},
	}
	for name, r := range cases {
		if r.Clear() {
			t.Errorf("%s: clear", name)
		}
	}
	// The oracle's replay of a BREAK informs; it never costs the clear.
	if r := (&Run{Stages: []Stage{withBreak(proven, Break{Name: "x", Side: "oracle", Outcome: CouldNotRun})}}); !r.Clear() {
		t.Errorf("an oracle-side replay made the run unclear: %v", Contradictions(r.Stages[0]))
	}
	if why := Contradictions(withCheck(proven, Check{Name: "bare", Verdict: Pass})); len(why) != 1 || !strings.Contains(why[0], "bare has no proof") {
		t.Errorf("contradictions %v", why)
	}
}

func withCheck(s Stage, c Check) Stage {
	s.Checks = append(append([]Check(nil), s.Checks...), c)
	return s
}

func withBreak(s Stage, b Break) Stage {
	s.Breaks = append(append([]Break(nil), s.Breaks...), b)
	return s
}

// A stage stock fails the same way is a limitation: listed on its own,
// never among the engine's fails, and the run is not clear (no pass).
func TestAssessLimitation(t *testing.T) {
	limited := Stage{ID: "drift", Headline: true, Verdict: Limitation,
		Checks: []Check{{Name: "the tamper is planned", Verdict: Limitation}}}
	a := (&Run{Stages: []Stage{limited}}).Assess()
	if a.Clear() || len(a.Failed) != 0 || len(a.Limitations) != 1 || a.Limitations[0].ID != "drift" {
		t.Errorf("clear %v, failed %v, limitations %v", a.Clear(), a.Failed, a.Limitations)
	}
}

// A headline stage the estate's shape cannot carry is listed on its own:
// never a fail, never a not_run, and the run stays clear when the rest
// passes - but not when nothing applies at all.
func TestAssessNotApplicable(t *testing.T) {
	proven := Stage{ID: "migrate", Headline: true, Verdict: Pass,
		Checks: []Check{{Name: "plan is empty", Verdict: Pass, ProvedBy: []string{"state_rm"}}},
		Breaks: []Break{{Name: "state_rm", Side: "subject", Outcome: Proved, Failed: true}}}
	remove := Stage{ID: "day2_remove", Title: "Remove a block", Headline: true, Verdict: NotApplicable,
		Reason: "the root has one object: a removal needs another object kept through it"}
	a := (&Run{Stages: []Stage{proven, remove}}).Assess()
	if !a.Clear() || len(a.NotApplicable) != 1 || a.NotApplicable[0].ID != "day2_remove" || len(a.NotRun) != 0 || len(a.Failed) != 0 {
		t.Errorf("clear %v, not applicable %v, not run %v, failed %v", a.Clear(), a.NotApplicable, a.NotRun, a.Failed)
	}
	if a := (&Run{Stages: []Stage{remove}}).Assess(); a.Clear() {
		t.Errorf("a run whose only headline stage is not applicable is clear")
	}
	notRun := remove
	notRun.Verdict = NotRun
	if a := (&Run{Stages: []Stage{proven, notRun}}).Assess(); a.Clear() || len(a.NotRun) != 1 {
		t.Errorf("a headline not_run: clear %v, not run %v", a.Clear(), a.NotRun)
	}
	// Outside the headline it is no failure either.
	outside := remove
	outside.Headline = false
	if a := (&Run{Stages: []Stage{proven, outside}}).Assess(); !a.Clear() || len(a.Outside) != 0 {
		t.Errorf("a non-headline not_applicable stage: clear %v, outside %v", a.Clear(), a.Outside)
	}
}
