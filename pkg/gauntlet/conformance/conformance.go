// Package conformance keeps gauntlet's requirement registry honest: which
// requirement a stage verifies (coverage), and whether a recorded run
// proves it now (status). A proof is a claim about a tree: it holds only
// for a passing stage whose every BREAK failed, recorded from a clean
// commit, and only until a later commit touches what it proved. A skipped
// or not_run stage never proves anything.
package conformance

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"

	"sigs.k8s.io/yaml"
)

// Requirement is one entry of conformance/requirements.yaml.
type Requirement struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	// Paths are the files and folders a proof of it is a claim about.
	Paths []string `json:"paths"`
}

// Registry is every requirement gauntlet knows.
type Registry struct {
	Requirements []Requirement `json:"requirements"`
}

var idRE = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$`)

// LoadRegistry reads and validates a registry file.
func LoadRegistry(path string) (*Registry, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Registry
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, q := range r.Requirements {
		switch {
		case !idRE.MatchString(q.ID):
			return nil, fmt.Errorf("%s: requirement id %q is not like GAUNT-AREA-01", path, q.ID)
		case seen[q.ID]:
			return nil, fmt.Errorf("%s: requirement %s listed twice", path, q.ID)
		case q.Statement == "" || len(q.Paths) == 0:
			return nil, fmt.Errorf("%s: requirement %s needs a statement and paths", path, q.ID)
		}
		seen[q.ID] = true
	}
	return &r, nil
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
