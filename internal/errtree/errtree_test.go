package errtree

import (
	"errors"
	"fmt"
	"testing"
)

type side struct{ name string }

func (s *side) Error() string { return s.name }

// TestEvery: every branch, through wraps and joins, must be decided true.
func TestEvery(t *testing.T) {
	oracle := func(e error) (bool, bool) {
		s, ok := e.(*side)
		return ok && s.name == "oracle", ok
	}
	o, s := &side{"oracle"}, &side{"subject"}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"one leaf":                   {o, true},
		"wrapped, joined":            {fmt.Errorf("apply: %w", errors.Join(o, fmt.Errorf("again: %w", o))), true},
		"a branch decided false":     {errors.Join(o, s), false},
		"a branch that is undecided": {errors.Join(o, errors.New("plain")), false},
		"a join of nothing":          {errors.Join(nil), false},
		"nil":                        {nil, false},
	} {
		if got := Every(tc.err, oracle); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
