// Package mutant measures the gauntlet's own mutation score: it runs an
// estate's gauntlet with mutant engines as the subject - the pinned
// OpenTofu wrapped by gauntlet-mutant (third_party/tools/gauntlet-mutant),
// each breaking one promise a Terraform-compatible engine makes - and
// scores whether the stages each mutant names turned red for it.
package mutant

import (
	"fmt"
	"slices"
	"strings"
)

// Mutant is one broken engine and the stages that must catch it.
type Mutant struct {
	// Name is the mutation gauntlet-mutant applies (GAUNTLET_MUTANT).
	Name string `json:"name"`
	// Promise is the promise it breaks, as a maintainer would say it.
	Promise string `json:"promise"`
	// How says what the mutant does to tofu's behaviour.
	How string `json:"how"`
	// Expect are the stages whose checks must fail for it; a kill by any
	// one of them counts.
	Expect []string `json:"expect"`
	// Finds are the finding fields (result.Finding.Field) its breakage
	// makes a check report on the subject's side: a failed check counts
	// as its kill only with one of them, so a cascade or a measurement
	// error never does.
	Finds []string `json:"finds,omitempty"`
}

// All returns the mutants every estate's matrix runs, in run order.
func All() []Mutant {
	return []Mutant{
		{"ignore-moved", "moved blocks move state instead of destroying and recreating",
			"strips `moved` blocks from the root's .tf files (HCL-parsed) before every command, restored after", []string{"day2_rename"}, []string{"plan"}},
		{"ignore-cbd", "lifecycle.create_before_destroy creates the replacement first",
			"strips `create_before_destroy = true` from every resource's lifecycle block before every command", []string{"day2_replace"}, []string{"plan", "plan counts", "apply order"}},
		{"ignore-import", "import blocks import existing objects",
			"strips `import` blocks before every command", []string{"test_plan"}, []string{"plan", "plan counts"}},
		{"drop-one-create", "an apply that exits 0 applied every planned change",
			"applies every planned change but the last planned create (-target of the others) and prints tofu's own summary", []string{"day2_count", "greenfield"}, []string{"plan", "exists", "applied", "apply counts"}},
		{"no-refresh", "plan and apply see the live world (drift)",
			"adds -refresh=false to every plan and auto-approved apply", []string{"drift_reconverge"}, []string{"plan"}},
		{"stale-plan-ok", "a saved plan made stale by a state change is refused",
			"turns `apply PLANFILE` into `apply -auto-approve` of the configuration", []string{"plan_approval"}, []string{"apply of the saved plan"}},
		{"lost-interrupt", "SIGTERM stops an apply between operations, state saved",
			"ignores SIGINT and SIGTERM during apply and lets it run to its end", []string{"day2_crash"}, []string{"exists", "state", "SIGTERM", "exit code"}},
		{"destroy-leaks-one", "apply -destroy destroys every object of the state",
			"runs `state rm` of one resource before a destroy, which then leaves its object and exits 0", []string{"day2_teardown"}, []string{"applied", "exists", "apply counts"}},
		{"lying-summary", "the printed plan summary is the plan's",
			"prints `Plan: N to add` with one more to add than the saved plan holds", []string{"migrate", "test_plan"}, []string{"printed summary"}},
		{"state-forgets", "state records every object an apply made or kept",
			"runs `state rm` of one resource after every successful apply", []string{"test_plan", "drift_reconverge"}, []string{"state"}},
		{"exit-code-lies", "plan -detailed-exitcode exits 2 when the plan has changes",
			"turns the exit 2 of `plan -detailed-exitcode` into 0", []string{"cli_contract"}, []string{"exit code of plan -detailed-exitcode"}},
		{"parallelism-ignored", "at -parallelism=1 an apply acts on one object at a time",
			"drops `-parallelism=N` from every command, so the engine walks its graph at its default of 10", []string{"cli_contract"}, []string{"creates in flight at once"}},
	}
}

// Identity breaks nothing: the planted survivor that proves a matrix
// reports survivors. Only tests and `--mutants identity` run it.
func Identity() Mutant {
	return Mutant{"identity", "(none: tofu unchanged)", "execs tofu with the same arguments", []string{"migrate"}, nil}
}

// Select returns the named mutants (All() when names is empty); the
// identity mutant is selectable by name.
func Select(names []string) ([]Mutant, error) {
	if len(names) == 0 {
		return All(), nil
	}
	known := append(All(), Identity())
	var out []Mutant
	for _, n := range names {
		i := slices.IndexFunc(known, func(m Mutant) bool { return m.Name == n })
		if i < 0 {
			var have []string
			for _, m := range known {
				have = append(have, m.Name)
			}
			return nil, fmt.Errorf("no mutant %q (mutants: %s)", n, strings.Join(have, ", "))
		}
		out = append(out, known[i])
	}
	return out, nil
}
