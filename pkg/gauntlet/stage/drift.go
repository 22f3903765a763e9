package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
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
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Patch(ctx, d.Object, d.Patch) }); err != nil {
		return err
	}
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
	return nil
}
