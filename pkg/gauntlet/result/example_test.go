package result_test

import (
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A check that fails the same way on the engine under test and on stock is
// a limitation stock shares, never the engine's fail; one stock passes is.
func ExampleSharedFailure() {
	f := result.Finding{Check: "replanned empty", Address: "kubernetes_limit_range_v1.lr", Field: "plan", Want: "no change", Got: "update"}
	subject, oracle := f, f
	subject.Side, oracle.Side = "subject", "oracle"
	fmt.Println(result.SharedFailure([]result.Finding{subject, oracle}, nil))
	fmt.Println(result.SharedFailure([]result.Finding{subject}, nil))
	// Output:
	// true
	// false
}

// A run is clear only when every headline stage passed.
func ExampleRun_Assess() {
	run := result.Run{Stages: []result.Stage{
		{ID: "cold_deploy", Headline: true, Verdict: result.Pass},
		{ID: "drift_reconverge", Headline: true, Verdict: result.NotRun, Reason: "no drift derived", Cause: result.CauseBlocked, BlockedBy: "migrate"},
	}}
	a := run.Assess()
	fmt.Println(a.Clear(), len(a.NotRun), a.NotRun[0].Cause.Declared())
	// Output:
	// false 1 false
}
