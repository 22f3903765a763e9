package stage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestSameOnBoth: a stage stopped by the subject and the oracle printing
// the same errors is told apart from a stop on one side, or from sides
// that failed differently - the runner makes only the first a limitation.
func TestSameOnBoth(t *testing.T) {
	call := func(name, out string) error {
		return &engine.CallError{Engine: name, Call: engine.Call{Args: []string{"apply"}, ExitCode: 1, Output: out}, Err: errors.New("exit status 1")}
	}
	side := func(name string, err error) error { return &result.SideError{Side: name, Err: err} }
	const identity = "Error: Missing Resource Identity After Update\n\n  with kubernetes_stateful_set.keycloak_cluster,\n  on main.tf line 57\n"
	const other = "Error: Invalid reference\n\n  on main.tf line 3\n"
	same := joinSides(side("subject", call("tofu", identity)), side("oracle", call("terraform", identity)))
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"the same errors on both":   {same, true},
		"wrapped by the stage":      {fmt.Errorf("import apply: %w", same), true},
		"joined with another error": {errors.Join(same, errors.New("read back: timeout")), false},
		"different errors":          {joinSides(side("subject", call("tofu", identity)), side("oracle", call("terraform", other))), false},
		"the subject alone":         {joinSides(side("subject", call("tofu", identity)), nil), false},
		"no error":                  {nil, false},
	} {
		if got := SameOnBoth(tc.err); got != tc.want {
			t.Errorf("%s: SameOnBoth = %v, want %v (%v)", name, got, tc.want, tc.err)
		}
	}
}
