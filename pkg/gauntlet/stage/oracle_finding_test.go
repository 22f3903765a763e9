package stage

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A promise stock alone breaks is the oracle's finding: the engine's side
// passed and its BREAK proved it, so the stage is neither failed nor a
// limitation, and a later round that passes does not wash it out. The
// same failure on a check that is no promise (a comparison) stays a
// limitation, and a promise the engine breaks is the engine's fail.
func TestRecorderOracleFinding(t *testing.T) {
	const promise, compared = "exits 0 on every repeat", "same as the oracle"
	broke := func() error {
		return &result.Finding{Object: refreshPlanName, Field: fieldRefreshExit, Want: "0 on every repeat", Got: "2 on 5 of 5 repeats"}
	}
	prove := func(rec *Recorder, covers string) {
		b := Breaking{Name: "break_" + covers, Covers: []string{covers},
			Predict: []result.Prediction{{Object: refreshPlanName, Field: fieldRefreshExit, Got: "2 on 5 of 5 repeats"}}}
		rec.recordBreak(b, "subject", b.Covers, b.Covers, Measured{covers: result.Stamp(broke(), covers, "subject")}, nil)
	}

	rec := NewRecorder()
	rec.Promise(promise)
	rec.Check(promise, bothSides(nil, broke()), "")
	rec.Check(promise, nil, "a second round passes on both")
	prove(rec, promise)
	if rec.Failed() || rec.Limited() {
		t.Errorf("stock alone broke a promise: failed %v, limited %v; want neither", rec.Failed(), rec.Limited())
	}
	var st result.Stage
	rec.Fill(&st)
	if c := st.Checks[0]; c.Verdict != result.OracleFinding || len(c.Findings) != 1 || c.Findings[0].Side != "oracle" || len(c.ProvedBy) != 1 {
		t.Errorf("check %+v: want the oracle's finding, kept through the passing round, proved", c)
	}
	run := result.Run{Stages: []result.Stage{{ID: "refresh_only", Headline: true, Verdict: result.Pass, Checks: st.Checks, Breaks: st.Breaks}}}
	if a := run.Assess(); !a.Clear() || len(a.OracleFindings) != 1 || a.OracleFindings[0].Check != promise {
		t.Errorf("assessment %+v: want clear, with the oracle's finding listed", a)
	}

	// Unproven on the engine's side: no BREAK proved the promise.
	rec = NewRecorder()
	rec.Promise(promise)
	rec.Check(promise, bothSides(nil, broke()), "")
	if !rec.Failed() {
		t.Error("an oracle's finding whose engine side no BREAK proved is unproven, and the stage fails")
	}

	// Not a promise: stock alone failing a comparison is a limitation.
	rec = NewRecorder()
	rec.Check(compared, bothSides(nil, broke()), "")
	prove(rec, compared)
	if rec.Failed() || !rec.Limited() {
		t.Errorf("stock alone failing a comparison: failed %v, limited %v; want a limitation", rec.Failed(), rec.Limited())
	}

	// The engine breaking the promise is the engine's fail, with stock or
	// without it.
	for _, oracle := range []error{nil, broke()} {
		rec = NewRecorder()
		rec.Promise(promise)
		rec.Check(promise, bothSides(broke(), oracle), "")
		prove(rec, promise)
		if oracle != nil {
			// Both sides the same: stock shares it.
			if rec.Failed() || !rec.Limited() {
				t.Errorf("both sides broke the promise alike: failed %v, limited %v; want a limitation", rec.Failed(), rec.Limited())
			}
			continue
		}
		if !rec.Failed() {
			t.Error("the engine alone broke the promise: want the engine's fail")
		}
	}
}
