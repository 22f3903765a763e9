// Package stage holds the gauntlet's stages, one small file each. A stage
// makes the same change on both sides - the subject (the engine under
// test on its cluster) and the oracle (stock terraform on its own) -
// observes plans and live objects, asserts, and then runs its BREAK: a
// corruption after which the same assertion must fail.
package stage

import (
	"context"
	"slices"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// Stage is one step of an estate's life: what it is (Info) and what it
// does (Run). Embed Described for the first and write the second.
type Stage interface {
	// Info describes the stage to the runner, the pages and the ledger.
	Info() Info
	// Run acts, observes and asserts through rec. An error is a failure
	// of the stage's machinery (a plan that did not run), reported as a
	// failed stage with the error in its detail.
	Run(ctx context.Context, r *Run, rec *Recorder) error
}

// Info is what the runner knows of a stage before it runs it.
type Info struct {
	// ID is the stable identifier ("drift_reconverge").
	ID string
	// Title is what the evidence page shows ("Drift and reconverge").
	Title string
	// Headline stages decide whether a run is clear.
	Headline bool
	// Requirements are the conformance requirement IDs it proves on
	// every estate it runs on.
	Requirements []string
	// RecordsRequirements are proven only on an estate that keeps its
	// state in the cluster, LocalRequirements only on one that does not:
	// a run on the other kind claims none of them, so its pass can never
	// stand as their proof.
	RecordsRequirements, LocalRequirements []string
	// HeadlineOnRecords makes the stage headline on an estate that keeps
	// its state in the cluster.
	HeadlineOnRecords bool
	// Needs are subject capabilities without which it does not run.
	Needs []engine.Capability
	// After are stage IDs that must have passed first.
	After []string
	// Declared, when set, makes the stage one that runs only for an
	// estate whose estate.yaml declares its section: it returns why the
	// stage does not apply to spec, or "". Where it applies, it is
	// headline. The runner asks before the engine's capabilities, so the
	// reason a stage is not run for an estate is the same on every engine.
	Declared func(spec *estate.Spec) string
}

// Described gives a stage its Info: embed it and write Run.
type Described struct{ About Info }

// Info implements Stage.
func (d Described) Info() Info { return d.About }

// Undeclared says why the stage does not apply to spec (its section is
// not declared), or is empty.
func (i Info) Undeclared(spec *estate.Spec) string {
	if i.Declared == nil {
		return ""
	}
	return i.Declared(spec)
}

// AllRequirements lists every requirement the stage can prove.
func (i Info) AllRequirements() []string {
	return slices.Concat(i.Requirements, i.RecordsRequirements, i.LocalRequirements)
}

// RequirementsIn lists those it proves in this run.
func (i Info) RequirementsIn(r *Run) []string {
	if r.RecordsEstate() {
		return slices.Concat(i.Requirements, i.RecordsRequirements)
	}
	return slices.Concat(i.Requirements, i.LocalRequirements)
}

// HeadlineIn reports whether the stage decides whether this run is clear.
func (i Info) HeadlineIn(r *Run) bool {
	return i.Headline || (i.Declared != nil && i.Declared(r.Spec) == "") || (i.HeadlineOnRecords && r.RecordsEstate())
}
