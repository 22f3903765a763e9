package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// The corruptions BREAKs share. Each makes its change, measures, and puts
// the world, the state or the input back before returning.

// unbound removes address from a side's state (the engine's own state rm),
// measures, and puts the state file back byte for byte.
func (s *Side) unbound(ctx context.Context, address string, measure func() (Measured, error)) (Measured, error) {
	restore, err := backupState(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := corrupt(ctx, func() error { _, err := s.Engine.StateRm(ctx, address); return err }); err != nil {
		return undoing(nil, err, restore)
	}
	m, err := measure()
	return undoing(m, err, restore)
}

// deleted deletes an object out of band, measures, and creates it again
// from the copy read before.
func (s *Side) deleted(ctx context.Context, o estate.Object, measure func() (Measured, error)) (Measured, error) {
	u, err := s.Get(ctx, o)
	if err != nil || u == nil {
		return nil, fmt.Errorf("read %s before deleting it: %v", o, cmpErr(err, "not found"))
	}
	// The undo recreates only what the corruption deleted: in a sabotaged
	// run the object was never deleted, and creating a Service again with
	// its clusterIP is refused as "IP already allocated", not as
	// AlreadyExists (the pair's sabotaged pass: could_not_run).
	deletedIt := false
	if err := corrupt(ctx, func() error { deletedIt = true; return s.Delete(ctx, o) }); err != nil {
		return nil, err
	}
	m, err := measure()
	return undoing(m, err, func() error {
		if !deletedIt {
			return nil
		}
		return s.Recreate(ctx, o, u)
	})
}

// breakLabel is the label a BREAK stamps on an object out of band.
const breakLabel = "gauntlet-break"

// labelled adds a stray label to an object out of band, measures, and
// takes it away again.
func (s *Side) labelled(ctx context.Context, o estate.Object, measure func() (Measured, error)) (Measured, error) {
	if err := corrupt(ctx, func() error { return s.Patch(ctx, o, labelPatch(true)) }); err != nil {
		return nil, err
	}
	m, err := measure()
	return undoing(m, err, func() error { return s.Patch(ctx, o, labelPatch(false)) })
}

func labelPatch(add bool) string {
	if add {
		return `{"metadata":{"labels":{"` + breakLabel + `":"yes"}}}`
	}
	return `{"metadata":{"labels":{"` + breakLabel + `":null}}}`
}
