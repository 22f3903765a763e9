package stage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Checkpoint is what the runner keeps before each stage: each side's root
// files and the objects the stages follow. A stage that fails may leave
// its own file, a half-made change or a corrupted object behind; the
// runner puts both sides back to the checkpoint before the next stage, or
// says the next stages would measure another world.
type Checkpoint struct {
	files   map[string]estate.Saved
	objects []Object
}

// Checkpoint takes the checkpoint of both sides' roots.
func (r *Run) Checkpoint() (*Checkpoint, error) {
	cp := &Checkpoint{files: map[string]estate.Saved{}, objects: slices.Clone(r.Objects)}
	for _, sd := range []*Side{r.Subject, r.Oracle} {
		s, err := sd.Root.Save()
		if err != nil {
			return nil, fmt.Errorf("%s: keep the root's files before the stage: %w", sd.Name, err)
		}
		cp.files[sd.Name] = s
	}
	return cp, nil
}

// ReturnTo puts both sides back at cp after a failed stage: the root's
// files as they were, one apply on each side, then a plan that must be
// empty on both - measured, not assumed. It says what it did, or returns
// why the world is not back (a finding of the plan, or the error of a
// call that failed).
func (r *Run) ReturnTo(ctx context.Context, cp *Checkpoint) (string, error) {
	r.Objects = slices.Clone(cp.objects)
	counts := map[string]string{}
	err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := sd.Root.Put(cp.files[sd.Name]); err != nil {
			return fmt.Errorf("%s: put the root's files back: %w", sd.Name, err)
		}
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{})
		if err != nil {
			return fmt.Errorf("%s: the apply that puts the world back: %w", sd.Name, err)
		}
		p, err := sd.Engine.Plan(ctx, engine.PlanOptions{})
		if err != nil {
			return fmt.Errorf("%s: the plan after it: %w", sd.Name, err)
		}
		r.mu.Lock()
		counts[sd.Name] = a.String()
		r.mu.Unlock()
		return result.Stamp(empty(p), "", sd.Name)
	})
	if err != nil {
		var fs []string
		for _, f := range result.FindingsIn(err) {
			fs = append(fs, f.Error())
		}
		if len(fs) > 0 {
			return "", errors.New("the next plan is not empty: " + fmt.Sprint(fs))
		}
		return "", err
	}
	return fmt.Sprintf("the root's files as they were before it, an apply on each side (subject: %s; oracle: %s), and an empty plan on both", counts["subject"], counts["oracle"]), nil
}
