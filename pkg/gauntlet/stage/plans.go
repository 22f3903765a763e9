package stage

import (
	"context"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// shape is a plan's actionable changes as "address: actions" lines, the
// form in which subject and oracle plans are compared.
func shape(p *engine.Plan) []string {
	var out []string
	for _, c := range p.Actionable() {
		// Deposed keys are random: the same position reads the same.
		line := deposedKey.ReplaceAllString(c.Address, "(deposed object)") + ": " + strings.Join(c.Actions, "+")
		if c.Importing {
			line += " (import)"
		}
		out = append(out, line)
	}
	for _, c := range p.Changes {
		if c.Noop() && c.Importing {
			out = append(out, c.Address+": import")
		}
	}
	slices.Sort(out)
	return out
}

// sameShape asserts the first plan (this side's) has the second's (the
// other side's) shape: a finding per address whose action differs, want
// being the other's; the caller's side stamps them.
func sameShape(subject, oracle *engine.Plan) error {
	a, b := shape(subject), shape(oracle)
	if slices.Equal(a, b) && subject.Counts == oracle.Counts {
		return nil
	}
	got, want := planActions(subject), planActions(oracle)
	var fs []*result.Finding
	for addr, act := range got {
		if want[addr] != act {
			fs = append(fs, planFinding(addr, want[addr], act))
		}
	}
	for addr, act := range want {
		if _, ok := got[addr]; !ok {
			fs = append(fs, planFinding(addr, act, ""))
		}
	}
	if len(fs) == 0 {
		// The same actions by address, yet not the same plan: counts
		// (or a repeated deposed position) differ.
		fs = append(fs, &result.Finding{Address: "(the plan)", Field: fieldPlanCounts, Want: oracle.Counts.String(), Got: subject.Counts.String(),
			Detail: "[" + strings.Join(a, "; ") + "] against [" + strings.Join(b, "; ") + "]"})
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// exactly asserts a plan proposes exactly these actions per address and
// nothing else: a finding per address that differs, every one named.
func exactly(p *engine.Plan, want map[string]string) error {
	got := map[string]string{}
	for _, c := range p.Actionable() {
		got[c.Address] = strings.Join(c.Actions, "+")
	}
	var fs []*result.Finding
	for addr, act := range want {
		if got[addr] != act {
			fs = append(fs, planFinding(addr, act, got[addr]))
		}
	}
	for addr, act := range got {
		if _, ok := want[addr]; !ok {
			fs = append(fs, planFinding(addr, "", act))
		}
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// empty asserts a plan proposes nothing: a finding per proposed action.
func empty(p *engine.Plan) error {
	if a := p.Actionable(); len(a) == 0 && p.Counts.Zero() {
		return nil
	}
	var fs []*result.Finding
	for addr, act := range planActions(p) {
		fs = append(fs, planFinding(addr, "", act))
	}
	if len(fs) == 0 {
		fs = append(fs, &result.Finding{Address: "(the plan)", Field: fieldPlanCounts, Want: "0 to import, add, change or destroy", Got: p.Counts.String()})
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// sides joins the subject's and the oracle's findings of one check, each
// stamped with its side, so a failure says which side failed.
func sides(check string, subject, oracle error) error {
	return joinSides(result.Stamp(subject, check, "subject"), result.Stamp(oracle, check, "oracle"))
}

// plan plans on a side's engine with the stage defaults.
func (s *Side) plan(ctx context.Context, o engine.PlanOptions) (*engine.Plan, error) {
	return s.Engine.Plan(ctx, o)
}

// planEmpty plans and asserts nothing is proposed.
func (s *Side) planEmpty(ctx context.Context) error {
	p, err := s.plan(ctx, planDefaults())
	if err != nil {
		return measure(s, "plan", err)
	}
	return empty(p)
}

// planBoth plans on both sides at once.
func (r *Run) planBoth(ctx context.Context, o engine.PlanOptions) (subject, oracle *engine.Plan, err error) {
	plans := map[string]*engine.Plan{}
	var mu = &r.mu
	err = r.both(ctx, func(ctx context.Context, s *Side) error {
		p, err := s.plan(ctx, o)
		if err != nil {
			return err
		}
		mu.Lock()
		plans[s.Name] = p
		mu.Unlock()
		return nil
	})
	return plans["subject"], plans["oracle"], err
}

// applyBoth applies (auto-approve) on both sides.
func (r *Run) applyBoth(ctx context.Context, o engine.ApplyOptions) (subject, oracle engine.Applied, err error) {
	res := map[string]engine.Applied{}
	err = r.both(ctx, func(ctx context.Context, s *Side) error {
		a, err := s.Engine.Apply(ctx, o)
		r.mu.Lock()
		res[s.Name] = a
		r.mu.Unlock()
		return err
	})
	return res["subject"], res["oracle"], err
}
