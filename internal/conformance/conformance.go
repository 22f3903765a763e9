// Package conformance keeps gauntlet's requirement registry honest: which
// requirement a stage verifies (coverage), and whether recorded runs prove
// it now (status). A proof lives in a cell - requirement, estate, engine
// identity, oracle identity, substrate - and holds only while everything
// the run ran (code, estate, pins) is byte for byte what the tree holds
// now. The ledger that carries the proofs is rebuilt from its run folders
// on every read, so a row nobody ran is rejected, not believed.
package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// RegistryPath is the requirement registry, relative to the repository.
const RegistryPath = "conformance/requirements.yaml"

// Substrates a requirement may be required on.
var Substrates = []string{"local", "kind", "kubeconfig"}

// Requirement is one entry of conformance/requirements.yaml.
type Requirement struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	// Estates and Substrates are where it must hold: every pair is a cell
	// the gates require (with the pinned engine and oracle).
	Estates    []string `json:"estates"`
	Substrates []string `json:"substrates"`
	// Gap, when set, is the reviewed reason it cannot be proven here yet:
	// the gates do not wait for it, but a failure in it still counts.
	Gap string `json:"gap,omitempty"`
}

// EntryHash is the sha256 of what the requirement says and where it must
// hold - ID, statement, estates and substrates - so a proof recorded under
// one wording or set of cells is stale under another. The gap is left
// out: it says whether a gate waits, not what a run showed.
func (q Requirement) EntryHash() string {
	b, _ := json.Marshal(struct {
		ID         string   `json:"id"`
		Statement  string   `json:"statement"`
		Estates    []string `json:"estates"`
		Substrates []string `json:"substrates"`
	}{q.ID, strings.Join(strings.Fields(q.Statement), " "), sorted(q.Estates), sorted(q.Substrates)})
	return hashBytes(b)
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// Registry is every requirement gauntlet knows.
type Registry struct {
	// EveryEstate is where every estate of estates/ must hold, whatever
	// requirements it exercises: one recorded run per substrate, at the
	// tree's inputs, that is what its estate.yaml expects (expect.Judge).
	EveryEstate  EveryEstate   `json:"every_estate"`
	Requirements []Requirement `json:"requirements"`
}

// EveryEstate is the registry's cell for each estate.
type EveryEstate struct {
	Substrates []string `json:"substrates"`
}

var idRE = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$`)

// LoadRegistry reads and validates a registry file.
func LoadRegistry(path string) (*Registry, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the requirement registry: %w", err)
	}
	return ParseRegistry(path, raw)
}

// ParseRegistry parses and validates registry bytes; name is for errors.
func ParseRegistry(name string, raw []byte) (*Registry, error) {
	var r Registry
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, s := range r.EveryEstate.Substrates {
		if !slices.Contains(Substrates, s) {
			return nil, fmt.Errorf("%s: every_estate: substrate %q is not one of %v", name, s, Substrates)
		}
	}
	seen := map[string]bool{}
	for _, q := range r.Requirements {
		switch {
		case !idRE.MatchString(q.ID):
			return nil, fmt.Errorf("%s: requirement id %q is not like GAUNT-AREA-01", name, q.ID)
		case seen[q.ID]:
			return nil, fmt.Errorf("%s: requirement %s listed twice", name, q.ID)
		case q.Statement == "":
			return nil, fmt.Errorf("%s: requirement %s needs a statement", name, q.ID)
		case len(q.Estates) == 0 || len(q.Substrates) == 0:
			return nil, fmt.Errorf("%s: requirement %s needs `estates:` and `substrates:` (where it must hold)", name, q.ID)
		}
		for _, s := range q.Substrates {
			if !slices.Contains(Substrates, s) {
				return nil, fmt.Errorf("%s: requirement %s: substrate %q is not one of %v", name, q.ID, s, Substrates)
			}
		}
		seen[q.ID] = true
	}
	return &r, nil
}

// Find returns the requirement with that ID.
func (r *Registry) Find(id string) (Requirement, bool) {
	for _, q := range r.Requirements {
		if q.ID == id {
			return q, true
		}
	}
	return Requirement{}, false
}

// Coverage says which stages verify which requirement.
type Coverage struct {
	// Stages maps each registered requirement to the stages claiming it.
	Stages map[string][]string
	// Uncovered are registered requirements no stage claims.
	Uncovered []string
	// Unregistered are IDs a stage claims that the registry lacks.
	Unregistered []string
}

// Clean reports whether coverage has neither gap nor drift.
func (c Coverage) Clean() bool { return len(c.Uncovered) == 0 && len(c.Unregistered) == 0 }

// ComputeCoverage matches the stages' claims (stage ID -> requirement
// IDs) against the registry.
func ComputeCoverage(reg *Registry, claims map[string][]string) Coverage {
	c := Coverage{Stages: map[string][]string{}}
	known := map[string]bool{}
	for _, q := range reg.Requirements {
		known[q.ID] = true
		c.Stages[q.ID] = nil
	}
	stages := make([]string, 0, len(claims))
	for s := range claims {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, s := range stages {
		for _, id := range claims[s] {
			if !known[id] {
				if !slices.Contains(c.Unregistered, id) {
					c.Unregistered = append(c.Unregistered, id)
				}
				continue
			}
			c.Stages[id] = append(c.Stages[id], s)
		}
	}
	for _, q := range reg.Requirements {
		if len(c.Stages[q.ID]) == 0 {
			c.Uncovered = append(c.Uncovered, q.ID)
		}
	}
	return c
}
