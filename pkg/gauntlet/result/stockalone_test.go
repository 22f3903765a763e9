package result

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// TestStockAlone: a failure that is stock's alone - findings only on the
// oracle, or an abort whose every part is the oracle's - is told apart
// from the engine's and from a shared one.
func TestStockAlone(t *testing.T) {
	oracle := Finding{Side: "oracle", Address: "a", Field: "plan", Want: "nothing", Got: "update"}
	subject := oracle
	subject.Side = "subject"
	if !StockAloneFailure([]Finding{oracle}, nil) {
		t.Error("an oracle-only finding is stock's alone")
	}
	if StockAloneFailure([]Finding{oracle, subject}, nil) || StockAloneFailure([]Finding{subject}, nil) || StockAloneFailure([]Finding{oracle}, []string{"read failed"}) || StockAloneFailure(nil, nil) {
		t.Error("a subject finding, a measurement error or no finding is never stock's alone")
	}
	call := errors.New("terraform apply: exit status 1")
	if !StockAlone(errors.Join(&SideError{Side: "oracle", Err: call})) || !StockAlone(&SideError{Side: "oracle", Err: call}) ||
		!StockAlone(fmt.Errorf("import apply: %w", errors.Join(&SideError{Side: "oracle", Err: call}))) {
		t.Error("an abort from the oracle's side alone")
	}
	if StockAlone(errors.Join(&SideError{Side: "oracle", Err: call}, &SideError{Side: "subject", Err: call})) || StockAlone(call) || StockAlone(errors.Join(&SideError{Side: "oracle", Err: call}, call)) || StockAlone(nil) {
		t.Error("an abort with a subject part, or of no side, is not stock's alone")
	}
}

// TestSidesOf: the sides that stopped a stage, from the error's tree.
func TestSidesOf(t *testing.T) {
	call := errors.New("apply: exit status 1")
	both := fmt.Errorf("import apply: %w", errors.Join(&SideError{Side: "oracle", Err: call}, &SideError{Side: "subject", Err: call}))
	for name, tc := range map[string]struct {
		err  error
		want []string
	}{
		"both, wrapped and joined": {both, []string{"subject", "oracle"}},
		"the oracle alone":         {&SideError{Side: "oracle", Err: call}, []string{"oracle"}},
		"no side":                  {call, nil},
		"nil":                      {nil, nil},
	} {
		if got := SidesOf(tc.err); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
