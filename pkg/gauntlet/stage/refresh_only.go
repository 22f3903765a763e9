package stage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func refreshOnly() Stage {
	return &refreshOnlyStage{Described{Info{ID: "refresh_only", Title: "Refresh-only apply and plan", Headline: true,
		Requirements: []string{"GAUNT-REFRESH-01"}, After: []string{"migrate"}}}}
}

type refreshOnlyStage struct{ Described }

// refreshRepeats is how many times the refresh-only plan is asked: a
// promise broken at random (terraform#36403: the order of a resource's
// sensitive paths is a Go map's) shows in some repeats, not all.
const refreshRepeats = 5

// What the stage's checks find.
const (
	refreshApplyName = "apply -refresh-only"
	refreshPlanName  = "plan -refresh-only -detailed-exitcode"
	fieldApplyExit   = "outcome"
	fieldActed       = "added, changed, destroyed"
	fieldRefreshExit = "exit codes"
	// forgets is the check of apply -refresh-only on a world missing one
	// object.
	forgets = "apply -refresh-only on a world missing an object acts on nothing and drops it from state"
	// refreshApplied is the check of apply -refresh-only on an unchanged
	// world.
	refreshApplied = "apply -refresh-only succeeds and adds, changes and destroys nothing"
)

// Run holds the engine to the promises of the refresh-only mode on a world
// nothing changed since the last apply: apply -refresh-only succeeds,
// adds, changes and destroys nothing and writes nothing to the cluster
// (it updates only the state); after it, plan -refresh-only
// -detailed-exitcode exits 0 on every one of refreshRepeats repeats.
// Each is a promise each side keeps on its own: stock alone breaking one
// is the oracle's finding, never the engine's fail. Real engine bugs
// these catch: terraform 1.8-1.11 and tofu 1.8.0-1.10.2 exit 2 with "No
// changes" at random on a resource with two sensitive attributes
// (terraform#36403, opentofu#3015); tofu 1.11.0-1.11.5's apply
// -refresh-only fails on any root with an ephemeral resource
// (opentofu#3774).
func (s *refreshOnlyStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	const (
		applied   = refreshApplied
		untouched = "apply -refresh-only writes nothing to the cluster (uid and resourceVersion)"
		quiet     = "plan -refresh-only -detailed-exitcode exits 0 on an unchanged world, every repeat"
	)
	for _, c := range []string{applied, forgets, quiet} {
		rec.Promise(c)
	}
	before, err := r.versionsBoth(ctx, r.Objects)
	if err != nil {
		return err
	}
	outcomes, err := gather(ctx, r, func(ctx context.Context, sd *Side) (error, error) {
		a, err := sd.Engine.RefreshOnlyApply(ctx)
		return actedNothing(a, err)
	})
	if err != nil {
		return err
	}
	rec.Check(applied, sides(applied, outcomes["subject"], outcomes["oracle"]), "0 added, 0 changed, 0 destroyed on both sides")
	same := func(ctx context.Context, sd *Side) error {
		after, err := versions(ctx, sd, r.onSide(sd, r.Objects))
		if err != nil {
			return err
		}
		return sameVersions(before[sd.Name], after)
	}
	rec.Check(untouched, r.both(ctx, same), fmt.Sprintf("%d objects read on each side", len(r.Objects)))
	victim := r.refreshVictim()
	along, err := r.takenAlong(ctx, victim)
	if err != nil {
		return err
	}
	r.breakBoth(ctx, rec, Breaking{Name: "stray_label", Corruption: "labels " + victim.Ref.String() + " out of band",
		Victim: victim.Ref.String(), Covers: []string{untouched}, Predict: []result.Prediction{versionPredict(victim)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, victim.Ref, func() (Measured, error) { return one(untouched, same(ctx, sd)), nil })
	})
	// A world missing one object: apply -refresh-only must act on nothing
	// and only forget the object (an engine that ignored the flag would
	// create it again). A deleted counted instance stops the apply on an
	// output indexing it, on both sides, so there it is not asked.
	if counted(victim.Address) {
		rec.NotRun(forgets, victim.Address+" is a counted instance: with it deleted, an output or a reference indexing it stops the apply on both sides")
	} else {
		forgot, err := gather(ctx, r, func(ctx context.Context, sd *Side) (error, error) {
			m, err := r.refreshAfterDelete(ctx, sd, victim, true)
			return m[forgets], err
		})
		if err != nil {
			return err
		}
		rec.Check(forgets, sides(forgets, forgot["subject"], forgot["oracle"]), victim.Address+" deleted out of band, then forgotten on both sides")
	}
	// The corruption is of the engine's input: the same apply without
	// -refresh-only, on a world missing one object, must act.
	covers := []string{applied}
	if !counted(victim.Address) {
		covers = append(covers, forgets)
	}
	r.breakBoth(ctx, rec, Breaking{Name: "refresh_dropped", Corruption: "deletes " + victim.Ref.String() + " out of band and applies without -refresh-only",
		Victim: victim.Address, Covers: covers,
		Predict: []result.Prediction{{Object: refreshApplyName, Field: fieldActed, Got: fmt.Sprintf("%d added, 0 changed, 0 destroyed", 1+along)}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			refreshOnly := true
			if err := corrupt(ctx, func() error { refreshOnly = false; return nil }); err != nil {
				return nil, err
			}
			return r.refreshAfterDelete(ctx, sd, victim, refreshOnly)
		})
	// The BREAKs put objects back with new uids: the state takes them
	// before the repeats, so the world they plan on is unchanged again.
	// A side whose refresh-only apply failed above fails again here; that
	// is already its finding.
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if outcomes[sd.Name] != nil {
			return nil
		}
		_, err := sd.Engine.RefreshOnlyApply(ctx)
		return err
	}); err != nil {
		return err
	}

	codes, err := gather(ctx, r, func(ctx context.Context, sd *Side) (error, error) { return refreshQuiet(ctx, sd, refreshRepeats) })
	if err != nil {
		return err
	}
	rec.Check(quiet, sides(quiet, codes["subject"], codes["oracle"]), fmt.Sprintf("exit 0 on %d of %d repeats on both sides", refreshRepeats, refreshRepeats))
	// A refresh-only plan drops a deleted instance from the state it
	// plans; where the victim's address is counted, an output or a
	// reference indexing it then stops the plan ("Invalid index") on both
	// sides, so there the corruption is a stray label, which the plan must
	// report as drift all the same.
	outOfBand, verb, name := (*Side).deleted, "deletes ", "delete_before_refresh"
	if counted(victim.Address) {
		outOfBand, verb, name = (*Side).labelled, "labels ", "label_before_refresh"
	}
	r.breakBoth(ctx, rec, Breaking{Name: name, Corruption: verb + victim.Ref.String() + " out of band before the refresh-only plan",
		Victim: victim.Address, Covers: []string{quiet},
		Predict: []result.Prediction{{Object: refreshPlanName, Field: fieldRefreshExit, Got: "2 on 1 of 1 repeats"}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			return outOfBand(sd, ctx, victim.Ref, func() (Measured, error) {
				found, err := refreshQuiet(ctx, sd, 1)
				return one(quiet, found), err
			})
		})
	rec.Say("each side applied -refresh-only, then planned -refresh-only -detailed-exitcode %d times on the world as it stood", refreshRepeats)
	rec.Claim([]string{applied, untouched, quiet}, "apply -refresh-only acted on nothing and left all %d objects as they were, and every refresh-only plan exited 0, on both sides", len(r.Objects))
	return nil
}

