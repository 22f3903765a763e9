package stage

import (
	"context"
	"fmt"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

func driftReconverge() Stage {
	return &driftStage{info{id: "drift_reconverge", title: "Drift and reconverge", headline: true, reqs: []string{"GAUNT-DRIFT-01"}, after: []string{"migrate"}}}
}

type driftStage struct{ info }

// Run tampers one object out of band on both clusters: each plan must
// propose exactly that object, the same shape on both; one apply
// reconverges and the field reads back.
func (s *driftStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	d := r.Spec.Drift
	if d == nil {
		return fmt.Errorf("the estate has no drift section")
	}
	live, err := r.servedBy(ctx, rec, d.Object)
	if err != nil {
		return err
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Patch(ctx, d.Object, d.Patch) }); err != nil {
		return err
	}
	live.drifted(ctx, r, rec)
	want := map[string]string{d.Address: "update"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("plan proposes exactly the tampered object", exactly(subj, want), subj.Counts.String()) {
		return nil
	}
	rec.Check("same as the oracle", sameShape(subj, orc), "stock proposes the same for the same tamper")
	rec.Say("%s tampered with a JSON patch (%s); %s proposed exactly %s (%s), matching stock's plan on the oracle cluster for the same tamper",
		d.Object, d.Field, r.Subject.Engine.Engine.Profile.Name, d.Address, subj.Counts)

	if err := rec.Break("second_object", "tampers "+d.Break.Object.String()+" too", func() (error, error) {
		if err := r.Subject.Patch(ctx, d.Break.Object, d.Break.Patch); err != nil {
			return nil, err
		}
		p, err := r.Subject.plan(ctx, planDefaults())
		if err != nil {
			return nil, err
		}
		return exactly(p, want), nil
	}); err != nil {
		return err
	}

	a, _, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		u, err := sd.Get(ctx, d.Object)
		if err != nil || u == nil {
			return fmt.Errorf("read %s back: %v", d.Object, err)
		}
		got, err := field(u, d.Field)
		if err != nil {
			return err
		}
		if got != d.Want {
			return fmt.Errorf("%s reads %q after the apply, want %q", d.Field, got, d.Want)
		}
		return sd.planEmpty(ctx)
	}); err != nil {
		rec.Check("reconverged", err, "")
		return nil
	}
	rec.Check("reconverged", nil, d.Field+" = "+d.Want)
	rec.Say("apply (%s, the BREAK's second tamper included) reconverged: %s reads %s again and the next plan is empty on both sides", a, d.Field, d.Want)
	live.reconverged(ctx, r, rec)
	return nil
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
			rec.NotRun("APIService "+api.Ref.Name+" Available=True again after the reconverging apply", noContainers)
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
// is the same assertion before the tamper; and the observation is the
// BREAK of the later "Available again" check.
func (l *driftLive) drifted(ctx context.Context, r *Run, rec *Recorder) {
	for _, api := range l.apis {
		name := api.Ref.Name
		states, err := bothAvailable(ctx, r, api.Ref, false)
		if !rec.Check("APIService "+name+" goes Available=False while drifted", err, states) {
			continue
		}
		rec.Say("with the drift live, APIService %s served by %s left Available=True: %s", name, l.object, states)
		before, state := l.before[name], l.state[name]
		rec.Break("undrifted", "asserts Available=False on "+name+" as it was just before the tamper", func() (error, error) {
			if before == nil {
				return fmt.Errorf("Available=%s before the tamper: the drift is what takes it down", state), nil
			}
			return nil, nil // unavailable already: the assertion could not tell the drift
		})
		rec.Break("drifted", "asserts Available=True on "+name+" while the drift is live", func() (error, error) {
			_, err := apiServiceState(ctx, r.Subject, api.Ref)
			return err, nil
		})
	}
}

// reconverged checks that each APIService the drift took down is
// Available=True again on both clusters after the engines' applies.
func (l *driftLive) reconverged(ctx context.Context, r *Run, rec *Recorder) {
	for _, api := range l.apis {
		states, err := bothAvailable(ctx, r, api.Ref, true)
		if rec.Check("APIService "+api.Ref.Name+" Available=True again after the reconverging apply", err, states) {
			rec.Say("after the reconverging applies APIService %s is Available=True again: %s", api.Ref.Name, states)
		}
	}
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
