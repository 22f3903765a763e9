package stage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
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

// sameShape asserts the subject's plan has the oracle's shape.
func sameShape(subject, oracle *engine.Plan) error {
	a, b := shape(subject), shape(oracle)
	if !slices.Equal(a, b) || subject.Counts != oracle.Counts {
		return fmt.Errorf("subject planned %s [%s], the oracle %s [%s]", subject.Counts, strings.Join(a, "; "), oracle.Counts, strings.Join(b, "; "))
	}
	return nil
}

// exactly asserts a plan proposes exactly these actions per address and
// nothing else.
func exactly(p *engine.Plan, want map[string]string) error {
	got := map[string]string{}
	for _, c := range p.Actionable() {
		got[c.Address] = strings.Join(c.Actions, "+")
	}
	var diffs []string
	for addr, act := range want {
		if got[addr] != act {
			g := got[addr]
			if g == "" {
				g = "nothing"
			}
			diffs = append(diffs, fmt.Sprintf("%s: want %s, planned %s", addr, act, g))
		}
	}
	for addr, act := range got {
		if _, ok := want[addr]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: unexpected %s", addr, act))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		return fmt.Errorf("plan (%s): %s", p.Counts, strings.Join(diffs, "; "))
	}
	return nil
}

// empty asserts a plan proposes nothing.
func empty(p *engine.Plan) error {
	if a := p.Actionable(); len(a) > 0 || !p.Counts.Zero() {
		return fmt.Errorf("plan is not empty (%s): %s", p.Counts, strings.Join(shape(p), "; "))
	}
	return nil
}

// plan plans on a side's engine with the stage defaults.
func (s *Side) plan(ctx context.Context, o engine.PlanOptions) (*engine.Plan, error) {
	return s.Engine.Plan(ctx, o)
}

// planEmpty plans and asserts nothing is proposed.
func (s *Side) planEmpty(ctx context.Context) error {
	p, err := s.plan(ctx, engine.PlanOptions{})
	if err != nil {
		return err
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
