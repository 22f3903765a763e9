package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

func planApproval() Stage {
	return &approvalStage{info{id: "plan_approval", title: "Plan, review, apply", headline: true, reqs: []string{"GAUNT-APPROVAL-01", "GAUNT-APPROVAL-02"}, after: []string{"migrate"}}}
}

type approvalStage struct{ info }

const approvalPlan = "approval.tfplan"

// approvalOutcome is what applying a saved plan did. A state-file engine
// promises to apply it when only the live world moved (a saved plan
// records state, not the world) and to refuse it once the state changed
// ("Saved plan is stale"); a live-mode engine promises to refuse the moved
// world too.
type approvalOutcome struct {
	applied bool
	exit    int
	message string
}

// Run writes a saved plan (one update), moves the world out of band,
// applies the saved plan and compares what the subject does with what the
// oracle does and with what the engine promises; then applies the same
// file again after the state changed, which every engine must refuse.
func (s *approvalStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	pa := r.Spec.PlanApproval
	if pa == nil {
		return fmt.Errorf("the estate has no plan_approval section")
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.Edit(pa.Edit) }); err != nil {
		return err
	}
	want := map[string]string{pa.Address: "update"}
	outcomes := map[string]approvalOutcome{}
	stale := map[string]approvalOutcome{}
	var planned engine.Counts
	err := r.both(ctx, func(ctx context.Context, sd *Side) error {
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
	promise := func(o approvalOutcome, livePromise bool) error {
		if livePromise && o.applied {
			return fmt.Errorf("the saved plan applied (exit %d) although the world moved", o.exit)
		}
		if !livePromise && !o.applied {
			return fmt.Errorf("the saved plan was refused (exit %d: %s), but a state-file engine applies it when only the world moved", o.exit, o.message)
		}
		return nil
	}
	live := r.Subject.Engine.Engine.Profile.Has(engine.LiveMode)
	if !rec.Check("the saved plan does what the engine promises", promise(subj, live), fmt.Sprintf("exit %d", subj.exit)) {
		return nil
	}
	if !live {
		rec.Check("same as the oracle", func() error {
			if subj.applied != orc.applied {
				return fmt.Errorf("subject applied=%v, oracle applied=%v", subj.applied, orc.applied)
			}
			return nil
		}(), "")
	}
	refused := func(o approvalOutcome) error {
		if o.applied || !strings.Contains(o.message, "stale") {
			return fmt.Errorf("applying the saved plan a second time gave exit %d (%s), want a stale-plan refusal", o.exit, o.message)
		}
		return nil
	}
	rec.Check("a saved plan made stale by a state change is refused", refused(stale["subject"]), stale["subject"].message)
	rec.Check("the oracle refuses the stale plan too", refused(stale["oracle"]), "")
	if err := rec.Break("expect_refusal", "expects a live engine's refusal after the world moved", func() (error, error) {
		return promise(subj, true), nil
	}); err != nil {
		return err
	}
	// Take the stray change back and check the world is the root's.
	err = r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := sd.Patch(ctx, pa.Move.Object, undoAdd(pa.Move.Patch)); err != nil {
			return err
		}
		u, err := sd.Get(ctx, pa.Object)
		if err != nil || u == nil {
			return fmt.Errorf("read %s: %v", pa.Object, err)
		}
		if u.GetLabels()["reviewed"] != "yes" {
			return fmt.Errorf("%s lacks reviewed=yes after the apply", pa.Object)
		}
		return sd.planEmpty(ctx)
	})
	rec.Check("the reviewed change reads back, next plan empty", err, "")
	rec.Say("plan -out wrote one update (%s, %s); the world then moved out of band (%s on %s) and %s applied the saved plan (exit %d) exactly as stock did on the oracle cluster (exit %d) - a state-file engine checks a saved plan against its state, not the world; applying the same file again after the state moved on was refused by both (%s)",
		pa.Address, planned, "a JSON patch", pa.Move.Object, r.Subject.Engine.Engine.Profile.Name, subj.exit, orc.exit, stale["subject"].message)
	return nil
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
	return approvalOutcome{exit: engine.ExitCode(err), message: strings.TrimSpace(msg)}
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
