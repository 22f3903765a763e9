package bisect

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// fake says bad for the candidates before the boundary index, good from
// it on, and skip for those listed.
func fake(candidates []string, boundary int, skip ...string) (Probe, *[]string) {
	var probed []string
	return func(_ context.Context, e string) (Step, error) {
		probed = append(probed, e)
		if slices.Contains(skip, e) {
			return Step{Engine: e, Outcome: Skip}, nil
		}
		if slices.Index(candidates, e) < boundary {
			return Step{Engine: e, Outcome: Bad}, nil
		}
		return Step{Engine: e, Outcome: Good}, nil
	}, &probed
}

func TestRunFindsTheBoundary(t *testing.T) {
	c := []string{"1.8.11", "1.9.4", "1.10.10", "1.11.5", "1.12.6"}
	for boundary := 1; boundary < len(c); boundary++ {
		p, probed := fake(c, boundary)
		r, err := Run(context.Background(), c, len(c)-1, 0, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Before != c[boundary-1] || r.After != c[boundary] || !r.Exact {
			t.Errorf("boundary %d: got %s -> %s exact %v", boundary, r.Before, r.After, r.Exact)
		}
		if len(*probed) > 4 {
			t.Errorf("boundary %d: %d probes %v, want at most 2 + log2(3)", boundary, len(*probed), *probed)
		}
	}
}

func TestRunStepsAroundSkips(t *testing.T) {
	c := []string{"a", "b", "c", "d", "e"}
	p, _ := fake(c, 3, "c")
	r, err := Run(context.Background(), c, 4, 0, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Before != "b" || r.After != "d" || r.Exact {
		t.Errorf("got %s -> %s exact %v, want b -> d, not exact (c skipped)", r.Before, r.After, r.Exact)
	}
}

func TestRunRefusesEndpointsThatAgree(t *testing.T) {
	c := []string{"a", "b", "c"}
	p, _ := fake(c, 0)
	if _, err := Run(context.Background(), c, 0, 2, p); err == nil || !strings.Contains(err.Error(), "c was named bad but is good") {
		t.Errorf("err %v", err)
	}
	p, _ = fake(c, 1, "a")
	if _, err := Run(context.Background(), c, 2, 0, p); err == nil || !strings.Contains(err.Error(), "a was named bad but is skip") {
		t.Errorf("a skipped endpoint: err %v", err)
	}
	if _, err := Run(context.Background(), c, 1, 1, p); err == nil {
		t.Error("one candidate as both ends accepted")
	}
}

// TestRunHoldsTheEndsToTheirNames: ends named the wrong way round are
// refused after their two probes, with no bisection.
func TestRunHoldsTheEndsToTheirNames(t *testing.T) {
	c := []string{"a", "b", "c", "d", "e"}
	p, probed := fake(c, 2) // a and b bad, c to e good
	if _, err := Run(context.Background(), c, 0, 4, p); err == nil || !strings.Contains(err.Error(), "e was named bad but is good") {
		t.Errorf("good and bad swapped: err %v", err)
	}
	if len(*probed) != 1 {
		t.Errorf("probed %v, want only the bad end before refusing", *probed)
	}
}
