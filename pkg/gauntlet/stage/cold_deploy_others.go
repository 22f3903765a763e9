package stage

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

const othersLive = "every object of the other roots is live, the same addresses on both sides"

// checkOthersCold reads the states of the roots applied around the acted
// one after the cold deploy: each must hold the same addresses on both
// sides, every object live. Its BREAK deletes one of them out of band.
func (r *Run) checkOthersCold(ctx context.Context, rec *Recorder) error {
	if len(r.Subject.Others) == 0 {
		return nil
	}
	objs, err := gather(ctx, r, func(ctx context.Context, sd *Side) (map[string][]Object, error) {
		out := map[string][]Object{}
		for _, o := range sd.Others {
			st, err := o.Stock.State(ctx)
			if err != nil {
				return nil, fmt.Errorf("root %s: %w", o.Root.Name, err)
			}
			got, err := objectsFromState(st)
			if err == nil {
				got, err = sd.settle(got)
			}
			if err != nil {
				return nil, fmt.Errorf("root %s: %w", o.Root.Name, err)
			}
			out[o.Root.Name] = got
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	live := func(ctx context.Context, sd *Side) error {
		var errs []error
		for _, o := range sd.Others {
			name := o.Root.Name
			if err := sameAddresses(objs["subject"][name], objs["oracle"][name]); err != nil {
				errs = append(errs, fmt.Errorf("root %s: %w", name, err))
			}
			miss, err := sd.Missing(ctx, objs[sd.Name][name])
			if err != nil {
				return err
			}
			for _, m := range miss {
				errs = append(errs, fmt.Errorf("root %s: %s is not on the %s cluster", name, m.Ref, sd.Name))
			}
		}
		return errors.Join(errs...)
	}
	var parts []string
	var victim *Object
	for _, o := range r.Subject.Others {
		got := objs["subject"][o.Root.Name]
		rec.Figure("objects."+o.Root.Name, len(got))
		parts = append(parts, fmt.Sprintf("root %s: %d objects (%s)", o.Root.Name, len(got), describe(got)))
		for i := range got {
			if victim == nil || got[i].Ref.Kind == "ConfigMap" && victim.Ref.Kind != "ConfigMap" {
				victim = &got[i]
			}
		}
	}
	rec.Figure("objects."+r.Subject.Root.Name, len(r.Objects))
	rec.Check(othersLive, r.both(ctx, live), strings.Join(parts, "; "))
	rec.Claim([]string{othersLive}, "%s, the same addresses in each side's state and every object live on both clusters", strings.Join(parts, "; "))
	if victim == nil {
		rec.NoBreak(othersLive, "the other roots manage no kubernetes object to delete")
		return nil
	}
	v := *victim
	r.breakBoth(ctx, rec, Breaking{Name: "delete_other", Corruption: "deletes " + v.Ref.String() + " of another root out of band",
		Victim: v.Ref.String(), Covers: []string{othersLive}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, v.Ref, func() (Measured, error) { return one(othersLive, live(ctx, sd)), nil })
	})
	return nil
}