// refreshAfterDelete deletes o out of band, applies (-refresh-only
// unless refreshOnly is false), and measures the apply (the applied
// check: acted on nothing) and the state after it (forgets: acted on
// nothing, o's address gone). A plain apply then makes o again, with
// anything its deletion took along, and takes it into the state.
func (r *Run) refreshAfterDelete(ctx context.Context, sd *Side, o Object, refreshOnly bool) (Measured, error) {
	ref := r.onSide(sd, []Object{o})[0].Ref
	if err := sd.Delete(ctx, ref); err != nil {
		return nil, fmt.Errorf("delete %s: %w", ref, err)
	}
	var a engine.Applied
	var err error
	if refreshOnly {
		a, err = sd.Engine.RefreshOnlyApply(ctx)
	} else {
		a, err = sd.Engine.Apply(ctx, engine.ApplyOptions{})
	}
	acted, merr := actedNothing(a, err)
	m := Measured{refreshApplied: acted, forgets: acted}
	if merr == nil {
		addrs, lerr := sd.Engine.StateList(ctx)
		switch {
		case lerr != nil:
			merr = measure(sd, "state list", lerr)
		case slices.Contains(addrs, o.Address):
			m[forgets] = joinSides(acted, &result.Finding{Address: o.Address, Field: fieldState, Want: absent, Got: present})
		}
	}
	if _, err := sd.Engine.Apply(ctx, engine.ApplyOptions{}); err != nil {
		return m, fmt.Errorf("undo: apply to make %s again: %w", ref, err)
	}
	return m, merr
}

