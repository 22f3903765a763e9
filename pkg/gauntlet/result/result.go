// Package result is the model a gauntlet run produces: one Run with a
// StageResult per stage, each with its checks and its BREAK. Renderers
// (evidence) and the conformance ledger read it; nothing in it runs
// anything.
package result

import "time"

// Verdict is a stage's or a check's outcome.
type Verdict string

const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// NotRun is never a pass: the reason says why it did not run.
	NotRun Verdict = "not_run"
)

// Run is one gauntlet run of one estate.
type Run struct {
	Estate      Estate        `json:"estate"`
	Subject     Engine        `json:"subject"`
	Oracle      Engine        `json:"oracle"`
	Substrate   string        `json:"substrate"`
	Commit      string        `json:"commit,omitempty"`
	StartedAt   time.Time     `json:"started_at"`
	Duration    time.Duration `json:"duration_ns"`
	ExitCode    int           `json:"exit_code"`
	Reproduce   string        `json:"reproduce"`
	Stages      []Stage       `json:"stages"`
	RunOrder    []string      `json:"run_order,omitempty"`
	Environment []string      `json:"environment,omitempty"`
}

// Estate is what the evidence page says about the estate.
type Estate struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Lane        string `json:"lane"`
	Set         string `json:"set"`
	// Source is "repo at commit, path" for corpus estates, or "written
	// here" for reference shapes.
	SourceRepo   string `json:"source_repo,omitempty"`
	SourceCommit string `json:"source_commit,omitempty"`
	SourcePath   string `json:"source_path,omitempty"`
	SourceSHA256 string `json:"source_sha256,omitempty"`
}

// Engine is a CLI as the run saw it, with its pin for staleness.
type Engine struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Display string `json:"display"`
	Path    string `json:"path"`
	// Pinned is the version the current pins say; empty when the engine
	// was given by path and has no pin.
	Pinned string `json:"pinned,omitempty"`
}

// Stale reports whether the engine is behind (or ahead of) its pin.
func (e Engine) Stale() bool { return e.Pinned != "" && e.Pinned != e.Version }

// Stage is one stage's outcome.
type Stage struct {
	ID           string        `json:"id"`
	Title        string        `json:"title"`
	Headline     bool          `json:"headline"`
	Requirements []string      `json:"requirements,omitempty"`
	Verdict      Verdict       `json:"verdict"`
	Duration     time.Duration `json:"duration_ns"`
	// Detail is the paragraph the evidence page shows.
	Detail string `json:"detail"`
	// Reason says why a stage did not run.
	Reason string  `json:"reason,omitempty"`
	Checks []Check `json:"checks,omitempty"`
	Breaks []Break `json:"breaks,omitempty"`
	// Figures are counts a stage measured, e.g. "subject.engine_calls".
	Figures map[string]int `json:"figures,omitempty"`
}

// Check is one assertion inside a stage.
type Check struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	Detail  string  `json:"detail"`
}

// Break is a deliberate corruption run after the stage's assertion passed:
// it must make the same assertion fail. Failed false means the assertion
// is not load-bearing, and the stage fails.
type Break struct {
	Name string `json:"name"`
	// What the corruption did, e.g. "tampers the Service's label too".
	Corruption string `json:"corruption"`
	// Failed is true when the assertion failed under the corruption.
	Failed bool `json:"failed"`
	// Detail is what the assertion said under the corruption.
	Detail string `json:"detail"`
}

// Clear reports whether every headline stage passed.
func (r *Run) Clear() bool {
	for _, s := range r.Stages {
		if s.Headline && s.Verdict != Pass {
			return false
		}
	}
	return true
}

// Failed lists the stages that failed.
func (r *Run) Failed() []Stage {
	var out []Stage
	for _, s := range r.Stages {
		if s.Verdict == Fail {
			out = append(out, s)
		}
	}
	return out
}
