package stage

import (
	"fmt"
	"slices"
)

// Registry is the stages a run takes, in the order it takes them. The
// runner, the pages, the ledger and gauntlettest all ask it what a stage
// is; nothing else lists stages.
type Registry struct {
	stages []Stage
	// shown is the order the seed layout of the evidence page lists
	// stages in (run order otherwise).
	shown []string
}

// Default returns the gauntlet's own stages. plan_no_local_state and
// plan_approval run before the teardown because they need the estate
// deployed; the seed page shows them after it.
func Default() *Registry {
	g := &Registry{}
	for _, st := range []Stage{
		coldDeploy(), migrate(), testPlan(), fenceStage(), testApply(), refreshOnly(), driftReconverge(),
		day2Rename(), day2Remove(), day2Count(), cliContract(), day2Replace(), day2CBDDropped(), day2CBDChain(), day2Crash(),
		planNoLocalState(), planApproval(), handoff(), day2Teardown(), greenfield(), strict(),
	} {
		if err := g.Register(st); err != nil {
			panic(err) // the gauntlet's own list is wrong: a programming error
		}
	}
	g.shown = []string{
		"cold_deploy", "migrate", "test_plan", "fence", "test_apply", "refresh_only", "drift_reconverge",
		"day2_rename", "day2_remove", "day2_count", "cli_contract", "day2_replace", "day2_cbd_dropped", "day2_cbd_chain", "day2_crash",
		"handoff", "day2_teardown", "plan_approval", "greenfield", "strict", "plan_no_local_state",
	}
	return g
}

// Register appends st to the run. Its ID must be new, and every stage it
// runs after must already be registered (run order is registration
// order).
func (g *Registry) Register(st Stage) error {
	in := st.Info()
	if in.ID == "" || in.Title == "" {
		return fmt.Errorf("stage %q: an ID and a Title are required", in.ID)
	}
	if g.Known(in.ID) {
		return fmt.Errorf("stage %q is already registered", in.ID)
	}
	for _, dep := range in.After {
		if !g.Known(dep) {
			return fmt.Errorf("stage %q runs after %q, which is not registered before it", in.ID, dep)
		}
	}
	g.stages = append(g.stages, st)
	return nil
}

// Stages returns the stages in run order.
func (g *Registry) Stages() []Stage { return slices.Clone(g.stages) }

// Lookup returns the stage with id.
func (g *Registry) Lookup(id string) (Stage, bool) {
	i := slices.IndexFunc(g.stages, func(s Stage) bool { return s.Info().ID == id })
	if i < 0 {
		return nil, false
	}
	return g.stages[i], true
}

// Known reports whether id names a registered stage.
func (g *Registry) Known(id string) bool {
	_, ok := g.Lookup(id)
	return ok
}

// IDs returns the stage IDs in run order.
func (g *Registry) IDs() []string {
	ids := make([]string, len(g.stages))
	for i, s := range g.stages {
		ids[i] = s.Info().ID
	}
	return ids
}

// Shown returns the stage IDs in the seed page's order: the gauntlet's
// own as the seed lists them, then any registered stage in run order.
func (g *Registry) Shown() []string {
	out := slices.Clone(g.shown)
	for _, id := range g.IDs() {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Index is id's place in run order, or -1.
func (g *Registry) Index(id string) int {
	return slices.Index(g.IDs(), id)
}

// DependsOn reports whether the stage id must pass before any of the
// selected ones can run (directly or through another).
func (g *Registry) DependsOn(id string, selected []string) bool {
	var walk func(string) bool
	walk = func(s string) bool {
		st, ok := g.Lookup(s)
		if !ok {
			return false
		}
		for _, d := range st.Info().After {
			if d == id || walk(d) {
				return true
			}
		}
		return false
	}
	return slices.ContainsFunc(selected, walk)
}
