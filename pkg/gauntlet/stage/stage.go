// Package stage holds the gauntlet's stages, one small file each. A stage
// makes the same change on both sides - the subject (the engine under
// test on its cluster) and the oracle (stock terraform on its own) -
// observes plans and live objects, asserts, and then runs its BREAK: a
// corruption after which the same assertion must fail.
package stage

import (
	"context"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// Stage is one step of an estate's life.
type Stage interface {
	// ID is the stable identifier ("drift_reconverge").
	ID() string
	// Title is what the evidence page shows ("Drift and reconverge").
	Title() string
	// Headline stages decide whether a run is clear.
	Headline() bool
	// Requirements are the conformance requirement IDs it proves.
	Requirements() []string
	// Needs are subject capabilities without which it does not run.
	Needs() []engine.Capability
	// After are stage IDs that must have passed first.
	After() []string
	// Run acts, observes and asserts through rec. An error is a failure
	// of the stage's machinery (a plan that did not run), reported as a
	// failed stage with the error in its detail.
	Run(ctx context.Context, r *Run, rec *Recorder) error
}

// Declared is a stage that runs only for an estate whose estate.yaml
// declares its section. Undeclared says why it does not apply to r's
// estate, or is empty. The runner asks before the engine's capabilities:
// a stage the estate does not ask for is not run whatever the engine can
// do, and its reason must not change with the engine's version.
type Declared interface {
	Undeclared(r *Run) string
}

// info implements the descriptive half of Stage.
type info struct {
	id, title string
	headline  bool
	reqs      []string
	// recordsReqs are verified only on an estate that keeps its state in
	// the cluster: a run on any other claims none of them, so its pass
	// can never stand as their proof.
	recordsReqs []string
	needs       []engine.Capability
	after       []string
}

func (m info) ID() string     { return m.id }
func (m info) Title() string  { return m.title }
func (m info) Headline() bool { return m.headline }

// Requirements lists every requirement the stage can verify.
func (m info) Requirements() []string {
	return append(append([]string(nil), m.reqs...), m.recordsReqs...)
}

// RequirementsFor lists those it verifies in this run.
func (m info) RequirementsFor(r *Run) []string {
	if r.RecordsEstate() {
		return m.Requirements()
	}
	return m.reqs
}
func (m info) Needs() []engine.Capability { return m.needs }
func (m info) After() []string            { return m.after }

// All returns every stage in run order. The evidence page orders rows by
// Canonical instead: plan_no_local_state and plan_approval run before
// teardown because they need the estate deployed.
func All() []Stage {
	return []Stage{
		coldDeploy(), migrate(), testPlan(), fenceStage(), testApply(), driftReconverge(),
		day2Rename(), day2Remove(), day2Count(), cliContract(), day2Replace(), day2Crash(),
		planNoLocalState(), planApproval(), handoff(), day2Teardown(), greenfield(), strict(),
	}
}

// Canonical is the order stages are shown in.
func Canonical() []string {
	return []string{
		"cold_deploy", "migrate", "test_plan", "fence", "test_apply", "drift_reconverge",
		"day2_rename", "day2_remove", "day2_count", "cli_contract", "day2_replace", "day2_crash",
		"handoff", "day2_teardown", "plan_approval", "greenfield", "strict", "plan_no_local_state",
	}
}

// Known reports whether id names a stage.
func Known(id string) bool {
	for _, s := range Canonical() {
		if s == id {
			return true
		}
	}
	return false
}

// estateHeadline is a stage that is headline for the estates it applies
// to (the pair's stages: an estate that keeps records in the cluster must
// pass them to be clear), and outside the verdict for the rest.
type estateHeadline interface {
	HeadlineFor(r *Run) bool
}

// HeadlineIn reports whether st decides whether this run is clear.
func HeadlineIn(st Stage, r *Run) bool {
	if h, ok := st.(estateHeadline); ok && h.HeadlineFor(r) {
		return true
	}
	return st.Headline()
}

// RequirementsIn lists the requirements st verifies in this run.
func RequirementsIn(st Stage, r *Run) []string {
	if f, ok := st.(interface{ RequirementsFor(*Run) []string }); ok {
		return f.RequirementsFor(r)
	}
	return st.Requirements()
}
