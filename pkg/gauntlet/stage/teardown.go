package stage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/baseline"
	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func day2Teardown() Stage {
	return &teardownStage{Described{Info{ID: "day2_teardown", Title: "Teardown", Headline: true, Requirements: []string{"GAUNT-TEARDOWN-01", "GAUNT-TEARDOWN-02"}, RecordsRequirements: []string{"GAUNT-PAIR-TEARDOWN-01"}, After: []string{"cold_deploy"}}}}
}

type teardownStage struct{ Described }

// Run destroys the estate: exactly its remaining objects go, none is left
// on the cluster, and the namespaces it wrote into without owning (plus
// every cluster-scoped kind compared) are exactly as the baseline taken
// before cold deploy.
func (s *teardownStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	n := len(r.Objects)
	const (
		destroyed = "the destroy acted on exactly the remaining objects"
		noneLeft  = "no estate object left"
		active    = "the namespaces the estate writes into are still Active"
		intact    = "baseline intact"
	)
	var want []string
	for _, o := range r.Objects {
		want = append(want, o.Address+": destruction")
	}
	slices.Sort(want)
	acted := map[string][]string{}
	copies := map[string]*unstructured.Unstructured{}
	victim := teardownVictim(r.Objects, r.victim())
	stoodOn := map[string]map[string]recordstore.Snapshot{}
	outputs := map[string]map[string]any{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if r.RecordsLive() {
			snap, err := takeStoodOn(ctx, sd)
			if err != nil {
				return err
			}
			out, err := r.stoodOnOutputs(ctx, sd)
			if err != nil {
				return err
			}
			r.mu.Lock()
			stoodOn[sd.Name], outputs[sd.Name] = snap, out
			r.mu.Unlock()
		}
		own := r.onSide(sd, []Object{victim})[0].Ref // the oracle's name where its server made one
		u, err := sd.Get(ctx, own)
		if err != nil || u == nil {
			return fmt.Errorf("read %s before the destroy: %v", own, cmpErr(err, "not found"))
		}
		// Roots applied after the acted one stand on it: they go first.
		if err := sd.destroyOthers(ctx, false); err != nil {
			return err
		}
		if err := sd.initEngine(ctx); err != nil {
			return err
		}
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Destroy: true})
		got, _ := splitActed(a.Acted())
		slices.Sort(got)
		r.mu.Lock()
		acted[sd.Name], copies[sd.Name] = got, u
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	rec.Check(destroyed, r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := missingFrom(acted[sd.Name], want); err != nil {
			return fmt.Errorf("%s's destroy: %w", sd.Name, err)
		}
		return nil
	}), fmt.Sprintf("%d on each side", n))
	rec.NoBreak(destroyed, "the destroy runs once and cannot be undone; each object it had to remove is proven gone by the next check and its BREAK")
	left := func(ctx context.Context, sd *Side) error {
		still, err := sd.Present(ctx, r.onSide(sd, r.Objects))
		if err != nil {
			return err
		}
		fs := make([]*result.Finding, len(still))
		for i, o := range still {
			fs[i] = &result.Finding{Address: o.Address, Object: o.Ref.String(), Field: fieldExists, Want: absent, Got: present}
		}
		return result.Findings(fs...)
	}
	rec.Check(noneLeft, r.both(ctx, left), "every object read by kind, namespace and name")
	r.breakBoth(ctx, rec, Breaking{Name: "recreate", Corruption: "creates " + victim.Ref.String() + " again out of band",
		Victim: victim.Ref.String(), Covers: []string{noneLeft}, Predict: []result.Prediction{existsPredict(victim, present)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		own := r.onSide(sd, []Object{victim})[0].Ref
		if err := corrupt(ctx, func() error { return sd.Recreate(ctx, own, copies[sd.Name]) }); err != nil {
			return nil, err
		}
		return undoing(one(noneLeft, left(ctx, sd)), nil, func() error { return sd.deleteAndWait(ctx, own, 2*time.Minute) })
	})
	rec.Check(active, r.both(ctx, func(ctx context.Context, sd *Side) error {
		return inactiveNamespaces(r.Spec.WritesInto, func(ns string) (*unstructured.Unstructured, error) {
			return sd.Get(ctx, estate.Object{Version: "v1", Kind: "Namespace", Name: ns})
		})
	}), strings.Join(r.Spec.WritesInto, ", "))
	rec.NoBreak(active, "no corruption can take a system namespace out of Active and bring it back; its contents are compared by the next check and its BREAK")
	if r.RecordsLive() {
		r.checkStoodOnUntouched(ctx, rec, stoodOn)
	}
	// The roots the acted one stood on go last, before the baseline is
	// compared: the estate as a whole must leave nothing behind.
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.destroyOthers(ctx, true) }); err != nil {
		return err
	}
	if r.RecordsLive() {
		if err := r.checkReaderRefused(ctx, rec, outputs); err != nil {
			return err
		}
		rec.Claim([]string{standsOnUntouched, readerRefused}, "%s went first and left the records of %s untouched (every Secret and Lease at the same resourceVersion); once those were destroyed, %s's plan was refused on its read of their outputs",
			r.Subject.Root.Name, otherNames(r.Subject.Others), r.Subject.Root.Name)
	}
	diffs := map[string]baseline.Diff{}
	compare := func(ctx context.Context, sd *Side) error {
		after, err := baseline.Take(ctx, sd.Cluster.RESTConfig(), baseline.DefaultScope(r.Spec.WritesInto...))
		if err != nil {
			return measure(sd, "read the baseline", err)
		}
		d := baseline.Compare(r.baseline(sd.Name), after)
		r.mu.Lock()
		diffs[sd.Name] = d
		r.mu.Unlock()
		return baselineFindings(d)
	}
	rec.Check(intact, r.both(ctx, compare), r.baselineLine()+" as before cold deploy")
	own, err := breakVictim(r.baseline("subject"), r.Spec.WritesInto)
	if err != nil {
		return err
	}
	ownRef := estateObject(inventory.RefOf(own))
	r.breakBoth(ctx, rec, Breaking{Name: "delete_own", Corruption: "deletes " + victimName(own) + ", one of the namespace's own objects",
		Victim: inventory.RefOf(own).String(), Covers: []string{intact},
		// A deleted ConfigMap a controller publishes (kube-root-ca.crt)
		// is back at once under a new uid: the deletion reads as the
		// object replaced, else as absent.
		Predict: []result.Prediction{{Object: inventory.RefOf(own).String(), Field: fieldExists, Got: absent},
			{Object: inventory.RefOf(own).String(), Field: "uid", Got: "replaced"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		// The oracle's cluster has its own copy under the same name.
		return sd.deleted(ctx, ownRef, func() (Measured, error) {
			// A failed read of the world is the BREAK's error, not a proof.
			after, err := baseline.Take(ctx, sd.Cluster.RESTConfig(), baseline.DefaultScope(r.Spec.WritesInto...))
			if err != nil {
				return nil, err
			}
			return one(intact, baselineFindings(baseline.Compare(r.baseline(sd.Name), after))), nil
		})
	})
	rec.Claim([]string{destroyed, noneLeft, active, intact}, "apply -destroy removed exactly the %d remaining objects on each side; none is left on either cluster; %s are exactly as read before cold deploy - nothing vanished, appeared or changed - and stock's destroy on the oracle cluster passes the same comparison",
		n, r.baselineLine())
	return nil
}

// baselineFindings names every object of the baseline that vanished,
// appeared, was replaced or changed, one finding each.
func baselineFindings(d baseline.Diff) error {
	var fs []*result.Finding
	for _, ref := range d.Vanished {
		fs = append(fs, &result.Finding{Object: ref.String(), Field: fieldExists, Want: present, Got: absent})
	}
	for _, ref := range d.Appeared {
		fs = append(fs, &result.Finding{Object: ref.String(), Field: fieldExists, Want: absent, Got: present})
	}
	for _, ref := range d.Replaced {
		fs = append(fs, &result.Finding{Object: ref.String(), Field: "uid", Want: unchanged, Got: "replaced"})
	}
	for _, c := range d.Changed {
		fs = append(fs, splitMap(c.Object.String(), c.Path, c.Want, c.Got)...)
	}
	return result.Findings(fs...)
}

// teardownVictim is the object the teardown's BREAK creates again after
// the destroy: the usual victim, unless it lived in a Namespace the
// estate itself created and destroyed - then that Namespace, which can
// be created again on its own.
func teardownVictim(objs []Object, v Object) Object {
	if v.Ref.Namespace == "" {
		return v
	}
	for _, o := range objs {
		if o.Ref.Kind == "Namespace" && o.Ref.Group == "" && o.Ref.Name == v.Ref.Namespace {
			return o
		}
	}
	return v
}

// breakVictim picks a ConfigMap the namespace already had before cold
// deploy: deleting it must show in the comparison.
func breakVictim(b *baseline.Snapshot, namespaces []string) (*unstructured.Unstructured, error) {
	if b == nil {
		return nil, fmt.Errorf("no baseline to pick a BREAK victim from")
	}
	for _, u := range b.Inventory.Objects {
		if u.GetKind() == "ConfigMap" && u.GetNamespace() != "" && u.GetName() != "kube-root-ca.crt" && u.GetName() != "extension-apiserver-authentication" {
			return u, nil
		}
	}
	for _, u := range b.Inventory.Objects {
		if u.GetKind() == "ConfigMap" && u.GetNamespace() != "" {
			return u, nil
		}
	}
	return nil, fmt.Errorf("the baseline of %v holds no ConfigMap to delete", namespaces)
}

func victimName(u *unstructured.Unstructured) string {
	if u == nil {
		return "nothing"
	}
	return "ConfigMap " + u.GetNamespace() + "/" + u.GetName()
}

// inactiveNamespaces names every namespace of names that get finds gone
// or not Active - all of them, not the first.
func inactiveNamespaces(names []string, get func(ns string) (*unstructured.Unstructured, error)) error {
	var fs []*result.Finding
	for _, ns := range names {
		u, err := get(ns)
		if err != nil {
			return err
		}
		if u == nil {
			fs = append(fs, &result.Finding{Object: "Namespace " + ns, Field: fieldExists, Want: present, Got: absent})
			continue
		}
		if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase != "Active" {
			fs = append(fs, &result.Finding{Object: "Namespace " + ns, Field: "status.phase", Want: "Active", Got: phase})
		}
	}
	return result.Findings(fs...)
}
