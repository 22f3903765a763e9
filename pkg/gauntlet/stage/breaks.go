package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A BREAK's run on one side: corrupt the world, the state or the input,
// measure the covered checks again, and undo the corruption before the
// stage's next real step. The undo's error is the BREAK's own error.
type breakFunc func(ctx context.Context, sd *Side) (Measured, error)

// breakBoth runs a BREAK on the subject and, at the same time, replays it
// on the oracle: a BREAK that holds on the subject but fails stock's
// checks is an engine finding, not a weak check; one that holds on both
// is a check that proves nothing.
func (r *Run) breakBoth(ctx context.Context, rec *Recorder, b Breaking, f breakFunc) {
	ctx = r.breakContext(ctx)
	b.Name = rec.uniqueBreak(b.Name)
	m := map[string]Measured{}
	errs := map[string]error{}
	_ = r.both(ctx, func(ctx context.Context, sd *Side) error {
		got, err := f(ctx, sd)
		r.mu.Lock()
		m[sd.Name], errs[sd.Name] = got, err
		r.mu.Unlock()
		return nil
	})
	subj := rec.recordBreak(b, "subject", b.Covers, b.Covers, m["subject"], errs["subject"])
	orc := rec.recordBreak(b, "oracle", append(append([]string(nil), b.Covers...), b.OracleCovers...), b.OracleCovers, m["oracle"], errs["oracle"])
	rec.addBreak(b, subj, orc, true)
}

// breakSubject runs a BREAK on the subject only, for corruptions that
// cannot be replayed on stock (say why at the call).
func (r *Run) breakSubject(ctx context.Context, rec *Recorder, b Breaking, f breakFunc) {
	ctx = r.breakContext(ctx)
	b.Name = rec.uniqueBreak(b.Name)
	m, err := f(ctx, r.Subject)
	subj := rec.recordBreak(b, "subject", b.Covers, b.Covers, m, err)
	rec.addBreak(b, subj, result.Break{}, false)
}

// sabotageKey marks a BREAK's context in a sabotaged run.
type sabotageKey struct{}

// breakContext marks ctx when the run is sabotaged: every corruption is
// skipped, every measurement still made.
func (r *Run) breakContext(ctx context.Context) context.Context {
	if r.Sabotage {
		return context.WithValue(ctx, sabotageKey{}, true)
	}
	return ctx
}

// sabotaged reports whether this BREAK's corruption is to be skipped.
func sabotaged(ctx context.Context) bool { return ctx.Value(sabotageKey{}) != nil }

// corrupt makes a BREAK's corruption - unless the run is sabotaged, where
// it does nothing, so the measurement after it sees an untouched world: a
// BREAK whose checks still fail then is tautological.
func corrupt(ctx context.Context, f func() error) error {
	if sabotaged(ctx) {
		return nil
	}
	return f()
}

// one is a Measured for a single check.
func one(check string, err error) Measured { return Measured{check: err} }

// undoing runs undo after a measurement and joins its error: a BREAK whose
// corruption could not be undone could not run.
func undoing(m Measured, err error, undo func() error) (Measured, error) {
	if uerr := undo(); uerr != nil {
		if err == nil {
			err = fmt.Errorf("undo: %w", uerr)
		}
	}
	return m, err
}

// checkPlanEmpty plans on both sides and checks that nothing is proposed.
// Its BREAK deletes victim out of band: the plan must then propose it.
func (r *Run) checkPlanEmpty(ctx context.Context, rec *Recorder, check string, victim Object) bool {
	ok := rec.Check(check, r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.planEmpty(ctx) }), "on both sides")
	r.breakBoth(ctx, rec, Breaking{Name: "delete_before_replan", Corruption: "deletes " + victim.Ref.String() + " out of band before the plan",
		Victim: victim.Address, Covers: []string{check}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, victim.Ref, func() (Measured, error) {
			p, err := sd.plan(ctx, planDefaults())
			if err != nil {
				return nil, err // the plan did not run: no measurement
			}
			return one(check, empty(p)), nil
		})
	})
	return ok
}

// victim is the object BREAKs delete or label when any of the estate's
// objects will do: a ServiceAccount or ConfigMap, which nothing waits on,
// else the last one.
func (r *Run) victim() Object {
	for _, kind := range []string{"ServiceAccount", "ConfigMap", "Service"} {
		for _, o := range r.Objects {
			if o.Ref.Kind == kind {
				return o
			}
		}
	}
	return r.Objects[len(r.Objects)-1]
}
