package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func driftReconverge() Stage {
	return &driftStage{Described{Info{ID: "drift_reconverge", Title: "Drift and reconverge", Headline: true, Requirements: []string{"GAUNT-DRIFT-01"}, After: []string{"migrate"}}}}
}

type driftStage struct{ Described }

// Run tampers one object out of band on both clusters: each plan must
// propose exactly that object, the same shape on both; one apply changes
// exactly that object, the field reads back and the next plan is empty.
func (s *driftStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	d, err := r.driftPlan(ctx)
	if err != nil {
		return err
	}
	live, err := r.servedBy(ctx, rec, d.Object)
	if err != nil {
		return err
	}
	tamper := func(ctx context.Context, sd *Side) error { return sd.Patch(ctx, d.Object, d.Patch) }
	untamper := func(ctx context.Context, sd *Side) error {
		return sd.Patch(ctx, d.Object, restoreField(d.Patch, d.Want))
	}
	if err := r.both(ctx, tamper); err != nil {
		return err
	}
	live.drifted(ctx, r, rec, untamper, tamper)
	const (
		exact    = "plan proposes exactly the tampered object"
		same     = "same as the oracle"
		applied  = "the apply changed exactly the tampered object"
		readback = "the tampered field reads back"
		next     = "next plan empty"
	)
	want := map[string]string{d.Address: "update"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	rec.Check(exact, sides(exact, exactly(subj, want), exactly(orc, want)), subj.Counts.String())
	rec.Check(same, onSubject(sameShape(subj, orc)), "stock proposes the same for the same tamper")
	rec.Claim([]string{exact, same}, "%s tampered with a JSON patch (%s); %s proposed exactly %s (%s), matching stock's plan on the oracle cluster for the same tamper",
		d.Object, d.Field, r.Subject.Engine.Engine.Profile.Name, d.Address, subj.Counts)
	second := d.Break.Object
	secondUndo := reverseReplace(ctx, r, second, d.Break.Patch)
	r.breakBoth(ctx, rec, Breaking{Name: "second_object", Corruption: "tampers " + second.String() + " too",
		Victim: secondAddress(r, second), Covers: []string{exact, same}, Predict: []result.Prediction{planPredict(secondAddress(r, second), "update")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := secondUndo(ctx, sd)
		if err != nil {
			return nil, err
		}
		if err := corrupt(ctx, func() error { return sd.Patch(ctx, second, d.Break.Patch) }); err != nil {
			return nil, err
		}
		p, err := sd.plan(ctx, planDefaults())
		var m Measured
		if err == nil {
			m = Measured{exact: exactly(p, want), same: sameShape(p, plans[otherSide(sd)])}
		}
		return undoing(m, err, func() error { return sd.Patch(ctx, second, undo) })
	})

	// The world holds the stage's own tamper alone: reconverge it.
	a, o, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	changedOne := func(a engine.Applied) error { return actedExactly(a, map[string]string{d.Address: "modifications"}) }
	rec.Check(applied, sides(applied, changedOne(a), changedOne(o)), a.String())
	readBack := func(ctx context.Context, sd *Side) error {
		u, err := sd.Get(ctx, d.Object)
		if err != nil {
			return err
		}
		if !exists(u) {
			return &result.Finding{Address: d.Address, Object: d.Object.String(), Field: fieldExists, Want: present, Got: absent}
		}
		got, err := field(u, d.Field)
		if err != nil {
			return measure(sd, "read "+d.Field+" of "+d.Object.String(), err)
		}
		if got != d.Want {
			return &result.Finding{Address: d.Address, Object: d.Object.String(), Field: d.Field, Want: d.Want, Got: got}
		}
		return nil
	}
	rec.Check(readback, r.both(ctx, readBack), d.Field+" = "+d.Want)
	r.breakBoth(ctx, rec, Breaking{Name: "retamper", Corruption: "applies the tamper to " + d.Object.String() + " again after the apply",
		Victim: d.Field, Covers: []string{readback},
		Predict: []result.Prediction{{Object: d.Object.String(), Field: d.Field, Got: tamperedValue(d.Patch)}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := corrupt(ctx, func() error { return tamper(ctx, sd) }); err != nil {
			return nil, err
		}
		m := one(readback, readBack(ctx, sd))
		return undoing(m, nil, func() error { return untamper(ctx, sd) })
	})
	r.breakBoth(ctx, rec, Breaking{Name: "two_tampers_applied", Corruption: "tampers " + d.Object.String() + " and " + second.String() + ", then applies",
		Victim: secondAddress(r, second), Covers: []string{applied}, Predict: []result.Prediction{appliedPredict(secondAddress(r, second), "modifications")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := tamper(ctx, sd); err != nil {
			return nil, err
		}
		if err := corrupt(ctx, func() error { return sd.Patch(ctx, second, d.Break.Patch) }); err != nil {
			return nil, err
		}
		// The apply measures and reconverges both objects.
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{})
		if err != nil {
			return nil, err
		}
		return one(applied, changedOne(a)), readBack(ctx, sd)
	})
	r.CheckPlanEmpty(ctx, rec, next, r.victim())
	rec.Claim([]string{applied, readback, next}, "the apply changed exactly %s (%s, stock %s), %s reads %s again and the next plan is empty on both sides", d.Address, a, o, d.Field, d.Want)
	live.reconverged(ctx, r, rec)
	return nil
}

// secondAddress is the address of the estate's object o, for a BREAK that
// tampers it: the plan names it by address.
func secondAddress(r *Run, o estate.Object) string {
	for _, obj := range r.Objects {
		if sameObject(obj.Ref, o) {
			return obj.Address
		}
	}
	return o.String()
}

// tamperedValue is the value the tamper's last replace operation writes,
// as field reads it back.
func tamperedValue(patch string) string {
	var ops []map[string]any
	_ = json.Unmarshal([]byte(patch), &ops)
	out := ""
	for _, op := range ops {
		if op["op"] == "replace" {
			out = fmt.Sprint(op["value"])
		}
	}
	return out
}

// restoreField turns the tamper's JSON patch into the patch that sets each
// replaced path back to want.
func restoreField(patch, want string) string {
	var ops []map[string]any
	if err := json.Unmarshal([]byte(patch), &ops); err != nil {
		return "[]"
	}
	var out []map[string]any
	for _, op := range ops {
		if op["op"] != "replace" {
			continue
		}
		// want is read back as text; a tamper of a number or a bool (a
		// Service's port) is put back as one, else the API server refuses
		// the undo.
		var v any = want
		if _, text := op["value"].(string); !text {
			if err := json.Unmarshal([]byte(want), &v); err != nil {
				v = want
			}
		}
		out = append(out, map[string]any{"op": "replace", "path": op["path"], "value": v})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// reverseReplace reads, on a side, the values a JSON patch's replace
// operations will overwrite and returns the patch that puts them back.
func reverseReplace(_ context.Context, r *Run, o estate.Object, patch string) func(context.Context, *Side) (string, error) {
	return func(ctx context.Context, sd *Side) (string, error) {
		var ops []map[string]any
		if err := json.Unmarshal([]byte(patch), &ops); err != nil {
			return "", fmt.Errorf("BREAK patch: %w", err)
		}
		u, err := sd.Get(ctx, o)
		if err != nil || u == nil {
			return "", fmt.Errorf("read %s: %v", o, cmpErr(err, "not found"))
		}
		var out []map[string]any
		for _, op := range ops {
			path, _ := op["path"].(string)
			v, ok := pointer(u.Object, path)
			if op["op"] != "replace" || !ok {
				return "", fmt.Errorf("BREAK patch of %s: only replace operations on existing paths can be undone (%v)", o, op)
			}
			out = append(out, map[string]any{"op": "replace", "path": path, "value": v})
		}
		b, err := json.Marshal(out)
		return string(b), err
	}
}

// pointer resolves a JSON pointer in an object.
func pointer(obj map[string]any, ptr string) (any, bool) {
	var cur any = obj
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// driftLive is what the drift does to the live world where containers run:
// the estate's APIServices whose backend is the tampered object, and how
// each looked before the tamper.
type driftLive struct {
	object estate.Object
	apis   []Object
	before map[string]error // apiServiceState's verdict before the tamper
	state  map[string]string
}

// servedBy finds, on a substrate that runs containers, the estate's
// APIServices the drifted object serves; elsewhere it records the live
// checks as not run.
func (r *Run) servedBy(ctx context.Context, rec *Recorder, obj estate.Object) (*driftLive, error) {
	l := &driftLive{object: obj, before: map[string]error{}, state: map[string]string{}}
	for _, api := range r.apiServices() {
		if !r.Substrate.ContainersRun {
			rec.NotRun("APIService "+api.Ref.Name+" goes Available=False while drifted", noContainers)
			continue
		}
		b, err := r.backend(ctx, r.Subject, api.Ref)
		if err != nil {
			return nil, err
		}
		if b == nil || !sameObject(b.Ref, obj) {
			rec.NotRun("APIService "+api.Ref.Name+" goes Available=False while drifted", "the drift does not touch its backend")
			continue
		}
		l.apis = append(l.apis, api)
		l.state[api.Ref.Name], l.before[api.Ref.Name] = apiServiceState(ctx, r.Subject, api.Ref)
	}
	return l, nil
}

// sameObject compares identities, whatever API version names them.
func sameObject(a, b estate.Object) bool {
	return a.Group == b.Group && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// drifted checks, with the tamper live on both clusters, that each
// APIService the tampered object serves leaves Available=True. Its BREAK
// takes the tamper back on the subject and lets the backend serve again
// (the corruption: the world the check measures is no longer drifted),
// then runs the check's own predicate - the same wait, the same bound -
// which must report the APIService still Available=True; the tamper is
// then made again.
func (l *driftLive) drifted(ctx context.Context, r *Run, rec *Recorder, untamper, tamper func(context.Context, *Side) error) {
	for _, api := range l.apis {
		name := api.Ref.Name
		check := "APIService " + name + " goes Available=False while drifted"
		states, err := bothAvailable(ctx, r, api.Ref, false)
		rec.Check(check, err, states)
		rec.Claim([]string{check}, "with the drift live, APIService %s served by %s left Available=True: %s", name, l.object, states)
		r.breakSubject(ctx, rec, Breaking{Name: "undrifted", Corruption: "takes the tamper back on " + l.object.String() + " and lets its APIService serve again while the check expects the drift",
			Victim: name, Covers: []string{check}, Predict: []result.Prediction{{Object: api.Ref.String(), Field: fieldAvailable, Got: "True"}}},
			func(ctx context.Context, sd *Side) (Measured, error) {
				untampered := false
				if err := corrupt(ctx, func() error {
					untampered = true
					if err := untamper(ctx, sd); err != nil {
						return err
					}
					_, err := waitAvailable(ctx, sd, api.Ref, true, apiServiceWait)
					return err
				}); err != nil {
					return nil, err
				}
				_, err := waitAvailable(ctx, sd, api.Ref, false, apiServiceWait)
				return undoing(one(check, err), nil, func() error {
					if !untampered {
						return nil // the undo takes back only what the corruption did
					}
					if err := tamper(ctx, sd); err != nil {
						return err
					}
					_, err := waitAvailable(ctx, sd, api.Ref, false, apiServiceWait)
					return err
				})
			})
	}
}

// reconverged checks that each of the estate's APIServices is
// Available=True again, and answers discovery, after the engines' applies.
func (l *driftLive) reconverged(ctx context.Context, r *Run, rec *Recorder) {
	r.availability(ctx, rec, "again after the reconverging apply")
}

// bothAvailable waits on both clusters for the APIService's availability
// to become want and says what each reached.
func bothAvailable(ctx context.Context, r *Run, ref estate.Object, want bool) (string, error) {
	var mu sync.Mutex
	states := map[string]string{}
	err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		st, err := waitAvailable(ctx, sd, ref, want, apiServiceWait)
		mu.Lock()
		states[sd.Name] = st
		mu.Unlock()
		return err
	})
	return states["subject"] + "; " + states["oracle"], err
}
