// Package surface is the map of the engine's surface gauntlet covers
// (conformance/surface.yaml): the CLI modes, language features and
// backends that matter on a Kubernetes root, each exercised by named
// stages on named estates or a gap that says why. Check validates it
// against the stage registry, the estates and the bug catalogue; Markdown
// renders docs/coverage.md with each stage's BREAKs as its latest recorded
// run names them.
package surface

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Schema is the map's format.
const Schema = "gauntlet.surface/v1"

// Every, in an exercise's estates, is every estate that reaches the stage.
const Every = "every"

// Map is conformance/surface.yaml.
type Map struct {
	Schema   string    `json:"schema"`
	Features []Feature `json:"features"`
}

// Feature is one row: exercised by stages, or a gap with its reason.
type Feature struct {
	ID        string     `json:"id"`
	Area      string     `json:"area"`
	Feature   string     `json:"feature"`
	Exercised []Exercise `json:"exercised,omitempty"`
	Gap       string     `json:"gap,omitempty"`
	// Bugs are rows of conformance/bugs.yaml in this feature.
	Bugs []string `json:"bugs,omitempty"`
}

// Exercise is a stage that runs the feature, on these estates.
type Exercise struct {
	Stage   string   `json:"stage"`
	Estates []string `json:"estates"`
}

// Areas are the map's sections, in order.
var Areas = []string{"cli", "language", "backend", "migration"}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Parse reads a map, refusing unknown fields and rows that are neither
// exercised nor a gap.
func Parse(raw []byte) (*Map, error) {
	var m Map
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		return nil, fmt.Errorf("surface.yaml: %w", err)
	}
	if m.Schema != Schema {
		return nil, fmt.Errorf("surface.yaml: schema %q, want %q", m.Schema, Schema)
	}
	var errs []error
	seen := map[string]bool{}
	for _, f := range m.Features {
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("surface.yaml: %s: "+format, append([]any{f.ID}, a...)...))
		}
		if !idRE.MatchString(f.ID) || seen[f.ID] {
			bad("an id of lowercase letters, digits and dashes, used once")
		}
		seen[f.ID] = true
		if !slices.Contains(Areas, f.Area) {
			bad("area %q, want one of %s", f.Area, strings.Join(Areas, ", "))
		}
		if f.Feature == "" {
			bad("no feature")
		}
		if (len(f.Exercised) == 0) == (f.Gap == "") {
			bad("exercised or a gap, exactly one")
		}
		for _, e := range f.Exercised {
			if e.Stage == "" || len(e.Estates) == 0 {
				bad("an exercise names its stage and estates")
			}
		}
	}
	return &m, errors.Join(errs...)
}

// Known answers what exists: stages, estates, bug rows.
type Known struct {
	Stage, Estate, Bug func(string) bool
}

// Check returns every name of the map that does not exist.
func Check(m *Map, k Known) []string {
	var problems []string
	for _, f := range m.Features {
		for _, e := range f.Exercised {
			if !k.Stage(e.Stage) {
				problems = append(problems, fmt.Sprintf("%s: stage %s is not registered", f.ID, e.Stage))
			}
			for _, es := range e.Estates {
				if es != Every && !k.Estate(es) {
					problems = append(problems, fmt.Sprintf("%s: estate %s is not in estates/", f.ID, es))
				}
			}
		}
		for _, b := range f.Bugs {
			if !k.Bug(b) {
				problems = append(problems, fmt.Sprintf("%s: bug %s is not in conformance/bugs.yaml", f.ID, b))
			}
		}
	}
	return problems
}

// Breaks names, for an estate and a stage, the BREAKs its latest recorded
// run ran there (empty when none is recorded).
type Breaks func(estate, stage string) []string

// BugState says how a bug row stands: "caught" or "not caught".
type BugState func(id string) string

// Markdown writes docs/coverage.md: per area a table of features, the
// stages and estates that exercise each, their BREAKs as recorded, and the
// bug rows in it. every is the estate whose run stands for "every estate".
func Markdown(w io.Writer, m *Map, breaks Breaks, bugs BugState, every, regenerate string) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	gaps := 0
	for _, f := range m.Features {
		if f.Gap != "" {
			gaps++
		}
	}
	p("# The engine's surface and what exercises it\n\n")
	p("Generated from `conformance/surface.yaml`, the stage registry, the estates, their latest recorded runs and\n")
	p("`conformance/bugs.yaml` by `%s`; a test fails when it is out of date or names a\n", regenerate)
	p("stage, estate or bug row that does not exist. %d features: %d exercised, %d gaps (each says why). \"every\" is\n", len(m.Features), len(m.Features)-gaps, gaps)
	p("every estate that reaches the stage; its BREAKs are those of %s's latest recorded run.\n", every)
	for _, area := range Areas {
		p("\n## %s\n\n| Feature | Exercised by | BREAKs | Bugs ([catalogue](../conformance/bugs.md)) |\n|---|---|---|---|\n", area)
		for _, f := range m.Features {
			if f.Area != area {
				continue
			}
			var by, brk []string
			for _, e := range f.Exercised {
				by = append(by, fmt.Sprintf("`%s` on %s", e.Stage, strings.Join(e.Estates, ", ")))
				on := e.Estates[0]
				if on == Every {
					on = every
				}
				if names := breaks(on, e.Stage); len(names) > 0 {
					brk = append(brk, "`"+e.Stage+"`: "+strings.Join(names, ", "))
				} else {
					brk = append(brk, "`"+e.Stage+"`: none recorded on "+on)
				}
			}
			if f.Gap != "" {
				by = append(by, "**gap:** "+f.Gap)
			}
			var bs []string
			for _, id := range f.Bugs {
				bs = append(bs, fmt.Sprintf("[%s](../conformance/bugs.md#%s) (%s)", id, id, bugs(id)))
			}
			p("| %s | %s | %s | %s |\n", cell(f.Feature), cell(strings.Join(by, "; ")), cell(orDash(brk)), orDash(bs))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, "; ")
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`), "\n", " ")
}
