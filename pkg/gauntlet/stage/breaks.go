package stage

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
		got, err := r.guarded(ctx, sd, f)
		r.mu.Lock()
		m[sd.Name], errs[sd.Name] = got, err
		r.mu.Unlock()
		return nil
	})
	rec.SummaryFinding(errs["subject"])
	subj := rec.recordBreak(b, "subject", b.Covers, b.Covers, m["subject"], errs["subject"])
	orc := rec.recordBreak(b, "oracle", append(append([]string(nil), b.Covers...), b.OracleCovers...), b.OracleCovers, m["oracle"], errs["oracle"])
	rec.addBreak(b, subj, orc, true)
}

// breakSubject runs a BREAK on the subject only, for corruptions that
// cannot be replayed on stock (say why at the call).
func (r *Run) breakSubject(ctx context.Context, rec *Recorder, b Breaking, f breakFunc) {
	ctx = r.breakContext(ctx)
	b.Name = rec.uniqueBreak(b.Name)
	m, err := r.guarded(ctx, r.Subject, f)
	rec.SummaryFinding(err)
	subj := rec.recordBreak(b, "subject", b.Covers, b.Covers, m, err)
	rec.addBreak(b, subj, result.Break{}, false)
}

// guarded runs one side of a BREAK; a panic inside it is a measurement
// error with its stack - the BREAK could not run - never a silent
// "not measured". The side's world key is read before and after: an undo
// that did not give the world back is an *UndoError.
func (r *Run) guarded(ctx context.Context, sd *Side, f breakFunc) (m Measured, err error) {
	before, kerr := r.keyOf(ctx, sd)
	if kerr != nil {
		return nil, fmt.Errorf("read the world before the BREAK: %w", kerr)
	}
	m, err = guardedRun(ctx, sd, f)
	if err != nil {
		return m, err
	}
	after, kerr := r.keyOf(ctx, sd)
	if kerr != nil {
		return m, fmt.Errorf("read the world after the BREAK's undo: %w", kerr)
	}
	return m, compareKeys(sd.Name, before, after)
}

func guardedRun(ctx context.Context, sd *Side, f breakFunc) (m Measured, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, &result.MeasurementError{Side: sd.Name, Op: "the BREAK", Err: fmt.Errorf("panic: %v", p), Stack: string(debug.Stack())}
		}
	}()
	return f(ctx, sd)
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

// CheckPlanEmpty plans on both sides and checks that nothing is proposed.
// Its BREAK deletes victim out of band: the plan must then propose it.
func (r *Run) CheckPlanEmpty(ctx context.Context, rec *Recorder, check string, victim Object) bool {
	ok := rec.Check(check, r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.planEmpty(ctx) }), "on both sides")
	r.breakBoth(ctx, rec, Breaking{Name: "delete_before_replan", Corruption: "deletes " + victim.Ref.String() + " out of band before the plan",
		Victim: victim.Address, Covers: []string{check}, Predict: []result.Prediction{planPredict(victim.Address, "create")}},
		func(ctx context.Context, sd *Side) (Measured, error) {
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

// gather runs f on both sides at once and collects its results by side.
func gather[T any](ctx context.Context, r *Run, f func(ctx context.Context, sd *Side) (T, error)) (map[string]T, error) {
	var mu sync.Mutex
	out := map[string]T{}
	err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		v, err := f(ctx, sd)
		mu.Lock()
		out[sd.Name] = v
		mu.Unlock()
		return err
	})
	return out, err
}

// versionsBoth reads the objects' uids and resourceVersions on both sides.
func (r *Run) versionsBoth(ctx context.Context, objs []Object) (map[string]objVersions, error) {
	return gather(ctx, r, func(ctx context.Context, sd *Side) (objVersions, error) {
		return versions(ctx, sd, r.onSide(sd, objs))
	})
}

// checkReplaced checks that after a replace newObj exists and oldObj does
// not, on both sides. Its BREAK creates oldObj again out of band (from
// newObj's copy under the old name): the check must name it.
func (r *Run) checkReplaced(ctx context.Context, rec *Recorder, check string, oldObj, newObj Object) error {
	alone := func(ctx context.Context, sd *Side) error {
		var fs []*result.Finding
		for _, o := range []struct {
			obj  Object
			want string
		}{{newObj, present}, {oldObj, absent}} {
			u, err := sd.Get(ctx, o.obj.Ref)
			if err != nil {
				return err
			}
			if got := map[bool]string{true: present, false: absent}[exists(u)]; got != o.want {
				fs = append(fs, &result.Finding{Address: o.obj.Address, Object: o.obj.Ref.String(), Field: fieldExists, Want: o.want, Got: got})
			}
		}
		return result.Findings(fs...)
	}
	rec.Check(check, r.both(ctx, alone), newObj.Ref.String()+" alone, on both clusters")
	copies, err := gather(ctx, r, func(ctx context.Context, sd *Side) (*unstructured.Unstructured, error) {
		u, err := sd.Get(ctx, newObj.Ref)
		if err == nil && u == nil {
			err = fmt.Errorf("%s missing on %s", newObj.Ref, sd.Name)
		}
		return u, err
	})
	if err != nil {
		return err
	}
	r.breakBoth(ctx, rec, Breaking{Name: "old_back", Corruption: "creates the old " + oldObj.Ref.String() + " again out of band",
		Victim: oldObj.Ref.String(), Covers: []string{check}, Predict: []result.Prediction{existsPredict(oldObj, present)}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			u := copies[sd.Name].DeepCopy()
			u.SetName(oldObj.Ref.Name)
			if err := corrupt(ctx, func() error { return sd.Recreate(ctx, oldObj.Ref, u) }); err != nil {
				return nil, err
			}
			return undoing(one(check, alone(ctx, sd)), nil, func() error { return sd.Delete(ctx, oldObj.Ref) })
		})
	return nil
}
