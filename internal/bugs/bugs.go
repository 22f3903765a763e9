// Package bugs is the catalogue of released engine bugs gauntlet measures
// itself by (conformance/bugs.yaml): each bug with its upstream links, the
// versions it hit and fixed, and either the estate, stage and finding that
// catch it - backed by recorded runs on a buggy and a fixed engine - or why
// nothing catches it yet. Verify checks every claim against the run folders;
// Markdown renders conformance/bugs.md from what was verified, so the page
// cannot say more than the runs do.
package bugs

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Schema is the catalogue's format.
const Schema = "gauntlet.bugs/v1"

// Catalogue is conformance/bugs.yaml.
type Catalogue struct {
	Schema string `json:"schema"`
	Bugs   []Bug  `json:"bugs"`
}

// Bug is one released bug (or, with Difference, a documented behaviour
// that differs between engines).
type Bug struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Engine is the engine family it is in: tofu, terraform or both.
	Engine string `json:"engine"`
	// Upstream are "owner/repo#N" references: the issue first, then fixes.
	Upstream []string `json:"upstream"`
	// Affected and Fixed are version ranges as their changelogs give them.
	Affected string `json:"affected"`
	Fixed    string `json:"fixed"`
	// Pinned are the pinned engines it hits, as engine@version.
	Pinned []string `json:"pinned,omitempty"`
	// Shape is the configuration and commands that show it.
	Shape string `json:"shape"`
	// Caught says what catches it; NotCaught why nothing does yet.
	Caught    *Catch `json:"caught,omitempty"`
	NotCaught string `json:"not_caught,omitempty"`
	// Difference is set for a behaviour that is not a bug but differs
	// between engines (both documented): what differs and where it shows.
	Difference string `json:"difference,omitempty"`
	// Bisect is a `gauntlet bisect` page (its bisect.md, from the
	// repository's root) that placed the change between two releases.
	Bisect string `json:"bisect,omitempty"`
}

// Catch is where a bug shows: an estate's stage reports Finding (text the
// stage's detail or one of its checks carries) on a buggy engine, and the
// Evidence are recorded runs on buggy and fixed engines.
type Catch struct {
	Estate   string     `json:"estate"`
	Stage    string     `json:"stage"`
	Finding  string     `json:"finding"`
	Evidence []Evidence `json:"evidence"`
}

// Evidence is one recorded run: its folder (from the repository's root),
// the engine on the side that shows the bug or its absence, and what that
// run's stage must say - "fail" with the finding, "pass", or, for a bug
// in the pinned oracle, "oracle_finding": a check of the stage is stock's
// finding (result.OracleFinding) saying the finding; for a documented
// engine difference, "difference": the stage failed with the finding and
// the run reported it as the difference its estate lists (result.Known). Stage, when
// set, is another stage than the catch's that shows a fixed engine's pass
// (stock applies every root in cold_deploy; some stages run on the
// subject only).
type Evidence struct {
	Run    string `json:"run"`
	Side   string `json:"side"`
	Engine string `json:"engine"`
	Want   string `json:"want"`
	Stage  string `json:"stage,omitempty"`
}

var (
	idRE       = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	upstreamRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+$`)
	engineRE   = regexp.MustCompile(`^(tofu|terraform)@[0-9]+\.[0-9]+\.[0-9]+$`)
)

// Parse reads a catalogue, refusing unknown fields and rows that cannot
// be verified (a caught row without evidence of both a fail and a pass, a
// row neither caught nor saying why).
func Parse(raw []byte) (*Catalogue, error) {
	var c Catalogue
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return nil, fmt.Errorf("bugs.yaml: %w", err)
	}
	if c.Schema != Schema {
		return nil, fmt.Errorf("bugs.yaml: schema %q, want %q", c.Schema, Schema)
	}
	var errs []error
	seen := map[string]bool{}
	for i, b := range c.Bugs {
		at := fmt.Sprintf("bugs.yaml: bug %d (%s)", i+1, b.ID)
		bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(at+": "+format, a...)) }
		switch {
		case !idRE.MatchString(b.ID):
			bad("id must be lowercase letters, digits and dashes")
		case seen[b.ID]:
			bad("id used twice")
		}
		seen[b.ID] = true
		if b.Title == "" || b.Shape == "" || b.Affected == "" || b.Fixed == "" {
			bad("title, shape, affected and fixed are required")
		}
		if !slices.Contains([]string{"tofu", "terraform", "both"}, b.Engine) {
			bad("engine %q: tofu, terraform or both", b.Engine)
		}
		if len(b.Upstream) == 0 {
			bad("no upstream reference")
		}
		for _, u := range b.Upstream {
			if !upstreamRE.MatchString(u) {
				bad("upstream %q is not owner/repo#N", u)
			}
		}
		for _, p := range b.Pinned {
			if !engineRE.MatchString(p) {
				bad("pinned %q is not engine@X.Y.Z", p)
			}
		}
		switch {
		case b.Caught == nil && b.NotCaught == "":
			bad("neither caught nor not_caught: say what catches it or why nothing does")
		case b.Caught != nil && b.NotCaught != "":
			bad("both caught and not_caught")
		case b.Caught != nil:
			errs = append(errs, b.Caught.check(at)...)
		}
	}
	return &c, errors.Join(errs...)
}

func (c *Catch) check(at string) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(at+": caught: "+format, a...)) }
	if c.Estate == "" || c.Stage == "" || strings.TrimSpace(c.Finding) == "" {
		bad("estate, stage and finding are required")
	}
	wants := map[string]bool{}
	for _, e := range c.Evidence {
		if !slices.Contains([]string{"subject", "oracle"}, e.Side) {
			bad("evidence %s: side %q, want subject or oracle", e.Run, e.Side)
		}
		if !slices.Contains([]string{"fail", "pass", "oracle_finding", "difference"}, e.Want) {
			bad("evidence %s: want %q, want fail, pass, oracle_finding or difference", e.Run, e.Want)
		}
		if e.Want == "difference" && e.Side != "subject" {
			bad("evidence %s: a difference is the engine under test's: its side is the subject", e.Run)
		}
		if e.Want == "oracle_finding" && e.Side != "oracle" {
			bad("evidence %s: an oracle's finding is stock's: its side is the oracle", e.Run)
		}
		if !engineRE.MatchString(e.Engine) {
			bad("evidence %s: engine %q is not engine@X.Y.Z", e.Run, e.Engine)
		}
		if e.Want == "fail" && e.Side != "subject" {
			bad("evidence %s: a failing stage names its engine only as the subject (an oracle's fail is stock's)", e.Run)
		}
		if e.Want == "fail" && e.Stage != "" && e.Stage != c.Stage {
			bad("evidence %s: the bug's fail is the catch's stage, %s", e.Run, c.Stage)
		}
		wants[e.Want] = true
	}
	if !(wants["fail"] || wants["oracle_finding"] || wants["difference"]) || !wants["pass"] {
		bad("evidence needs a run where the stage fails on a buggy engine (or a buggy oracle's finding, or an engine that differs by design, reported as such) and one where it passes on a fixed (or the other) engine")
	}
	return errs
}
