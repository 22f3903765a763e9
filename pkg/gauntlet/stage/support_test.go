package stage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDiscoveryAsksAgainOnlyOnTransientErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "metrics.k8s.io", Resource: "pods"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("GET: %w", apierrors.NewInternalError(errors.New("Unauthorized"))), true},
		{apierrors.NewServiceUnavailable("backend down"), true},
		{apierrors.NewUnauthorized("not yet"), true},
		{apierrors.NewNotFound(gr, "v1beta1"), false},
		{errors.New("answered with 0 resources"), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// An answer of the API server is a finding about the APIService; a GET
// that got no answer is a measurement error, never a finding.
func TestDiscoveryFindings(t *testing.T) {
	sd := &Side{Name: "subject"}
	ref := estate.Object{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Name: "v1beta1.metrics.k8s.io"}
	p := result.Prediction{Object: ref.String(), Field: fieldDiscovery, Got: "server error"}
	f := result.FindingsIn(discoveryFinding(sd, ref, "/apis/metrics.k8s.io/v1beta1", fmt.Errorf("GET: %w", apierrors.NewServiceUnavailable("backend down"))))
	if len(f) != 1 || !p.Matches("c", "subject", f[0]) {
		t.Errorf("a 503 is not the predicted finding: %+v", f)
	}
	err := discoveryFinding(sd, ref, "/apis/metrics.k8s.io/v1beta1", errors.New("dial tcp: connection refused to v1beta1.metrics.k8s.io"))
	if len(result.FindingsIn(err)) != 0 || len(result.MeasurementErrorsIn(err)) != 1 {
		t.Errorf("a GET with no answer is not a measurement error: %v", err)
	}
}

// Every namespace left gone or terminating is named, not the first of
// several.
func TestInactiveNamespacesNamesEveryOne(t *testing.T) {
	phase := func(p string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": "Namespace", "status": map[string]any{"phase": p}}}
	}
	live := map[string]*unstructured.Unstructured{"default": phase("Active"), "apps": phase("Terminating"), "kube-system": phase("Active")}
	err := inactiveNamespaces([]string{"default", "apps", "gone", "kube-system"}, func(ns string) (*unstructured.Unstructured, error) {
		return live[ns], nil
	})
	var got []string
	for _, f := range result.FindingsIn(err) {
		got = append(got, f.Object+" "+f.Field+"="+f.Got)
	}
	want := []string{"Namespace apps status.phase=Terminating", "Namespace gone exists=absent"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	if err := inactiveNamespaces([]string{"default"}, func(string) (*unstructured.Unstructured, error) { return phase("Active"), nil }); err != nil {
		t.Errorf("an Active namespace: %v", err)
	}
}

// TestStockAloneCheckIsALimitation: a check whose only finding is the
// oracle's (stock fails it, the engine passes) is recorded as a
// limitation said in those words - no pass, and not the engine's fail.
func TestStockAloneCheckIsALimitation(t *testing.T) {
	rec := NewRecorder()
	f := &result.Finding{Side: "oracle", Address: "kubernetes_ingress_v1.x", Field: "plan", Want: "nothing", Got: "update"}
	rec.Check("next plan empty", f, "")
	if rec.Failed() || !rec.Limited() {
		t.Fatalf("failed %v, limited %v: want a limitation", rec.Failed(), rec.Limited())
	}
	rec.Check("other", &result.Finding{Side: "subject", Address: "x", Field: "plan", Want: "nothing", Got: "update"}, "")
	if !rec.Failed() {
		t.Error("a subject finding is the engine's fail")
	}
}

// TestStatusWriteIsNoTouch: a resourceVersion that moved with the uid and
// the content unchanged (a controller's status write) is no finding; a
// moved content, a new uid or a gone object is.
func TestStatusWriteIsNoTouch(t *testing.T) {
	k := "CustomResourceDefinition ogmiosports.demeter.run"
	v := func(uid, rv, content string) objVersion {
		return objVersion{Present: true, UID: uid, ResourceVersion: rv, Content: content}
	}
	before := objVersions{k: v("u1", "300", "aaaa")}
	for _, c := range []struct {
		after objVersion
		want  bool // a finding
	}{
		{v("u1", "301", "aaaa"), false},
		{v("u1", "301", "bbbb"), true},
		{v("u2", "301", "aaaa"), true},
		{objVersion{}, true},
	} {
		if err := sameVersions(before, objVersions{k: c.after}); (err != nil) != c.want {
			t.Errorf("%s -> %s: finding %v, want %v", before[k], c.after, err, c.want)
		}
	}
}

// TestPlanErrorSummary: a diagnostic, plain or boxed, is named by its
// summary alone, as a BREAK's prediction names it.
func TestPlanErrorSummary(t *testing.T) {
	for d, want := range map[string]string{
		"Error: Cycle: kubernetes_config_map_v1.chain_mid (destroy), kubernetes_config_map_v1.chain_base": "Error: Cycle",
		"╷\n│ Error: Cycle: a, b\n│\n╵":                                                                   "Error: Cycle",
		"Error: Call to unknown function\n\n  on x":                                                       "Error: Call to unknown function",
		"panic: runtime error":                                                                            "panic: runtime error",
	} {
		if got := planErrorSummary(d); got != want {
			t.Errorf("planErrorSummary(%q) = %q, want %q", d, got, want)
		}
	}
}
