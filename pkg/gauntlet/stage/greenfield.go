package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func greenfield() Stage {
	return &greenfieldStage{Described{Info{ID: "greenfield", Title: "Greenfield apply", Headline: true, Requirements: []string{"GAUNT-GREEN-01"}, After: []string{"day2_teardown"}}}}
}

type greenfieldStage struct{ Described }

// Run applies the estate's original root fresh with the engine under test
// on its now empty cluster, with no state: the objects it creates must
// match, object by object, what stock's cold deploy created on the oracle
// cluster.
func (s *greenfieldStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	want := r.coldInventory()
	if want == nil {
		return fmt.Errorf("no cold-deploy inventory of the oracle to compare with")
	}
	ws, a, cleanup, err := r.freshApply(ctx, r.Subject, rec)
	// Whatever the verdict, the fresh estate leaves with the stage.
	defer cleanup()
	if err != nil {
		return err
	}
	n := len(want.Objects) + len(want.Missing)
	const (
		created = "created every object"
		matches = "matches stock's cold deploy object by object"
		next    = "replanned empty"
	)
	rec.Check(created, func() error {
		kube, other := splitActed(a.Acted())
		if a.Added != n+len(other) || a.Changed != 0 || a.Destroyed != 0 || len(kube) != n {
			return &result.Finding{Address: "(the fresh apply)", Field: "apply counts", Got: fmt.Sprintf("%s (%d kubernetes objects acted on, %d others)", a, len(kube), len(other)),
				Want: fmt.Sprintf("%d kubernetes objects added", n)}
		}
		return nil
	}(), a.String())
	rec.NoBreak(created, "the fresh apply runs once; what it had to create is proven on the cluster by the object-by-object match and its BREAK")
	var refs []inventory.Ref
	for _, u := range want.Objects {
		refs = append(refs, inventory.RefOf(u))
	}
	// The fresh apply made its own objects from its own state: an object
	// named from a random_id, or a value a cluster wrote copied into an
	// annotation, differs from stock's by construction. Objects are paired
	// by state address and each side's generated values matched with its
	// own state, as the cold deploy compares them.
	st, err := ws.State(ctx)
	if err != nil {
		return err
	}
	fresh, err := objectsFromState(st)
	if err != nil {
		return err
	}
	opts := r.freshAcrossClusters(fresh, generatedValues(st))
	var gotRefs []inventory.Ref
	for _, o := range fresh {
		gotRefs = append(gotRefs, refOf(o))
	}
	read := func(ctx context.Context) (inventory.Inventory, error) {
		return inventory.Read(ctx, r.Subject.Cluster.RESTConfig(), inventory.Selection{Refs: gotRefs})
	}
	match := func(ctx context.Context) (error, error) {
		got, err := read(ctx)
		if err != nil {
			return nil, err
		}
		return inventoryFindings(inventory.Compare(*want, got, opts...)), nil
	}
	got, err := read(ctx)
	if err != nil {
		return err
	}
	rec.Check(matches, inventoryFindings(inventory.Compare(*want, got, opts...)), fmt.Sprintf("%d objects", len(want.Objects)))
	// Greenfield runs on the subject alone (the oracle's cold deploy is
	// the reference), so its BREAKs run there alone.
	// The victim is the fresh apply's own object of the address stock's
	// last object has (its name may differ: a random_id in it).
	if len(fresh) == 0 || len(refs) == 0 {
		return fmt.Errorf("greenfield: the fresh apply's state holds %d kubernetes objects, stock's cold deploy %d: nothing to compare", len(fresh), len(refs))
	}
	vObj := &fresh[len(fresh)-1]
	last := refs[len(refs)-1]
	for _, o := range r.onSide(r.Oracle, r.coldObjects) {
		if or := refOf(o); or.Group == last.Group && or.Kind == last.Kind && or.Namespace == last.Namespace && or.Name == last.Name {
			for i := range fresh {
				if fresh[i].Address == o.Address {
					vObj = &fresh[i]
				}
			}
		}
	}
	// Not an object whose resource version another one copies: its label
	// and unlabel would move what the configuration reads, and the replan
	// would update the reader (a victim whose undo leaves the world moved).
	if refd := inventory.VersionReferenced(got.Objects); refd[refOf(*vObj)] {
		for i := len(fresh) - 1; i >= 0; i-- {
			if !refd[refOf(fresh[i])] {
				vObj = &fresh[i]
				break
			}
		}
	}
	victim := vObj.Ref
	r.breakSubject(ctx, rec, Breaking{Name: "stray_label", Corruption: "labels " + victim.String() + " out of band",
		Victim: victim.String(), Covers: []string{matches}, Predict: []result.Prediction{{Object: victim.String(), Field: fieldBreakLabel, Got: labelGot}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, victim, func() (Measured, error) {
			e, err := match(ctx)
			return one(matches, e), err
		})
	})
	p, err := ws.Plan(ctx, planDefaults())
	if err != nil {
		return err
	}
	// Greenfield runs on the subject alone, but a replan that is not
	// empty may be a behaviour stock shares (a provider that compares a
	// quantity as text proposes an update after every apply). Only then
	// stock makes the same fresh apply on its own emptied cluster and
	// replans, so the page can say the failure is not the engine's.
	nextErr := empty(p)
	if nextErr != nil {
		nextErr = sides(next, nextErr, r.stockFreshReplan(ctx, rec))
	}
	rec.Check(next, nextErr, p.Counts.String())
	r.breakSubject(ctx, rec, Breaking{Name: "delete_before_replan", Corruption: "deletes " + victim.String() + " out of band before the plan",
		Victim: vObj.Address, Covers: []string{next}, Predict: []result.Prediction{planPredict(vObj.Address, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, victim, func() (Measured, error) {
			p, err := ws.Plan(ctx, planDefaults())
			if err != nil {
				return nil, err
			}
			return one(next, empty(p)), nil
		})
	})
	saved := r.Objects
	r.Objects = r.coldObjects
	r.availability(ctx, rec, "after the greenfield apply")
	r.Objects = saved
	rec.Claim([]string{matches, next}, "the estate's original root applied fresh by %s with no state on its emptied cluster (%s); every object - %s - matches stock's cold deploy on the oracle cluster object by object, labels and annotations included, server-set fields and defaults aside; replanned empty",
		r.Subject.Engine.Engine.Profile, a, describe(r.coldObjects))
	return nil
}

// freshApply applies the estate's original root fresh with sd's engine
// and no state on its emptied cluster: first the roots the acted one
// stands on (a CRD before its custom resources), then the root. cleanup
// destroys whatever was applied, in reverse, and is never nil.
func (r *Run) freshApply(ctx context.Context, sd *Side, rec *Recorder) (ws *engine.Workspace, a engine.Applied, cleanup func(), err error) {
	var applied []*engine.Workspace
	cleanup = func() {
		for i := len(applied) - 1; i >= 0; i-- {
			if _, err := applied[i].Apply(context.WithoutCancel(ctx), engine.ApplyOptions{Destroy: true}); err != nil {
				rec.Say("cleanup destroy of %s on the %s side failed: %v", applied[i].Dir, sd.Name, err)
			}
		}
	}
	apply := func(name string) (*engine.Workspace, engine.Applied, error) {
		fresh, err := r.Fresh(sd, name, "greenfield")
		if err != nil {
			return nil, engine.Applied{}, err
		}
		ws, err := sd.Workspace(fresh.Dir)
		if err != nil {
			return nil, engine.Applied{}, err
		}
		if _, err := ws.Init(ctx); err != nil {
			return nil, engine.Applied{}, err
		}
		// Registered before the apply: a failed apply may have created
		// part of the root.
		applied = append(applied, ws)
		a, err := ws.Apply(ctx, engine.ApplyOptions{})
		return ws, a, err
	}
	for _, o := range sd.Others {
		if !o.Before {
			continue
		}
		if _, _, err := apply(o.Root.Name); err != nil {
			return nil, engine.Applied{}, cleanup, fmt.Errorf("greenfield apply of root %s, which %s stands on: %w", o.Root.Name, sd.Root.Name, err)
		}
	}
	ws, a, err = apply(sd.Root.Name)
	return ws, a, cleanup, err
}

// stockFreshReplan makes greenfield's fresh apply with stock on the
// oracle's emptied cluster, replans, and returns what the replan
// proposes (nil when empty), then destroys it again. A failure to get
// that far is a measurement error: the subject's finding then stays the
// engine's.
func (r *Run) stockFreshReplan(ctx context.Context, rec *Recorder) error {
	ws, _, cleanup, err := r.freshApply(ctx, r.Oracle, rec)
	defer cleanup()
	if err != nil {
		return measure(r.Oracle, "fresh apply", err)
	}
	p, err := ws.Plan(ctx, planDefaults())
	if err != nil {
		return measure(r.Oracle, "plan", err)
	}
	return empty(p)
}
