package stage

import (
	"context"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// planUnbound plans on the subject with address removed from its state,
// then puts the state back exactly as it was: the BREAK for assertions
// that depend on an object being bound by the state.
func (r *Run) planUnbound(ctx context.Context, address string) (*engine.Plan, error) {
	restore, err := r.backupState(r.Subject)
	if err != nil {
		return nil, err
	}
	if _, err := r.Subject.Engine.StateRm(ctx, address); err != nil {
		restore()
		return nil, err
	}
	p, err := r.Subject.plan(ctx, planDefaults())
	if rerr := restore(); err == nil {
		err = rerr
	}
	return p, err
}
