package stage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/derive"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestARootOfOneObjectCannotCarryARemoval: with no removal derived, a root
// of one object is a shape the stage cannot apply to (NotApplicable.Shape,
// said with the count), while a bigger root keeps the derivation's reason
// and is merely not derived; other stages of a one-object root are not
// shapes; a removal written in estate.yaml is never questioned.
func TestARootOfOneObjectCannotCarryARemoval(t *testing.T) {
	const derived = "no removal derived: no live leaf"
	run := func(objects int) *Run {
		return &Run{Spec: &estate.Spec{}, derived: &derive.Plans{Why: map[string]string{
			"day2_remove": derived, "drift_reconverge": "no drift derived", "plan_approval": "no plan-approval edit derived"}}, derivedObjects: objects}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		objects int
		shape   bool
		reason  string
	}{{1, true, "the root has one kubernetes object: a removal needs another one kept through it"}, {0, true, "the root has no kubernetes object"}, {3, false, derived}} {
		_, err := run(tc.objects).removePlan(ctx)
		var na *NotApplicable
		if !errors.As(err, &na) || na.Shape != tc.shape || !strings.Contains(na.Reason, tc.reason) {
			t.Errorf("a root of %d object(s): %#v, want shape %v saying %q", tc.objects, na, tc.shape, tc.reason)
		}
		// Typed for a program (the estate's test reads it against not_derived).
		if want := map[bool]result.Cause{true: "", false: result.CauseNotDerived}[tc.shape]; na != nil && na.Cause != want {
			t.Errorf("a root of %d object(s): cause %q, want %q", tc.objects, na.Cause, want)
		}
	}
	r := run(1)
	if _, err := r.driftPlan(ctx); !errors.As(err, new(*NotApplicable)) || err.(*NotApplicable).Shape || err.(*NotApplicable).Cause != result.CauseNotDerived {
		t.Errorf("drift of a root of one object: %#v, want not derived, not a shape", err)
	}
	if _, err := r.approvalPlan(ctx); !errors.As(err, new(*NotApplicable)) || err.(*NotApplicable).Shape {
		t.Errorf("plan approval of a root of one object: %#v, want not derived, not a shape", err)
	}
	r.Spec.Remove = &estate.Remove{Address: "kubernetes_config_map_v1.only"}
	if p, err := r.removePlan(ctx); err != nil || p != r.Spec.Remove {
		t.Errorf("a removal written in estate.yaml: %v, %v", p, err)
	}
}
