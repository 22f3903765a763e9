package result

import "testing"

func TestSharedFailure(t *testing.T) {
	drift := func(side, got string) Finding {
		return Finding{Check: "drift planned", Side: side, Address: "kubernetes_manifest.a", Field: "plan", Want: "update", Got: got}
	}
	for _, tc := range []struct {
		name     string
		findings []Finding
		errs     []string
		want     bool
	}{
		{"both sides plan nothing after the tamper", []Finding{drift("subject", "no change"), drift("oracle", "no change")}, nil, true},
		{"the same findings in another order", []Finding{drift("subject", "no change"), {Check: "c", Side: "subject", Object: "ConfigMap a/b", Field: "exists"},
			{Check: "c", Side: "oracle", Object: "ConfigMap a/b", Field: "exists"}, drift("oracle", "no change")}, nil, true},
		{"the subject alone", []Finding{drift("subject", "no change")}, nil, false},
		{"the oracle alone", []Finding{drift("oracle", "no change")}, nil, false},
		{"different values", []Finding{drift("subject", "no change"), drift("oracle", "delete")}, nil, false},
		{"one more on the subject", []Finding{drift("subject", "no change"), drift("subject", "delete"), drift("oracle", "no change")}, nil, false},
		{"a parity finding (no side)", []Finding{drift("", "no change")}, nil, false},
		{"a measurement error beside", []Finding{drift("subject", "no change"), drift("oracle", "no change")}, []string{"oracle: read: refused"}, false},
		{"nothing found", nil, nil, false},
	} {
		if got := SharedFailure(tc.findings, tc.errs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
