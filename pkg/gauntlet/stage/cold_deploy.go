package stage

import (
	"context"
	"fmt"
	"slices"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/inventory"
)

func coldDeploy() Stage {
	return &coldDeployStage{info{id: "cold_deploy", title: "Cold deploy", headline: true, reqs: []string{"GAUNT-COLD-01", "GAUNT-COLD-02"}}}
}

type coldDeployStage struct{ info }

// Run applies the root with the oracle CLI on both clusters: the subject's
// cluster gets stock state to migrate from, the oracle's becomes every
// later stage's reference.
func (s *coldDeployStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := r.takeBaseline(ctx, sd); err != nil {
			return err
		}
		if _, err := sd.Stock.Init(ctx); err != nil {
			return err
		}
		_, err := sd.Stock.Apply(ctx, engine.ApplyOptions{})
		return err
	}); err != nil {
		return err
	}
	objs := map[string][]Object{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		st, err := sd.Stock.State(ctx)
		if err != nil {
			return err
		}
		o, err := objectsFromState(st)
		r.mu.Lock()
		objs[sd.Name] = o
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	r.Objects = objs["subject"]
	addrs := func(os []Object) []string {
		var a []string
		for _, o := range os {
			a = append(a, o.Address)
		}
		return a
	}
	var mismatch error
	if !slices.Equal(addrs(objs["subject"]), addrs(objs["oracle"])) {
		mismatch = fmt.Errorf("subject state holds %v, oracle state %v", addrs(objs["subject"]), addrs(objs["oracle"]))
	}
	rec.Check("same state on both clusters", mismatch, fmt.Sprintf("%d instances in each terraform.tfstate", len(r.Objects)))
	if len(r.Objects) == 0 {
		rec.Check("objects created", fmt.Errorf("the state holds no kubernetes object"), "")
		return nil
	}
	present := func(ctx context.Context) error {
		return r.both(ctx, func(ctx context.Context, sd *Side) error {
			miss, err := sd.Missing(ctx, r.Objects)
			if err != nil {
				return err
			}
			if len(miss) > 0 {
				return fmt.Errorf("%d of %d state objects are not on the cluster: %s", len(miss), len(r.Objects), miss[0].Ref)
			}
			return nil
		})
	}
	if !rec.Check("every state object is live", present(ctx), "read back by kind, namespace and name on both clusters") {
		return nil
	}
	if err := r.captureColdOracle(ctx); err != nil {
		return err
	}
	same, err := sameObjects(ctx, r)
	if err != nil {
		return err
	}
	rec.Check("both clusters hold the same objects", same, "compared object by object, labels and annotations included, server-set fields and defaults aside")
	r.availability(ctx, rec, "after the cold deploy")
	rec.Say("%d objects (%s) applied by stock %s from %s plus %s, on %s",
		len(r.Objects), describe(r.Objects), r.Subject.Stock.Engine.Profile, r.sourceLine(), r.deltaLine(), r.Subject.Cluster.Substrate())
	rec.Say("a terraform.tfstate with %d instances on each side, and the two clusters' objects identical object by object; %s read beforehand as the teardown's baseline; the identical root cold-deployed on the oracle cluster as every later stage's reference",
		len(r.Objects), r.baselineLine())

	victim := r.Objects[len(r.Objects)-1]
	return rec.Break("delete", fmt.Sprintf("deletes %s out of band", victim.Ref), func() (error, error) {
		if err := r.Subject.Delete(ctx, victim.Ref); err != nil {
			return nil, err
		}
		assertErr := present(ctx)
		// Put the world back: stock re-applies the root.
		a, err := r.Subject.Stock.Apply(ctx, engine.ApplyOptions{})
		if err == nil && a.Added != 1 {
			err = fmt.Errorf("repairing apply added %d, want 1", a.Added)
		}
		return assertErr, err
	})
}

// sameObjects compares the subject cluster's objects with the oracle's,
// object by object: the same root applied by the same CLI must leave the
// same world on both, or no later comparison means anything.
func sameObjects(ctx context.Context, r *Run) (error, error) {
	got, err := readObjects(ctx, r.Subject, r.Objects)
	if err != nil {
		return nil, err
	}
	rep := inventory.Compare(*r.coldInventory(), got)
	if !rep.Equal() {
		return fmt.Errorf("%s", rep), nil
	}
	return nil, nil
}
