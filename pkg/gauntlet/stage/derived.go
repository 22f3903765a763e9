package stage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/derive"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NotApplicable is returned by a stage that does not apply to this estate,
// with the reason. Shape says the root's shape cannot carry the stage: no
// object of it could, every candidate searched (a root of one object has
// no neighbour to keep through a removal); the stage is then
// not_applicable, which costs the run no clear. Without Shape gauntlet
// merely found no plan for it (the estate does not declare the section,
// no candidate fit the derivation): the stage is not_run, never a pass.
type NotApplicable struct {
	Reason string
	Shape  bool
	// Cause, for a stage not run (not Shape), says why in a form the
	// tests read: CauseCapability where neither the estate nor the engine
	// has what the stage needs, CauseNotDerived where the derivation
	// found no candidate to act on.
	Cause result.Cause
}

func (n *NotApplicable) Error() string { return n.Reason }

// IsNotApplicable returns the reason a stage did not apply, if err says so.
func IsNotApplicable(err error) (string, bool) {
	var na *NotApplicable
	if errors.As(err, &na) {
		return na.Reason, true
	}
	return "", false
}

// plans returns the stage plans gauntlet derives from the root for the
// sections estate.yaml leaves out, deriving them once, from the subject's
// root and live objects, the first time a stage asks (before any stage
// edits the root). Every choice, derived or written, is recorded for the
// evidence page.
func (r *Run) plans(ctx context.Context) (*derive.Plans, error) {
	r.mu.Lock()
	done := r.derived != nil
	r.mu.Unlock()
	if done {
		return r.derived, nil
	}
	in := derive.Input{Dir: r.Subject.Root.Dir, Live: map[string]*unstructured.Unstructured{}}
	for _, o := range r.Objects {
		in.Objects = append(in.Objects, derive.Object{Address: o.Address, Type: o.Type, Ref: o.Ref})
		u, err := r.Subject.Get(ctx, o.Ref)
		if err != nil {
			return nil, fmt.Errorf("derive stage plans: %w", err)
		}
		if exists(u) {
			in.Live[o.Address] = u
		}
	}
	s := r.Spec
	if s.Rename != nil {
		in.Exclude = append(in.Exclude, s.Rename.From)
	}
	if s.Remove != nil {
		in.Exclude = append(in.Exclude, s.Remove.Address)
	}
	if s.PlanApproval != nil {
		in.Exclude = append(in.Exclude, s.PlanApproval.Address)
	}
	p, err := derive.Derive(in)
	if err != nil {
		return nil, err
	}
	var choices []result.Choice
	add := func(stage string, written bool, fields ...string) {
		c := result.Choice{Stage: stage, Source: "derived", Why: p.Why[stage], Fields: choiceFields(fields...)}
		if written {
			c.Source, c.Why = "estate.yaml", "written in estate.yaml"
		}
		choices = append(choices, c)
	}
	drift, rename, remove, approval := s.Drift, s.Rename, s.Remove, s.PlanApproval
	if drift == nil {
		drift = p.Drift
	}
	if rename == nil {
		rename = p.Rename
	}
	if remove == nil {
		remove = p.Remove
	}
	if approval == nil {
		approval = p.PlanApproval
	}
	if drift != nil {
		add("drift_reconverge", s.Drift != nil, driftFields(drift)...)
	} else {
		add("drift_reconverge", false)
	}
	if rename != nil {
		add("day2_rename", s.Rename != nil, "from", rename.From, "to", rename.To)
	} else {
		add("day2_rename", false)
	}
	if remove != nil {
		add("day2_remove", s.Remove != nil, "address", remove.Address, "object", remove.Object.String(), "neighbour", remove.Neighbour.String())
	} else {
		add("day2_remove", false)
	}
	if approval != nil {
		add("plan_approval", s.PlanApproval != nil, "address", approval.Address, "object", approval.Object.String(),
			"move object", approval.Move.Object.String(), "move patch", approval.Move.Patch)
	} else {
		add("plan_approval", false)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.derived, r.Choices, r.derivedObjects = p, choices, len(in.Objects)
	return p, nil
}

// notDerived is the NotApplicable of a stage for which the derivation
// found no plan. A root with fewer objects than any plan of the stage
// needs cannot carry it, whatever its objects are: that is its shape
// (Shape, the stage is not_applicable). Otherwise the derivation's own
// reason stands and the stage is not_run: another root of this size
// might have had a candidate.
func (r *Run) notDerived(p *derive.Plans, id string) *NotApplicable {
	r.mu.Lock()
	n := r.derivedObjects
	r.mu.Unlock()
	if least, why := leastObjects(id); n < least {
		return &NotApplicable{Reason: fmt.Sprintf("the root has %s: %s", objectCount(n), why), Shape: true}
	}
	return &NotApplicable{Reason: p.Why[id], Cause: result.CauseNotDerived}
}

// leastObjects is how many kubernetes objects the root must hold for the
// stage to mean anything, and why; 0 for a stage one object can carry.
// Only what the stage asserts counts: a removal is about the neighbour it
// keeps. That drift and plan approval derive their BREAK or their move
// from a second object is gauntlet's way of doing them, not the estate's
// shape, so a root of one object leaves them not_run.
func leastObjects(id string) (int, string) {
	if id == "day2_remove" {
		return 2, "a removal needs another one kept through it, its uid and resourceVersion unchanged"
	}
	return 0, ""
}

func objectCount(n int) string {
	switch n {
	case 0:
		return "no kubernetes object"
	case 1:
		return "one kubernetes object"
	}
	return fmt.Sprintf("%d kubernetes objects", n)
}

// driftPlan is estate.yaml's drift section, else the derived one.
func (r *Run) driftPlan(ctx context.Context) (*estate.Drift, error) {
	p, err := r.plans(ctx)
	if err != nil {
		return nil, err
	}
	if r.Spec.Drift != nil {
		return r.Spec.Drift, nil
	}
	if p.Drift == nil {
		return nil, r.notDerived(p, "drift_reconverge")
	}
	r.mu.Lock()
	tried := r.driftTried
	r.mu.Unlock()
	if tried != nil {
		return tried.plan, tried.err
	}
	d, err := r.tryDrift(ctx, p)
	r.mu.Lock()
	r.driftTried = &driftTrial{plan: d, err: err}
	r.mu.Unlock()
	return d, err
}

// driftTrial is the derived drift after its candidates were tried on
// stock.
type driftTrial struct {
	plan *estate.Drift
	err  error
}

// tryDrift takes, of the derived drift candidates, the first two stock
// sees: on the oracle it tampers each candidate's field, plans, and puts
// the field back, until two plans proposed exactly that update. A drift
// stock does not detect (the provider ignores that field) would fail the
// stage on both sides and prove nothing about the engine. On a side
// recorded to or replayed from a tape the candidates are taken in order
// (a trial would add calls the other mode lacks).
func (r *Run) tryDrift(ctx context.Context, p *derive.Plans) (*estate.Drift, error) {
	if r.Oracle.Tape != nil {
		return p.Drift, nil
	}
	var seen []derive.DriftCandidate
	var unseen []string
	for _, c := range p.DriftCandidates {
		if len(seen) == 2 {
			break
		}
		if err := r.Oracle.Patch(ctx, c.Object, c.Tamper()); err != nil {
			return nil, fmt.Errorf("try the drift of %s on stock: %w", c, err)
		}
		plan, perr := r.Oracle.plan(ctx, planDefaults())
		if err := r.Oracle.Patch(ctx, c.Object, c.Untamper()); err != nil {
			return nil, fmt.Errorf("put back the drift of %s tried on stock: %w", c, err)
		}
		if perr != nil {
			return nil, fmt.Errorf("try the drift of %s on stock: %w", c, perr)
		}
		if exactly(plan, map[string]string{c.Address: "update"}) != nil {
			unseen = append(unseen, fmt.Sprintf("%s (stock planned %s)", c, plan.Counts))
			continue
		}
		seen = append(seen, c)
	}
	skipped := ""
	if len(unseen) > 0 {
		skipped = "; passed over because stock does not see it tampered: " + strings.Join(unseen, ", ")
	}
	if len(seen) < 2 {
		why := fmt.Sprintf("no drift derived that stock detects: of %d candidates tried on the oracle, %d made stock plan exactly its update (it needs two: one to drift, one for the BREAK)%s", len(p.DriftCandidates), len(seen), skipped)
		r.noteChoice("drift_reconverge", why, nil)
		return nil, &NotApplicable{Reason: why, Cause: result.CauseNotDerived}
	}
	d, why := derive.DriftOf(seen[0], seen[1])
	if skipped != "" {
		r.noteChoice("drift_reconverge", why+skipped, d)
	}
	return d, nil
}

// driftFields are a drift plan's fields as a choice records them, in
// name, value pairs.
func driftFields(d *estate.Drift) []string {
	return []string{"address", d.Address, "object", d.Object.String(), "field", d.Field,
		"want", d.Want, "patch", d.Patch, "break object", d.Break.Object.String(), "break patch", d.Break.Patch}
}

// choiceFields are a choice's fields from name, value pairs, leaving out
// empty values.
func choiceFields(pairs ...string) []result.Field {
	var out []result.Field
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out = append(out, result.Field{Name: pairs[i], Value: pairs[i+1]})
		}
	}
	return out
}