// refreshVictim is the object the stage's BREAKs delete or label: a
// ConfigMap, ServiceAccount or Service at an address with no count or
// for_each index where the root has one (a refresh-only plan drops a
// deleted instance, and an output indexing it would stop the plan), else
// the victim every stage uses. A Service comes last: where it backs an
// APIService (metrics-server on kind), deleting it flips the APIService's
// availability, whose resourceVersion then moves during the repeats - a
// world changing under both engines, not an unchanged one.
func (r *Run) refreshVictim() Object {
	for _, kind := range []string{"ConfigMap", "ServiceAccount", "Service"} {
		for _, o := range r.Objects {
			if o.Ref.Kind == kind && o.Ref.Group == "" && !counted(o.Address) {
				return o
			}
		}
	}
	return r.victim()
}

// counted says whether an address has an instance key anywhere (a count or
// for_each resource, or one in a module called with either).
func counted(address string) bool { return strings.Contains(address, "[") }

// takenAlong counts the estate's objects that deleting o takes with it
// (a ServiceAccount's token Secret the root manages, deleted by the token
// controller): an apply after the deletion adds each of them back too.
// Read on the subject's cluster; the two sides hold the same estate.
func (r *Run) takenAlong(ctx context.Context, o Object) (int, error) {
	sd := r.Subject
	deps, err := sd.takenWith(ctx, r.onSide(sd, []Object{o})[0].Ref)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range deps {
		ref := estateObject(inventory.RefOf(d))
		for _, e := range r.onSide(sd, r.Objects) {
			if e.Ref.Group == ref.Group && e.Ref.Kind == ref.Kind && e.Ref.Namespace == ref.Namespace && e.Ref.Name == ref.Name {
				n++
				break
			}
		}
	}
	return n, nil
}

// actedNothing is the finding of a refresh-only apply that failed, or
// that added, changed or destroyed anything; the error is a failure of
// the measurement itself (nil for an engine's failed call, which is the
// finding).
func actedNothing(a engine.Applied, err error) (found, merr error) {
	var ce *engine.CallError
	switch {
	case errors.As(err, &ce):
		return &result.Finding{Object: refreshApplyName, Field: fieldApplyExit, Want: "succeeds", Got: fmt.Sprintf("exit %d", engine.ExitCode(err)),
			Detail: firstDiagnostic(ce)}, nil
	case err != nil:
		return nil, err
	case a.Added+a.Changed+a.Destroyed > 0:
		return &result.Finding{Object: refreshApplyName, Field: fieldActed, Want: "0 added, 0 changed, 0 destroyed", Got: a.String()}, nil
	}
	return nil, nil
}

// refreshQuiet plans -refresh-only -detailed-exitcode n times and returns
// the finding of the repeats that did not exit 0, naming what the engine
// said drifted (nothing, for the random exit 2 of terraform#36403).
func refreshQuiet(ctx context.Context, sd *Side, n int) (found, merr error) {
	broke, drifted, noChanges := 0, map[string]bool{}, 0
	for i := 0; i < n; i++ {
		p, err := sd.Engine.RefreshOnlyPlan(ctx, "gauntlet-refresh.tfplan")
		if err != nil {
			return nil, measure(sd, "plan -refresh-only", err)
		}
		if p.ExitCode == 0 {
			continue
		}
		broke++
		for _, a := range p.Drifted {
			drifted[a] = true
		}
		if p.NoChanges && len(p.Drifted) == 0 {
			noChanges++
		}
	}
	if broke == 0 {
		return nil, nil
	}
	detail := "its JSON plan lists nothing changed outside it"
	if len(drifted) > 0 {
		detail = "changed outside it, it says: " + strings.Join(sortedKeys(drifted), ", ")
	}
	if noChanges > 0 {
		detail += fmt.Sprintf("; %d of those repeats printed \"No changes.\"", noChanges)
	}
	return &result.Finding{Object: refreshPlanName, Field: fieldRefreshExit, Want: "0 on every repeat",
		Got: fmt.Sprintf("2 on %d of %d repeats", broke, n), Detail: detail}, nil
}

// firstDiagnostic is a failed call's first error diagnostic, on one line.
func firstDiagnostic(ce *engine.CallError) string {
	if d := ce.Diagnostics(); len(d) > 0 {
		return strings.Join(strings.Fields(d[0]), " ")
	}
	return ce.Err.Error()
}
