package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/baseline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/inventory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func day2Teardown() Stage {
	return &teardownStage{info{id: "day2_teardown", title: "Teardown", headline: true, reqs: []string{"GAUNT-TEARDOWN-01", "GAUNT-TEARDOWN-02"}, after: []string{"cold_deploy"}}}
}

type teardownStage struct{ info }

// Run destroys the estate: exactly its remaining objects go, none is left
// on the cluster, and the namespaces it wrote into without owning (plus
// every cluster-scoped kind compared) are exactly as the baseline taken
// before cold deploy.
func (s *teardownStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	n := len(r.Objects)
	destroyed := map[string]int{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Destroy: true})
		r.mu.Lock()
		destroyed[sd.Name] = a.Destroyed
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	rec.Check("destroyed exactly the remaining objects", func() error {
		for side, d := range destroyed {
			if d != n {
				return fmt.Errorf("%s destroyed %d, the estate had %d", side, d, n)
			}
		}
		return nil
	}(), fmt.Sprintf("%d on each side", n))
	err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		left, err := sd.Present(ctx, r.Objects)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("%d objects survived, e.g. %s", len(left), left[0].Ref)
		}
		return nil
	})
	rec.Check("no estate object left", err, "every object read by kind, namespace and name")
	diffs := map[string]baseline.Diff{}
	compare := func(ctx context.Context, sd *Side) error {
		after, err := baseline.Take(ctx, sd.Cluster.RESTConfig(), baseline.DefaultScope(r.Spec.WritesInto...))
		if err != nil {
			return err
		}
		d := baseline.Compare(r.baseline(sd.Name), after)
		r.mu.Lock()
		diffs[sd.Name] = d
		r.mu.Unlock()
		if !d.Equal() {
			return fmt.Errorf("baseline differs: %s", d)
		}
		return nil
	}
	if !rec.Check("baseline intact", r.both(ctx, compare), r.baselineLine()+" as before cold deploy") {
		return nil
	}
	rec.Say("apply -destroy removed exactly the %d remaining objects on each side; none is left on either cluster; %s are exactly as read before cold deploy - nothing vanished, appeared or changed - and stock's destroy on the oracle cluster passes the same comparison",
		n, r.baselineLine())

	victim, err := breakVictim(r.baseline("subject"), r.Spec.WritesInto)
	if err != nil {
		return err
	}
	return rec.Break("delete_own", "deletes "+victimName(victim)+", one of the namespace's own objects", func() (error, error) {
		ref := inventory.RefOf(victim)
		obj := estateObject(ref)
		if err := r.Subject.Delete(ctx, obj); err != nil {
			return nil, err
		}
		assertErr := compare(ctx, r.Subject)
		// Put it back as it was.
		restoreErr := r.Subject.Recreate(ctx, obj, victim)
		return assertErr, restoreErr
	})
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
