package stage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// bothSides joins a subject's and an oracle's failures as Run.both does.
func bothSides(subject, oracle error) error {
	var errs []error
	if subject != nil {
		errs = append(errs, fmt.Errorf("subject: %w", result.Stamp(subject, "", "subject")))
	}
	if oracle != nil {
		errs = append(errs, fmt.Errorf("oracle: %w", result.Stamp(oracle, "", "oracle")))
	}
	return errors.Join(errs...)
}

// A check both sides fail with the same findings is a limitation stock
// shares, not the engine's fail: the stage is neither failed nor passed,
// and what the shared behaviour keeps from proving is its consequence. A
// check only the subject fails, a different finding on stock, or an engine
// finding still fail the stage.
func TestRecorderLimitation(t *testing.T) {
	const drift, other = "the tamper is planned", "the plan is empty"
	undetected := func() error {
		return &result.Finding{Address: "kubernetes_manifest.a", Field: "plan", Want: "update", Got: "no change"}
	}
	breakOn := func(rec *Recorder, covers string) {
		b := Breaking{Name: "tamper_" + covers, Covers: []string{covers},
			Predict: []result.Prediction{{Address: "kubernetes_manifest.a", Field: "plan", Got: "update"}}}
		rec.recordBreak(b, "subject", b.Covers, b.Covers, Measured{covers: undetected()}, nil)
	}

	rec := NewRecorder()
	rec.Check(drift, bothSides(undetected(), undetected()), "")
	breakOn(rec, drift)
	if rec.Failed() || !rec.Limited() {
		t.Errorf("both sides the same: failed %v, limited %v; want a limitation", rec.Failed(), rec.Limited())
	}
	var st result.Stage
	rec.Fill(&st)
	if st.Checks[0].Verdict != result.Limitation || len(st.Checks[0].Findings) != 2 {
		t.Errorf("check %+v", st.Checks[0])
	}

	// Beside a limitation, a check left unproven (its BREAK needs the
	// drift stock misses too) is the limitation's consequence: still a
	// limitation, never a pass.
	rec.Check(other, nil, "fine")
	if rec.Failed() || !rec.Limited() {
		t.Errorf("an unproven check beside a limitation: failed %v, limited %v", rec.Failed(), rec.Limited())
	}
	// An engine finding (held on the subject, proved on stock) is the
	// engine's fail whatever else the stage holds.
	rec.breaks = append(rec.breaks, result.Break{Name: "missed", Side: "subject", Outcome: result.Held, EngineFinding: true})
	if !rec.Failed() {
		t.Error("an engine finding beside a limitation did not fail the stage")
	}
	// Without a limitation, a BREAK aimed at a passing check that did not
	// prove fails the stage.
	rec = NewRecorder()
	rec.Check(other, nil, "fine")
	breakOn(rec, other)
	if !rec.Failed() {
		t.Error("a BREAK on a passing check held, yet the stage did not fail")
	}

	for name, err := range map[string]error{
		"the subject alone":     bothSides(undetected(), nil),
		"stock finds otherwise": bothSides(undetected(), &result.Finding{Address: "kubernetes_manifest.a", Field: "plan", Want: "update", Got: "replace"}),
		"a measurement error":   bothSides(undetected(), result.Measure("plan", errors.New("exit 1"))),
		"a parity finding":      undetected(),
	} {
		rec := NewRecorder()
		rec.Check(drift, err, "")
		if !rec.Failed() || rec.Limited() {
			t.Errorf("%s: failed %v, limited %v; want the engine's fail", name, rec.Failed(), rec.Limited())
		}
	}

	// Measured again: a round that is the engine's fail makes it one.
	rec = NewRecorder()
	rec.Check(drift, bothSides(undetected(), undetected()), "")
	rec.Check(drift, bothSides(undetected(), nil), "")
	if !rec.Failed() {
		t.Error("a limitation then a subject-only failure is not a fail")
	}
}
