package stage

import (
	"context"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func day2CBDDropped() Stage {
	return &cbdDroppedStage{Described{Info{ID: "day2_cbd_dropped", Title: "create_before_destroy dropped, applied with -refresh=false",
		Requirements: []string{"GAUNT-DAY2-CBD-03"}, After: []string{"day2_replace"}}}}
}

type cbdDroppedStage struct{ Described }

const (
	cbdDroppedFileName = "gauntlet_cbd_dropped.tf"
	cbdDroppedAddr     = "kubernetes_config_map_v1.cbd_dropped"
)

// Run deploys a create_before_destroy ConfigMap, then drops the flag in
// the same change as a new name (a replace) and applies with
// -refresh=false: the engine must honour the flag as now written -
// destroy first - and the old object must be gone. Engines before 1.9
// kept the flag from state without a refresh, planned -/+ and dropped the
// old object from state without destroying it (opentofu#1806,
// terraform#35218): it leaked in the cluster.
func (s *cbdDroppedStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	file := func(content string, cbd bool) string {
		return hashedFile(r, "create_before_destroy-dropped", "cbd_dropped", "cbdd", content, cbd)
	}
	write := func(tf string) error {
		return r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.WriteFile(cbdDroppedFileName, tf) })
	}
	if err := write(file("a", true)); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	if err := write(file("b", false)); err != nil {
		return err
	}
	oldObj, newObj := hashedObjectOf(r, cbdDroppedAddr, "cbdd", "a"), hashedObjectOf(r, cbdDroppedAddr, "cbdd", "b")
	const (
		planned = "planned without refresh as a destroy-then-create replace"
		same    = "same as the oracle"
		alone   = "the old object is destroyed: the new one alone remains"
		next    = "next plan empty"
	)
	noRefresh := planDefaults()
	noRefresh.NoRefresh = true
	subj, orc, err := r.planBoth(ctx, noRefresh)
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	destroyFirst := func(p *engine.Plan) error { return replacedAs(p, cbdDroppedAddr, "delete+create") }
	rec.Check(planned, sides(planned, destroyFirst(subj), destroyFirst(orc)), subj.Counts.String())
	rec.Check(same, onSubject(sameShape(subj, orc)), "")
	// The apply plans again, as a user's apply -refresh=false does: the
	// saved plan above is only read.
	applied, _, err := r.applyBoth(ctx, engine.ApplyOptions{NoRefresh: true})
	if err != nil {
		return err
	}
	if err := r.checkReplaced(ctx, rec, alone, oldObj, newObj); err != nil {
		return err
	}
	r.CheckPlanEmpty(ctx, rec, next, newObj)
	rec.Claim([]string{planned, same}, "a ConfigMap deployed with create_before_destroy, then changed to a new name (%s -> %s) with the flag removed, planned with -refresh=false as a replace that destroys first (%s), as stock's plan did",
		oldObj.Ref.Name, newObj.Ref.Name, subj.Counts)
	rec.Claim([]string{alone, next}, "apply -refresh=false (%s) destroyed %s: %s alone remains on both clusters and the next plan is empty",
		applied, oldObj.Ref.Name, newObj.Ref.Name)

	// The flag kept in the change: a create-first replace, which the plan
	// checks must tell from the destroy-first one the configuration asks
	// for.
	r.breakBoth(ctx, rec, Breaking{Name: "flag_kept", Corruption: "keeps create_before_destroy in the next name change",
		Victim: cbdDroppedAddr, Covers: []string{planned, same},
		Predict: []result.Prediction{planPredict(cbdDroppedAddr, "create+delete")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		cbd := false
		_ = corrupt(ctx, func() error { cbd = true; return nil })
		if err := sd.Root.WriteFile(cbdDroppedFileName, file("c", cbd)); err != nil {
			return nil, err
		}
		p, err := sd.plan(ctx, noRefresh)
		m := Measured{}
		if err == nil {
			m = Measured{planned: destroyFirst(p), same: sameShape(p, plans[otherSide(sd)])}
		}
		return undoing(m, err, func() error { return sd.Root.WriteFile(cbdDroppedFileName, file("b", false)) })
	})
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.RemoveFile(cbdDroppedFileName) }); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	// An old object the engine left behind (out of its state, so its
	// destroy cannot take it) would stand in every later stage's cluster.
	for _, sd := range r.Sides() {
		u, err := sd.Get(ctx, oldObj.Ref)
		if err != nil {
			return err
		}
		if exists(u) {
			rec.Say("%s's cluster still held %s after the block was removed: deleted out of band, so later stages see the estate alone", sd.Name, oldObj.Ref)
			if err := sd.Delete(ctx, oldObj.Ref); err != nil {
				return err
			}
		}
	}
	rec.Say("the block is removed from both roots afterwards")
	return nil
}
