package stage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
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

// Applying a saved plan reads as refused only when the engine refused it
// as stale, by its own diagnostic: a refused connection, a crash or a
// failure without a diagnostic is named as a failure, so state_moved's
// BREAK (which predicts the stale refusal) cannot be proved by one.
func TestApprovalOutcomeIsTyped(t *testing.T) {
	call := func(output string) (engine.Applied, error) {
		c := engine.Call{Args: []string{"apply", "approval.tfplan"}, ExitCode: 1, Output: output}
		return engine.Applied{Call: c}, &engine.CallError{Engine: "tofu", Call: c, Err: errors.New("exit status 1")}
	}
	for name, tc := range map[string]struct {
		a    engine.Applied
		err  error
		want string
	}{
		"applied":     {a: engine.Applied{Changed: 1}, want: appliedWord},
		"stale":       {want: staleWord},
		"unreachable": {want: "failed, not refused as stale: Error: Kubernetes cluster unreachable"},
		"silent":      {want: "failed without a diagnostic (exit 1)"},
	} {
		switch name {
		case "stale":
			tc.a, tc.err = call("\nError: Saved plan is stale\n\nThe given plan file can no longer be applied because the state was changed by another operation after the plan was created.\n")
		case "unreachable":
			tc.a, tc.err = call("\nError: Kubernetes cluster unreachable: Get \"https://127.0.0.1:6443/version\": dial tcp 127.0.0.1:6443: connect: connection refused\n")
		case "silent":
			tc.a, tc.err = call("")
		}
		if got := outcome(tc.a, tc.err).word(); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// The reader's refusal and the lock's are read from the engine's
// diagnostics, as a real plan printed them: a plan that merely reads the
// data source ("Reading...") and fails elsewhere is not the refusal, and
// a lock refusal names its lock by the Lock Info's ID.
func TestRefusalsReadFromDiagnostics(t *testing.T) {
	const source = "data.terraform_remote_state.network"
	refused := source + ": Reading...\n" + source + ": Read complete after 0s\n\nError: Unsupported attribute\n\n  on main.tf line 30, in locals:\n  30:   gateway = \"${" + source + ".outputs.gateway_host}\"\n    ├────────────────\n    │ " + source + ".outputs is object with no attributes\n\nThis object does not have an attribute named \"gateway_host\".\n"
	elsewhere := source + ": Reading...\n" + source + ": Read complete after 0s\n\nError: Kubernetes cluster unreachable: connection refused\n"
	diags := func(out string) []string { return (&engine.CallError{Call: engine.Call{Output: out}}).Diagnostics() }
	if d := diags(refused); len(d) != 1 || !valueOf(d[0], source) {
		t.Errorf("the refusal on the read is not seen: %q", d)
	}
	for _, d := range diags(elsewhere) {
		if valueOf(d, source) {
			t.Errorf("a plan failing elsewhere reads as refused on %s: %q", source, d)
		}
	}
	locked := "\nError: Error acquiring the state lock\n\nError message: the state is already locked by another tofu client\nLock Info:\n  ID:        e5a43af8-0e84-acb1-71dc-edbb618374da\n  Path:      \n  Operation: OperationTypeApply\n\nOpenTofu acquires a state lock to protect the state\n"
	if id := lockInfoID(&engine.CallError{Call: engine.Call{Output: locked}}); id != "e5a43af8-0e84-acb1-71dc-edbb618374da" {
		t.Errorf("lock ID %q", id)
	}
	if id := lockInfoID(&engine.CallError{Call: engine.Call{Output: "\nError: Kubernetes cluster unreachable\n\n  ID: e5a43af8\n"}}); id != "" {
		t.Errorf("another refusal names lock %q", id)
	}
}
