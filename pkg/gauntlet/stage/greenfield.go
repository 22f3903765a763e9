package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/inventory"
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
	// The roots the acted one stands on (a CRD before its custom
	// resources) are applied fresh first by the same engine, and leave
	// after it.
	var under []*engine.Workspace
	defer func() {
		for i := len(under) - 1; i >= 0; i-- {
			if _, err := under[i].Apply(context.WithoutCancel(ctx), engine.ApplyOptions{Destroy: true}); err != nil {
				rec.Say("cleanup destroy of %s failed: %v", under[i].Dir, err)
			}
		}
	}()
	for _, o := range r.Subject.Others {
		if !o.Before {
			continue
		}
		fresh, err := r.Fresh(r.Subject, o.Root.Name, "greenfield")
		if err != nil {
			return err
		}
		ws, err := r.Subject.Workspace(fresh.Dir)
		if err != nil {
			return err
		}
		if _, err := ws.Init(ctx); err != nil {
			return err
		}
		under = append(under, ws)
		if _, err := ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
			return fmt.Errorf("greenfield apply of root %s, which %s stands on: %w", o.Root.Name, r.Subject.Root.Name, err)
		}
	}
	root, err := r.Fresh(r.Subject, r.Subject.Root.Name, "greenfield")
	if err != nil {
		return err
	}
	ws, err := r.Subject.Workspace(root.Dir)
	if err != nil {
		return err
	}
	if _, err := ws.Init(ctx); err != nil {
		return err
	}
	a, err := ws.Apply(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	// Whatever the verdict, the fresh estate leaves with the stage.
	defer func() {
		if _, err := ws.Apply(context.WithoutCancel(ctx), engine.ApplyOptions{Destroy: true}); err != nil {
			rec.Say("cleanup destroy failed: %v", err)
		}
	}()
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
	rec.Check(next, empty(p), p.Counts.String())
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
