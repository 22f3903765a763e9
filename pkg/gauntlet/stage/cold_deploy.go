package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func coldDeploy() Stage {
	return &coldDeployStage{Described{Info{ID: "cold_deploy", Title: "Cold deploy", Headline: true, Requirements: []string{"GAUNT-COLD-01", "GAUNT-COLD-02"}}}}
}

type coldDeployStage struct{ Described }

// Run applies the root with the oracle CLI on both clusters: the subject's
// cluster gets stock state to migrate from, the oracle's becomes every
// later stage's reference.
func (s *coldDeployStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := r.takeBaseline(ctx, sd); err != nil {
			return err
		}
		if err := sd.applyOthers(ctx, true); err != nil {
			return err
		}
		if _, err := sd.Stock.Init(ctx); err != nil {
			return err
		}
		if _, err := sd.Stock.Apply(ctx, engine.ApplyOptions{}); err != nil {
			return err
		}
		return sd.applyOthers(ctx, false)
	}); err != nil {
		return err
	}
	objs := map[string][]Object{}
	gen := map[string]map[string]string{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		st, err := sd.Stock.State(ctx)
		if err != nil {
			return err
		}
		o, err := objectsFromState(st)
		if err == nil {
			o, err = sd.settle(o)
		}
		r.mu.Lock()
		objs[sd.Name], gen[sd.Name] = o, generatedValues(st)
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	// Each side's objects by state address: an object named by
	// generate_name has another name on each cluster.
	r.pairSides(objs, gen)
	r.Objects = objs["subject"]
	if len(r.Objects) == 0 {
		return fmt.Errorf("the stock state holds no kubernetes object")
	}
	kinds, err := derivedKinds(r.Spec, r.Objects)
	if err != nil {
		return err
	}
	r.Kinds = kinds
	const (
		sameState = "same state on both clusters"
		live      = "every state object is live"
		sameObjs  = "both clusters hold the same objects"
	)
	rec.Check(sameState, result.Stamp(sameAddresses(objs["subject"], objs["oracle"]), sameState, "subject"), fmt.Sprintf("%d instances in each terraform.tfstate", len(r.Objects)))
	present := func(ctx context.Context, sd *Side) error {
		miss, err := sd.Missing(ctx, r.onSide(sd, r.Objects))
		if err != nil {
			return err
		}
		return missingFindings(miss)
	}
	if !rec.Check(live, r.both(ctx, present), "each side's state objects read back by kind, namespace and name on its own cluster") {
		return nil
	}
	if err := r.captureColdOracle(ctx); err != nil {
		return err
	}
	same := func(ctx context.Context, sd *Side) (error, error) {
		mine := r.onSide(sd, r.Objects)
		got, err := readObjects(ctx, sd, mine)
		if err != nil {
			return nil, err
		}
		return inventoryFindings(inventory.Compare(*r.coldInventory(), got, r.acrossClusters(sd, mine)...)), nil
	}
	sameErr, err := same(ctx, r.Subject)
	if err != nil {
		return err
	}
	rec.Check(sameObjs, sameErr, "paired by state address and compared field by field, labels and annotations included; fields the server or a controller writes and defaults aside, provider-generated values each matched with its own side's state")
	rec.Say("%d objects of %d kinds (%s) applied by stock %s from %s plus %s, on %s",
		len(r.Objects), len(r.Kinds), describe(r.Objects), r.Subject.Stock.Engine.Profile, r.sourceLine(), r.deltaLine(), r.Subject.Cluster.Substrate())
	rec.Claim([]string{sameState, live, sameObjs}, "a terraform.tfstate with %d instances on each side, every one live, and the two clusters' objects identical object by object",
		len(r.Objects))
	if others := r.Subject.Others; len(others) > 0 {
		rec.Say("the stages act on root %s; %s applied around it by stock %s in the estate's order, and left applied until the teardown",
			r.Subject.Root.Name, otherNames(others), r.Subject.Stock.Engine.Profile)
	}
	rec.Say("%s read beforehand as the teardown's baseline; the identical root cold-deployed on the oracle cluster as every later stage's reference", r.baselineLine())

	victim := r.Objects[len(r.Objects)-1]
	r.breakBoth(ctx, rec, Breaking{Name: "state_rm", Corruption: "removes " + victim.Address + " from one side's state with the CLI's state rm",
		Victim: victim.Address, Covers: []string{sameState}, Predict: []result.Prediction{{Address: victim.Address, Field: fieldState, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		restore, err := backupState(ctx, sd)
		if err != nil {
			return nil, err
		}
		if err := corrupt(ctx, func() error { _, err := sd.Stock.StateRm(ctx, victim.Address); return err }); err != nil {
			return undoing(nil, err, restore)
		}
		st, err := sd.Stock.State(ctx)
		if err != nil {
			return undoing(nil, err, restore)
		}
		o, err := objectsFromState(st)
		m := one(sameState, sameAddresses(o, objs[otherSide(sd)]))
		return undoing(m, err, restore)
	})
	r.breakBoth(ctx, rec, Breaking{Name: "delete", Corruption: "deletes " + victim.Ref.String() + " out of band",
		Victim: victim.Ref.String(), Covers: []string{live}, Predict: []result.Prediction{{Address: victim.Address, Field: fieldExists, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, r.onSide(sd, []Object{victim})[0].Ref, func() (Measured, error) { return one(live, present(ctx, sd)), nil })
	})
	r.breakBoth(ctx, rec, Breaking{Name: "stray_label", Corruption: "labels " + victim.Ref.String() + " out of band",
		Victim: victim.Ref.String(), Covers: []string{sameObjs}, Predict: []result.Prediction{{Address: victim.Address, Field: fieldBreakLabel, Got: labelGot}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.labelled(ctx, r.onSide(sd, []Object{victim})[0].Ref, func() (Measured, error) {
			e, err := same(ctx, sd)
			return one(sameObjs, e), err
		})
	})
	if err := r.checkOthersCold(ctx, rec); err != nil {
		return err
	}
	r.availability(ctx, rec, "after the cold deploy")
	return nil
}

// sameAddresses compares this side's state's addresses with the other
// side's: a finding per address missing from this side (absent) or
// only in it (present where the other has none), every one named.
func sameAddresses(mine, other []Object) error {
	in := func(objs []Object) map[string]bool {
		m := map[string]bool{}
		for _, o := range objs {
			m[o.Address] = true
		}
		return m
	}
	s, o := in(mine), in(other)
	var fs []*result.Finding
	for a := range s {
		if !o[a] {
			fs = append(fs, &result.Finding{Address: a, Field: fieldState, Want: absent, Got: present, Detail: "only in this side's state"})
		}
	}
	for a := range o {
		if !s[a] {
			fs = append(fs, &result.Finding{Address: a, Field: fieldState, Want: present, Got: absent, Detail: "only in the other side's state"})
		}
	}
	sortFindings(fs)
	return result.Findings(fs...)
}