// noteChoice replaces the recorded reason of a derived stage plan and its
// fields: those of d, the plan the trial on stock chose, or none when it
// chose none.
func (r *Run) noteChoice(stage, why string, d *estate.Drift) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.Choices {
		c := &r.Choices[i]
		if c.Stage != stage || c.Source != "derived" {
			continue
		}
		c.Why, c.Fields = why, nil
		if d != nil {
			c.Fields = choiceFields(driftFields(d)...)
		}
	}
}

func (r *Run) renamePlan(ctx context.Context) (*estate.Rename, error) {
	p, err := r.plans(ctx)
	if err != nil {
		return nil, err
	}
	if r.Spec.Rename != nil {
		return r.Spec.Rename, nil
	}
	if p.Rename == nil {
		return nil, r.notDerived(p, "day2_rename")
	}
	return p.Rename, nil
}

func (r *Run) removePlan(ctx context.Context) (*estate.Remove, error) {
	p, err := r.plans(ctx)
	if err != nil {
		return nil, err
	}
	if r.Spec.Remove != nil {
		return r.Spec.Remove, nil
	}
	if p.Remove == nil {
		return nil, r.notDerived(p, "day2_remove")
	}
	return p.Remove, nil
}

func (r *Run) approvalPlan(ctx context.Context) (*estate.PlanApproval, error) {
	p, err := r.plans(ctx)
	if err != nil {
		return nil, err
	}
	if r.Spec.PlanApproval != nil {
		return r.Spec.PlanApproval, nil
	}
	if p.PlanApproval == nil {
		return nil, r.notDerived(p, "plan_approval")
	}
	return p.PlanApproval, nil
}
