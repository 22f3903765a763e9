package result

import (
	"strings"
	"testing"
)

// A run's findings and predictions about secret data show digests after
// SecretDataHidden, the run it was called on is unchanged, other findings
// are left alone, and a prediction of the value a BREAK wrote still
// matches the finding that carries its digest.
func TestSecretDataHidden(t *testing.T) {
	const v = "hunter2-but-longer"
	r := &Run{Stages: []Stage{{
		Checks: []Check{{Findings: []Finding{
			{Object: "Secret ns/a", Field: "data.pw", Want: v, Got: ""},
			{Address: "kubernetes_secret_v1.a", Field: "data", Want: v},
			{Object: "ConfigMap ns/a", Field: "data.pw", Want: v},
		}}},
		Breaks: []Break{{Got: []Finding{{Object: "Secret ns/a", Field: "stringData.x", Got: v}},
			Predictions: []Prediction{{Object: "Secret ns/a", Field: "data.pw", Got: v}}}},
	}}}
	h := r.SecretDataHidden()
	fs := h.Stages[0].Checks[0].Findings
	if !strings.HasPrefix(fs[0].Want, "sha256:") || fs[0].Got != "" || !strings.HasPrefix(fs[1].Want, "sha256:") || fs[2].Want != v {
		t.Errorf("findings: %+v", fs)
	}
	if g, p := h.Stages[0].Breaks[0].Got[0].Got, h.Stages[0].Breaks[0].Predictions[0].Got; g == v || p == v {
		t.Errorf("BREAK: got %q, predicted %q", g, p)
	}
	if r.Stages[0].Checks[0].Findings[0].Want != v || r.Stages[0].Breaks[0].Predictions[0].Got != v {
		t.Errorf("the run it was called on changed")
	}
	pred := r.Stages[0].Breaks[0].Predictions[0]
	if !pred.Matches("", "", &Finding{Object: "Secret ns/a", Field: "data.pw", Got: fs[0].Want}) {
		t.Errorf("a prediction of %q does not match the finding of its digest", v)
	}
	if pred.Matches("", "", &Finding{Object: "Secret ns/a", Field: "data.pw", Got: fs[1].Want[:10] + "…"}) {
		t.Errorf("a prediction matches another digest")
	}
}
