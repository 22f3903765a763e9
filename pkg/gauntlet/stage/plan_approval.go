package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/derive"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func planApproval() Stage {
	return &approvalStage{Described{Info{ID: "plan_approval", Title: "Plan, review, apply", Headline: true, Requirements: []string{"GAUNT-APPROVAL-01", "GAUNT-APPROVAL-02"},
		Needs: []engine.Capability{engine.StalePlanRefusal}, After: []string{"migrate"}}}}
}

type approvalStage struct{ Described }

const approvalPlan = "approval.tfplan"

// approvalOutcome is what applying a saved plan did. A state-file engine
// promises to apply it when only the live world moved (a saved plan
// records state, not the world) and to refuse it once the state changed
// ("Saved plan is stale"); a live-mode engine promises to refuse the moved
// world too.
type approvalOutcome struct {
	applied bool
	exit    int
	// refusal is the summary of the engine's first diagnostic when it did
	// not apply ("Error: Saved plan is stale"): what the engine said, not
	// a word found anywhere in its output.
	refusal string
	message string
}

// staleRefusal is the diagnostic both engine families refuse a saved plan
// with once the state moved on (internal/backend/local in each).
const staleRefusal = "Error: Saved plan is stale"

// Run writes a saved plan (one update), moves the world out of band,
// applies the saved plan and compares what the subject does with what the
// oracle does and with what the engine promises; then applies the same
// file again after the state changed, which every engine must refuse.
func (s *approvalStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	pa, err := r.approvalPlan(ctx)
	if err != nil {
		return err
	}
	// A written plan is a text edit; a derived one adds the label with the
	// HCL writer, which also sets it to another value for the BREAK.
	derived := pa.Edit.Old == ""
	label := func(sd *Side, value string) error {
		if derived {
			return sd.Root.SetLabel(pa.Address, derive.ReviewedLabel, value)
		}
		return sd.Root.Edit(estate.Edit{Old: `reviewed = "` + other(value) + `"`, New: `reviewed = "` + value + `"`, File: pa.Edit.File})
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if derived {
			return label(sd, "yes")
		}
		return sd.Root.Edit(pa.Edit)
	}); err != nil {
		return err
	}
	want := map[string]string{pa.Address: "update"}
	if derived {
		want = labelled(r.Objects, pa.Address)
	}
	outcomes := map[string]approvalOutcome{}
	stale := map[string]approvalOutcome{}
	var planned engine.Counts
	err = r.both(ctx, func(ctx context.Context, sd *Side) error {
		p, err := sd.Engine.Plan(ctx, engine.PlanOptions{Out: approvalPlan})
		if err != nil {
			return err
		}
		if err := exactly(p, want); err != nil {
			return fmt.Errorf("saved plan: %w", err)
		}
		if err := sd.Patch(ctx, pa.Move.Object, pa.Move.Patch); err != nil {
			return err
		}
		o := outcome(sd.Engine.Apply(ctx, engine.ApplyOptions{PlanFile: approvalPlan}))
		// The same file again: the state has moved on since it was made.
		st := outcome(sd.Engine.Apply(ctx, engine.ApplyOptions{PlanFile: approvalPlan}))
		r.mu.Lock()
		outcomes[sd.Name], stale[sd.Name] = o, st
		if sd.Name == "subject" {
			planned = p.Counts
		}
		r.mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	subj, orc := outcomes["subject"], outcomes["oracle"]
	live := r.Subject.Engine.Engine.Profile.Has(engine.LiveMode)
	// A live-mode engine refuses the moved world in words of its own: any
	// refusal it explains with a diagnostic keeps that promise.
	promise := func(o approvalOutcome, livePromise bool) error {
		want := map[bool]string{true: refusedWord, false: appliedWord}[livePromise]
		if got := o.word(); got != want && !(livePromise && !o.applied && o.refusal != "") {
			return &result.Finding{Object: savedPlanObject, Field: fieldSavedPlan, Want: want, Got: got, Detail: fmt.Sprintf("exit %d: %s", o.exit, o.message)}
		}
		return nil
	}
	refused := func(o approvalOutcome) error {
		if got := o.word(); got != staleWord {
			return &result.Finding{Object: savedPlanObject, Field: fieldSavedPlan, Want: staleWord, Got: got, Detail: fmt.Sprintf("exit %d: %s", o.exit, o.message)}
		}
		return nil
	}
	const (
		promised       = "the saved plan does what the engine promises"
		oraclePromised = "the oracle's saved plan applied when only the world moved"
		stalePlan      = "a saved plan made stale by a state change is refused"
		oracleStale    = "the oracle refuses the stale plan too"
		readback       = "the reviewed label reads back"
		next           = "next plan empty"
	)
	rec.Check(promised, promise(subj, live), fmt.Sprintf("exit %d", subj.exit))
	rec.Check(oraclePromised, promise(orc, false), fmt.Sprintf("exit %d", orc.exit))
	rec.Check(stalePlan, refused(stale["subject"]), stale["subject"].message)
	rec.Check(oracleStale, refused(stale["oracle"]), stale["oracle"].message)
	// Take the stray change back: the world is the root's again.
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		return sd.Patch(ctx, pa.Move.Object, undoAdd(pa.Move.Patch))
	}); err != nil {
		return err
	}
	reads := func(ctx context.Context, sd *Side) error {
		u, err := sd.Get(ctx, pa.Object)
		if err != nil {
			return err
		}
		if !exists(u) {
			return &result.Finding{Address: pa.Address, Object: pa.Object.String(), Field: fieldExists, Want: present, Got: absent}
		}
		if v := u.GetLabels()["reviewed"]; v != "yes" {
			return &result.Finding{Address: pa.Address, Object: pa.Object.String(), Field: fieldReviewed, Want: "yes", Got: v}
		}
		return nil
	}
	rec.Check(readback, r.both(ctx, reads), pa.Object.String())
	r.breakBoth(ctx, rec, Breaking{Name: "relabel", Corruption: "sets reviewed=no on " + pa.Object.String() + " out of band",
		Victim: pa.Object.String(), Covers: []string{readback}, Predict: []result.Prediction{{Object: pa.Object.String(), Field: fieldReviewed, Got: "no"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := corrupt(ctx, func() error { return sd.Patch(ctx, pa.Object, `{"metadata":{"labels":{"reviewed":"no"}}}`) }); err != nil {
			return nil, err
		}
		return undoing(one(readback, reads(ctx, sd)), nil, func() error {
			return sd.Patch(ctx, pa.Object, `{"metadata":{"labels":{"reviewed":"yes"}}}`)
		})
	})
	// A saved plan made after a state change cannot be stale: applying a
	// fresh one must turn the refusal checks red.
	r.breakBoth(ctx, rec, Breaking{Name: "fresh_plan", Corruption: "replaces " + approvalPlan + " with a plan made from the current state",
		Victim: approvalPlan, Covers: []string{stalePlan}, OracleCovers: []string{oracleStale},
		Predict: []result.Prediction{{Object: savedPlanObject, Field: fieldSavedPlan, Got: appliedWord}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := corrupt(ctx, func() error { _, err := sd.Engine.Plan(ctx, engine.PlanOptions{Out: approvalPlan}); return err }); err != nil {
			return nil, err
		}
		o := outcome(sd.Engine.Apply(ctx, engine.ApplyOptions{PlanFile: approvalPlan}))
		return Measured{stalePlan: refused(o), oracleStale: refused(o)}, nil
	})
	// The state moved on between plan and apply: a state-file engine must
	// refuse the saved plan then, so the "applied" checks must turn red.
	r.breakBoth(ctx, rec, Breaking{Name: "state_moved", Corruption: "changes the state (state rm of " + r.victim().Address + ") between plan -out and apply",
		Victim: approvalPlan, Covers: []string{promised}, OracleCovers: []string{oraclePromised},
		Predict: []result.Prediction{{Object: savedPlanObject, Field: fieldSavedPlan, Got: staleWord}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := label(sd, "again"); err != nil {
			return nil, err
		}
		// A saved plan that applied (the corruption skipped, or an engine
		// that ignores its state) set the label to "again" in the world:
		// the undo applies the root again so the world is the root's.
		var applied bool
		undoEdit := func() error {
			if err := label(sd, "yes"); err != nil || !applied {
				return err
			}
			_, err := sd.Engine.Apply(ctx, engine.ApplyOptions{})
			return err
		}
		if _, err := sd.Engine.Plan(ctx, engine.PlanOptions{Out: approvalPlan}); err != nil {
			return undoing(nil, err, undoEdit)
		}
		m, err := sd.unbound(ctx, r.victim().Address, func() (Measured, error) {
			o := outcome(sd.Engine.Apply(ctx, engine.ApplyOptions{PlanFile: approvalPlan}))
			applied = o.applied
			return Measured{promised: promise(o, false), oraclePromised: promise(o, false)}, nil
		})
		return undoing(m, err, undoEdit)
	})
	r.CheckPlanEmpty(ctx, rec, next, r.victim())
	rec.Claim([]string{promised, oraclePromised, stalePlan, oracleStale}, "plan -out wrote %s (%s); the world then moved out of band (%s on %s) and %s applied the saved plan (exit %d) exactly as stock did on the oracle cluster (exit %d) - a state-file engine checks a saved plan against its state, not the world; applying the same file again after the state moved on was refused by both (%s)",
		updates(want), planned, "a JSON patch", pa.Move.Object, r.Subject.Engine.Engine.Profile.Name, subj.exit, orc.exit, stale["subject"].message)
	rec.Claim([]string{readback, next}, "reviewed=yes reads back on both clusters and the next plan is empty")
	return nil
}

// labelled is what the derived label edit updates: the edit is the
// block's, so every instance of the block at address (and of its module
// calls) the estate has takes the label, one update each. derive picks
// only blocks whose module folder one call reaches, so no other block
// changes with it.
func labelled(objs []Object, address string) map[string]string {
	want := map[string]string{address: "update"}
	blk := estate.BlockOf(address)
	for _, o := range objs {
		if estate.BlockOf(o.Address) == blk {
			want[o.Address] = "update"
		}
	}
	return want
}

// updates names a plan's expected updates for a claim.
func updates(want map[string]string) string {
	addrs := slices.Sorted(maps.Keys(want))
	if len(addrs) == 1 {
		return "one update, " + addrs[0]
	}
	return fmt.Sprintf("%d updates, one per instance of the labelled block: %s", len(addrs), strings.Join(addrs, ", "))
}

// What the saved-plan checks find: the saved plan applied or refused.
const (
	savedPlanObject = "the saved plan " + approvalPlan
	fieldSavedPlan  = "apply of the saved plan"
	fieldReviewed   = "metadata.labels.reviewed"
	appliedWord     = "applied"
	refusedWord     = "refused"
	staleWord       = "refused as stale"
)

// word is what applying the saved plan did: applied, refused as stale
// (the engine's own refusal), or failed for another reason, named - a
// refused connection or a crash never reads as the refusal.
func (o approvalOutcome) word() string {
	switch {
	case o.applied:
		return appliedWord
	case o.refusal == staleRefusal:
		return staleWord
	case o.refusal != "":
		return "failed, not refused as stale: " + o.refusal
	default:
		return fmt.Sprintf("failed without a diagnostic (exit %d)", o.exit)
	}
}

// other is the value a text edit of the reviewed label replaces.
func other(value string) string {
	if value == "yes" {
		return "again"
	}
	return "yes"
}

func outcome(a engine.Applied, err error) approvalOutcome {
	if err == nil {
		return approvalOutcome{applied: true, exit: 0, message: a.String()}
	}
	msg := a.Call.Output
	if i := strings.Index(msg, "Error: "); i >= 0 {
		msg = msg[i:]
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	var refusal string
	if d := callDiagnostic(err); d != "" {
		refusal = planErrorSummary(d)
	}
	return approvalOutcome{exit: engine.ExitCode(err), refusal: refusal, message: strings.TrimSpace(msg)}
}

// undoAdd turns a JSON patch of "add" operations into their removal.
func undoAdd(patch string) string {
	var ops []struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal([]byte(patch), &ops); err != nil {
		return "[]"
	}
	var out []map[string]string
	for _, op := range ops {
		out = append(out, map[string]string{"op": "remove", "path": op.Path})
	}
	b, _ := json.Marshal(out)
	return string(b)
}
