package stage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
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
	live := func(ctx context.Context, sd *Side, mine map[string][]Object) error {
		var errs []error
		for _, o := range sd.Others {
			name := o.Root.Name
			// This side's state against the other's: what this side
			// lacks reads absent.
			if err := sameAddresses(mine[name], objs[otherSide(sd)][name]); err != nil {
				errs = append(errs, fmt.Errorf("root %s: %w", name, err))
			}
			miss, err := sd.Missing(ctx, mine[name])
			if err != nil {
				return err
			}
			errs = append(errs, missingFindings(miss))
		}
		return errors.Join(errs...)
	}
	var parts []string
	for _, o := range r.Subject.Others {
		got := objs["subject"][o.Root.Name]
		rec.Figure("objects."+o.Root.Name, len(got))
		parts = append(parts, fmt.Sprintf("root %s: %d objects (%s)", o.Root.Name, len(got), describe(got)))
	}
	rec.Figure("objects."+r.Subject.Root.Name, len(r.Objects))
	rec.Check(othersLive, r.both(ctx, func(ctx context.Context, sd *Side) error { return live(ctx, sd, objs[sd.Name]) }), strings.Join(parts, "; "))
	rec.Claim([]string{othersLive}, "%s, the same addresses in each side's state and every object live on both clusters", strings.Join(parts, "; "))
	first := r.Subject.Others[0]
	victims := objs["subject"][first.Root.Name]
	if len(victims) == 0 {
		rec.NoBreak(othersLive, "the first other root manages no kubernetes object")
		return nil
	}
	v := victims[len(victims)-1]
	// A state rm, not a deletion: deleting a CRD or a Namespace of another
	// root would take the acted root's objects with it.
	r.breakBoth(ctx, rec, Breaking{Name: "state_rm_other", Corruption: "removes " + v.Address + " from root " + first.Root.Name + "'s state with the CLI's state rm",
		Victim: v.Address, Covers: []string{othersLive}, Predict: []result.Prediction{{Address: v.Address, Field: fieldState, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		var o *OtherRoot
		for _, c := range sd.Others {
			if c.Root.Name == first.Root.Name {
				o = c
			}
		}
		path := filepath.Join(o.Root.Dir, "terraform.tfstate")
		saved, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("back up root %s's state: %w", o.Root.Name, err)
		}
		restore := func() error { return os.WriteFile(path, saved, 0o644) }
		if err := corrupt(ctx, func() error { _, err := o.Stock.StateRm(ctx, v.Address); return err }); err != nil {
			return undoing(nil, err, restore)
		}
		st, err := o.Stock.State(ctx)
		if err != nil {
			return undoing(nil, err, restore)
		}
		got, err := objectsFromState(st)
		if err != nil {
			return undoing(nil, err, restore)
		}
		mine := maps.Clone(objs[sd.Name])
		mine[o.Root.Name] = got
		return undoing(one(othersLive, live(ctx, sd, mine)), nil, restore)
	})
	return nil
}
