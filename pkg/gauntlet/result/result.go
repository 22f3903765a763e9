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
	// NotApplicable is never a pass and never a fail: the stage is one
	// the estate's shape cannot carry (a root of one object has no
	// neighbour to keep through a removal), said with its reason. It is
	// given only when no object of the root could carry the stage; a plan
	// gauntlet merely could not derive is NotRun. A headline stage that
	// is not applicable does not cost the run its clear, and proves no
	// requirement.
	NotApplicable Verdict = "not_applicable"
	// Cancelled is the verdict of the stage a cancellation interrupted:
	// the run was stopped, the engine was not found wanting.
	Cancelled Verdict = "cancelled"
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
	// Choices are the stage plans of drift, rename, remove and plan
	// approval: derived from the root or written in estate.yaml.
	Choices []Choice `json:"choices,omitempty"`
	// Cancelled is set when the run was stopped before its end; its
	// remaining stages are not_run "cancelled" and it is never recorded.
	Cancelled *Cancellation `json:"cancelled,omitempty"`
	// Sabotaged marks a run whose BREAKs skipped their corruptions (a test
	// of the BREAKs): never clear, never recorded.
	Sabotaged bool `json:"sabotaged,omitempty"`
	// OracleReplay is set when the oracle's side was not run but replayed
	// from its recording in another run of the matrix (gauntlet.OracleTape):
	// "the run with tofu@1.12.6".
	OracleReplay string `json:"oracle_replay,omitempty"`
	// ReattachedProviders lists the provider types whose plugins were
	// started once per side and reattached for the engine calls
	// (gauntlet.WithReattachedProviders), and why any other was not; empty
	// when every call started its own.
	ReattachedProviders string `json:"reattached_providers,omitempty"`
}

// Choice is what one stage acted on and where that came from.
type Choice struct {
	Stage string `json:"stage"`
	// Source is "derived" (gauntlet chose from the root) or "estate.yaml".
	Source string `json:"source"`
	// Why is the derivation's reason for the choice, or for finding none
	// (then Fields is empty and the stage did not run).
	Why    string  `json:"why"`
	Fields []Field `json:"fields,omitempty"`
}

// Field is one named value of a Choice (an address, an object, a patch).
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Cancellation says where and how a run was stopped.
type Cancellation struct {
	// Stage is the stage that was running, empty before the first one.
	Stage string `json:"stage,omitempty"`
	// Signal is what stopped it ("interrupt", "terminated") or the
	// context's reason ("deadline exceeded").
	Signal string `json:"signal"`
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
	// SourceSHA256Listing says SourceSHA256 is, for a source of several
	// files, the sha256 of its listing (one "<sha256>  <path>" line per
	// file, as sha256sum writes it), not of a file.
	SourceSHA256Listing bool `json:"source_sha256_listing,omitempty"`
}

// Engine is a CLI as the run saw it, with its pin for staleness.
type Engine struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Display string `json:"display"`
	Path    string `json:"path"`
	// SHA256 is the sha256 of the binary that ran: with Pinned, the
	// engine's identity in a conformance proof.
	SHA256 string `json:"sha256,omitempty"`
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
	// Reason says why a stage did not run, or why it is not applicable;
	// Cause says it for a program, which never parses Reason.
	Reason string `json:"reason,omitempty"`
	Cause  Cause  `json:"cause,omitempty"`
	// BlockedBy is the stage that had to pass first and did not (Cause
	// CauseBlocked).
	BlockedBy string `json:"blocked_by,omitempty"`
	// Aborted is the machinery error that stopped a stage before its
	// end: the checks it would have recorded after it did not run.
	Aborted string `json:"aborted,omitempty"`
	// StoppedBy are the sides whose step stopped it ("subject",
	// "oracle", or both), read from the error's tree, not its text.
	StoppedBy []string `json:"stopped_by,omitempty"`
	Checks    []Check  `json:"checks,omitempty"`
	Breaks    []Break  `json:"breaks,omitempty"`
	// Figures are counts a stage measured, e.g. "subject.engine_calls".
	Figures map[string]int `json:"figures,omitempty"`
	// Requests break the figures' api_requests down: by side ("subject",
	// "oracle"), the requests its engines sent through its wire proxy
	// during the stage, counted by verb and resource ("get configmaps",
	// "list nonresource:/openapi/v3"). Absent in runs made before it was
	// recorded.
	Requests map[string]map[string]int `json:"requests,omitempty"`
	// Calls break the figures' engine_calls and engine_ms down: by side,
	// the engine calls made during the stage by subcommand ("plan",
	// "show", "state list"). Absent in runs made before it was recorded.
	Calls map[string]map[string]CallTally `json:"calls,omitempty"`
	// Known is set when the stage failed exactly as its estate's findings
	// list (estate.yaml findings): what the estate knows of it. The
	// verdict stays what the run measured; the page says which it is.
	Known *Known `json:"known,omitempty"`
}

// Known is an estate's word on a stage that failed exactly as it lists.
type Known struct {
	// Why is the estate's account of the failure.
	Why string `json:"why"`
	// Difference says it is a documented difference between engines,
	// not a bug of either: Engines behave this way, and References (the
	// engines' changelogs, pull requests, documentation) say so.
	Difference bool     `json:"difference,omitempty"`
	Engines    string   `json:"engines,omitempty"`
	References []string `json:"references,omitempty"`
}

