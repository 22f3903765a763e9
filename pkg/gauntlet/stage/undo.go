package stage

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// worldKey is what a BREAK's undo must give back, object by object: the
// estate's objects present, absent or terminating, and whether one still
// carries the stray label BREAKs stamp. Existence and that label, not
// every field: a recreated object has a new uid and resourceVersion, and
// the server and controllers write fields of their own.
type worldKey map[string]string

// keyOf reads the world key of a side's objects.
func (r *Run) keyOf(ctx context.Context, sd *Side) (worldKey, error) {
	k := worldKey{}
	for _, o := range r.onSide(sd, r.Objects) {
		u, err := sd.Get(ctx, o.Ref)
		if err != nil {
			return nil, err
		}
		switch {
		case u == nil:
			k[o.Ref.String()] = absent
		case u.GetDeletionTimestamp() != nil:
			k[o.Ref.String()] = "terminating"
		case u.GetLabels()[breakLabel] != "":
			k[o.Ref.String()] = present + ", labelled " + breakLabel
		default:
			k[o.Ref.String()] = present
		}
	}
	return k, nil
}

// UndoError is a BREAK whose undo left the world unlike the snapshot taken
// before its corruption: every later measurement would read another world,
// so the BREAK is could_not_undo and the stage fails, naming the objects.
type UndoError struct {
	Side    string
	Changed []string // "ConfigMap ns/x: present before, absent after"
}

func (e *UndoError) Error() string {
	return fmt.Sprintf("the undo left the %s world changed: %s", e.Side, strings.Join(e.Changed, "; "))
}

// compareKeys names every object whose key moved between before and after.
func compareKeys(side string, before, after worldKey) error {
	var changed []string
	for ref, b := range before {
		if a, ok := after[ref]; ok && a != b {
			changed = append(changed, fmt.Sprintf("%s: %s before, %s after", ref, b, a))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return &UndoError{Side: side, Changed: changed}
}
