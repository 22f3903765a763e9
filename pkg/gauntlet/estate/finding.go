package estate

import (
	"fmt"
	"slices"
)

// Finding is a stage the estate expects not to pass, and exactly how it
// fails: the estate's test and the conformance gate (internal/expect)
// accept a run of the stage only when it reports what the entry names -
// one more finding, one fewer, another value or another side, and the run
// is not what the estate expects. An entry that named its stage alone
// would excuse any failure there, a new engine bug included.
type Finding struct {
	// Why says what the engine, stock or the provider does wrong, for a
	// reader: the test's skip and the status page quote it.
	Why string `json:"why"`
	// Verdict is the stage's verdict: fail (the engine under test's) or
	// limitation (stock does the same, or stock alone stopped it).
	Verdict string `json:"verdict"`
	// Found lists every finding the stage's checks that did not pass
	// report, each exactly (check, side, victim, field, want, got).
	Found []Found `json:"found,omitempty"`
	// Stopped is for a stage that stopped before its checks: the sides
	// whose step stopped it and the engine's diagnostic.
	Stopped *Stopped `json:"stopped,omitempty"`
	// Difference, when set, says the failure is a documented difference
	// between engines, not a bug: the run's page says so, with where.
	Difference *Difference `json:"difference,omitempty"`
}

// Difference is a behaviour the engines differ in by design: which
// engines behave this way and where they document it.
type Difference struct {
	// Engines names the engines and versions that behave this way
	// ("tofu 1.12.0 and later").
	Engines string `json:"engines"`
	// References are URLs of the changelog entries, pull requests and
	// documentation that say so.
	References []string `json:"references"`
}

// Found is one finding a check reports, as run.json carries it.
type Found struct {
	Check   string `json:"check"`
	Side    string `json:"side"`
	Address string `json:"address,omitempty"`
	Object  string `json:"object,omitempty"`
	Field   string `json:"field"`
	Want    string `json:"want"`
	Got     string `json:"got"`
}

// Stopped is how a stage stopped short: the sides whose step stopped it
// (run.json's stopped_by) and the summary of the diagnostic their engine
// printed ("Error: Missing Resource Identity After Update").
type Stopped struct {
	Sides []string `json:"sides"`
	Error string   `json:"error"`
}

func (f Finding) validate(stage string) error {
	switch {
	case f.Why == "":
		return fmt.Errorf("findings: %s: why is required: what the engine, stock or the provider does wrong", stage)
	case f.Verdict != "fail" && f.Verdict != "limitation":
		return fmt.Errorf("findings: %s: verdict %q: fail or limitation (a stage that passes is no finding)", stage, f.Verdict)
	case (len(f.Found) == 0) == (f.Stopped == nil):
		return fmt.Errorf("findings: %s: exactly one of found (the findings of its checks, each exactly) and stopped (the sides and diagnostic that stopped it) is required: the entry names how the stage fails, never the stage alone", stage)
	}
	if d := f.Difference; d != nil && (d.Engines == "" || len(d.References) == 0) {
		return fmt.Errorf("findings: %s: difference: engines and references (where the engines document it) are required", stage)
	}
	for i, x := range f.Found {
		if x.Check == "" || x.Field == "" || (x.Side != "subject" && x.Side != "oracle") {
			return fmt.Errorf("findings: %s: found[%d]: check, field and side (subject or oracle) are required", stage, i)
		}
	}
	if s := f.Stopped; s != nil {
		if s.Error == "" || len(s.Sides) == 0 || slices.ContainsFunc(s.Sides, func(x string) bool { return x != "subject" && x != "oracle" }) {
			return fmt.Errorf("findings: %s: stopped: sides (subject, oracle) and error (the diagnostic's summary, \"Error: ...\") are required", stage)
		}
	}
	return nil
}

// FindingWhy is each listed finding's why, by stage: what a page or a
// report says of a stage the estate expects not to pass.
func (s *Spec) FindingWhy() map[string]string {
	if len(s.Findings) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.Findings))
	for id, f := range s.Findings {
		out[id] = f.Why
	}
	return out
}