// CallTally is how many engine calls of one subcommand a side made, and
// their time together in milliseconds.
type CallTally struct {
	N  int `json:"n"`
	MS int `json:"ms"`
}

// Check is one assertion inside a stage. A passing check is proven only
// when a BREAK that covers it (Break.Covers) corrupted the world, the state
// or the input and this very check then reported the predicted finding; ProvedBy
// lists those BREAKs. A check for which no honest BREAK exists says why in
// NoBreak. A passing check with neither is recorded as Unproven, and its
// stage does not pass.
type Check struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	Detail  string  `json:"detail"`
	// ProvedBy names the BREAKs that made this check fail for their reason.
	ProvedBy []string `json:"proved_by,omitempty"`
	// NoBreak is the one-line reason no BREAK can be aimed at this check.
	NoBreak string `json:"no_break,omitempty"`
	// Findings are what a failed check found wrong, as data.
	Findings []Finding `json:"findings,omitempty"`
	// MeasurementErrors are the measurements a failed check could not
	// make: it failed without finding anything.
	MeasurementErrors []string `json:"measurement_errors,omitempty"`
}

// Unproven is a check verdict: the check passed, but no BREAK made it fail
// and it gives no reason why none exists. It is never a pass.
const Unproven Verdict = "unproven"

// BreakOutcome is what became of a BREAK.
type BreakOutcome string

const (
	// Proved: every covered check reported the finding the BREAK
	// predicted (Break.Predictions) on the side it corrupted; a BREAK
	// recorded before predictions existed proved by naming its victim.
	Proved BreakOutcome = "proved"
	// Held: a covered check still passed under the corruption. On the
	// subject alone (the oracle's check failed) that is an engine finding;
	// on both, the check is not load-bearing.
	Held BreakOutcome = "held"
	// OffTarget: the check failed, but with findings other than the
	// predicted one (Break.Got), so the failure is not the corruption's.
	OffTarget BreakOutcome = "off_target"
	// CouldNotRun: the corruption or the measurement after it errored
	// (a read, an engine crash, a timeout, a panic: Break.MeasurementError)
	// or a check failed without a finding: never a proof.
	CouldNotRun BreakOutcome = "could_not_run"
	// CouldNotUndo: the BREAK measured, but its undo left the world
	// unlike the snapshot taken before the corruption (an object gone,
	// terminating or still labelled): every later measurement would read
	// another world, so it fails the stage whatever it measured.
	CouldNotUndo BreakOutcome = "could_not_undo"
)

// Break is a deliberate corruption of the world, the state or the input,
// after which the checks it covers are measured again and must fail.
type Break struct {
	Name string `json:"name"`
	// What the corruption did, e.g. "tampers the Service's label too".
	Corruption string `json:"corruption"`
	// Covers names the checks (Check.Name) the corruption must fail.
	Covers []string `json:"covers,omitempty"`
	// Victim is what the corruption touched (an object, an address, a
	// field), for the reader; Predictions say what must be found.
	Victim string `json:"victim,omitempty"`
	// Side is where the BREAK ran: "subject", or "oracle" for the same
	// corruption replayed on stock to tell an engine finding from a weak
	// check.
	Side    string       `json:"side,omitempty"`
	Outcome BreakOutcome `json:"outcome"`
	// Failed is true when Outcome is Proved.
	Failed bool `json:"failed"`
	// Detail is what the covered checks said under the corruption.
	Detail string `json:"detail"`
	// EngineFinding is set when the BREAK held on the subject but proved
	// on the oracle: the subject missed a corruption stock notices.
	EngineFinding bool `json:"engine_finding,omitempty"`
	// Predictions are the findings the BREAK said its covered checks
	// must report; empty in runs recorded before predictions, whose
	// BREAKs were judged by the victim's name in the check's failure.
	Predictions []Prediction `json:"predictions,omitempty"`
	// Got are the findings the covered checks reported under the
	// corruption: on an off_target BREAK, what it got instead.
	Got []Finding `json:"got,omitempty"`
	// MeasurementError is why a could_not_run BREAK could not measure;
	// Stack is the stack of a BREAK that panicked.
	MeasurementError string `json:"measurement_error,omitempty"`
	Stack            string `json:"stack,omitempty"`
}

// Cause is why a stage did not run.
type Cause string

// The causes of a stage not run. The first four are decided before the
// run (by the estate, the caller or the engine): a skip, never a defect.
const (
	CauseSkipped     Cause = "skipped"      // estate.yaml skips it, saying why
	CauseUndeclared  Cause = "undeclared"   // it needs an estate.yaml section the estate does not declare
	CauseNotSelected Cause = "not_selected" // the caller left it out (WithStages)
	CauseCapability  Cause = "capability"   // the engine under test lacks a capability it needs
	CauseBlocked     Cause = "blocked"      // a stage it runs after did not pass (BlockedBy)
	CauseStopped     Cause = "stopped"      // the run stopped early, or a failure left the world changed
	CauseCancelled   Cause = "cancelled"    // a signal stopped the run first
	// CauseNotDerived: the estate writes no plan for the stage and gauntlet
	// found nothing on the root it can act on honestly (Reason says what it
	// looked for). Gauntlet's gap, never the engine's fail.
	CauseNotDerived Cause = "not_derived"
)

// Declared reports whether the cause was decided before the run, by the
// estate, the caller or the engine.
func (c Cause) Declared() bool {
	switch c {
	case CauseSkipped, CauseUndeclared, CauseNotSelected, CauseCapability:
		return true
	}
	return false
}
