package stage

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Recorder collects what a stage observed: checks, BREAKs, figures and the
// sentences of its detail paragraph. Stages never format pages; they say
// what happened and the renderers lay it out.
//
// A check and its BREAKs are one unit: a passing check is proven only by a
// BREAK that covers it, corrupted something and made this very check
// report the finding the BREAK predicted. Fill marks any other passing check unproven
// (unless the stage said, with NoBreak, why no BREAK can exist), and an
// unproven check fails the stage.
type Recorder struct {
	sentences []sentence
	checks    []result.Check
	breaks    []result.Break
	figures   map[string]int
	// proofs are the BREAKs that proved each check, by check name: a BREAK
	// may run before the check it covers is recorded (a corruption that
	// must precede the one real apply it measures).
	proofs map[string][]string
	// promises are the checks that hold each side to a promise on its
	// own (Promise): stock alone breaking one is stock's finding.
	promises map[string]bool
}

// sentence is one sentence of the detail paragraph. A claim stands only if
// every check it rests on passed; a failure leads the paragraph.
type sentence struct {
	text    string
	restsOn []string
	failure bool
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{figures: map[string]int{}, proofs: map[string][]string{}, promises: map[string]bool{}}
}

// Promise marks the check name as a promise each side keeps on its own -
// an exit code, an apply that must succeed - rather than a comparison of
// the engine with stock: when stock alone breaks it, the check is the
// oracle's finding (result.OracleFinding), said as stock's, and costs the
// engine nothing. Call it before the check is recorded.
func (r *Recorder) Promise(name string) { r.promises[name] = true }

func capitalise(format string, args ...any) string {
	s := strings.TrimSpace(fmt.Sprintf(format, args...))
	if s == "" {
		return ""
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// Say adds a sentence that claims nothing a check measures: what was done,
// not what was found.
func (r *Recorder) Say(format string, args ...any) {
	if s := capitalise(format, args...); s != "" {
		r.sentences = append(r.sentences, sentence{text: s})
	}
}

// Claim adds a sentence stating what the named checks found. It is shown
// only if each of them passed: a paragraph never states agreement, counts
// or emptiness that a failed, unproven or not-run check contradicts.
func (r *Recorder) Claim(checks []string, format string, args ...any) {
	if s := capitalise(format, args...); s != "" {
		r.sentences = append(r.sentences, sentence{text: s, restsOn: checks})
	}
}

// Check records an assertion: err == nil passes with detail, else fails
// with err. It returns whether it passed. Names are unique in a stage.
func (r *Recorder) Check(name string, err error, detail string) bool {
	c := result.Check{Name: name, Verdict: result.Pass, Detail: detail}
	if err != nil {
		c.Verdict, c.Detail = result.Fail, err.Error()
		c.Findings = result.Copies(err, name, "")
		for _, m := range result.MeasurementErrorsIn(err) {
			c.MeasurementErrors = append(c.MeasurementErrors, m.Error())
		}
		switch {
		case result.SharedFailure(c.Findings, c.MeasurementErrors):
			c.Verdict = result.Limitation
			r.sentences = append(r.sentences, sentence{text: capitalise("LIMITATION %s: stock fails it the same way, so it is not the engine's: %v", name, err), failure: true})
		case result.StockAloneFailure(c.Findings, c.MeasurementErrors) && r.promises[name]:
			c.Verdict = result.OracleFinding
			r.sentences = append(r.sentences, sentence{text: capitalise("ORACLE FINDING %s: stock breaks this promise and the engine under test keeps it, so it is stock's defect - not the engine's fail and no limitation: %v", name, err), failure: true})
		case result.StockAloneFailure(c.Findings, c.MeasurementErrors):
			c.Verdict = result.Limitation
			r.sentences = append(r.sentences, sentence{text: capitalise("LIMITATION %s: stock alone fails it and the engine under test does not, so it is no pass and not the engine's fail: %v", name, err), failure: true})
		default:
			r.sentences = append(r.sentences, sentence{text: capitalise("FAILED %s: %v", name, err), failure: true})
		}
	}
	if i := r.find(name); i >= 0 {
		// The same check measured again (another side, another round):
		// one failure fails it, and it stays a limitation only while
		// every round that failed was one.
		prev := r.checks[i]
		switch {
		case failing(c.Verdict) && (failing(prev.Verdict) || prev.Verdict == result.OracleFinding):
			// Both rounds failed: keep every finding.
			c.Findings = append(prev.Findings, c.Findings...)
			c.MeasurementErrors = append(prev.MeasurementErrors, c.MeasurementErrors...)
			c.Detail = prev.Detail + "; " + c.Detail
			if prev.Verdict == result.Fail {
				c.Verdict = result.Fail
			}
			r.checks[i] = c
		case prev.Verdict == result.OracleFinding && c.Verdict == result.Pass:
			// Stock broke the promise in an earlier round: that stands.
		case failing(c.Verdict) || !failing(prev.Verdict):
			r.checks[i] = c
		}
		return err == nil
	}
	r.checks = append(r.checks, c)
	return err == nil
}

// NoBreak records why no honest BREAK can be aimed at a check (one line,
// shown beside it). Use it rarely: it is read by every reviewer.
func (r *Recorder) NoBreak(name, why string) {
	if i := r.find(name); i >= 0 {
		r.checks[i].NoBreak = why
	}
}

// NotRun records a check the substrate or engine cannot show.
func (r *Recorder) NotRun(name, reason string) {
	r.checks = append(r.checks, result.Check{Name: name, Verdict: result.NotRun, Detail: reason})
}

func (r *Recorder) find(name string) int {
	return slices.IndexFunc(r.checks, func(c result.Check) bool { return c.Name == name })
}

// Breaking describes a BREAK: what it corrupts, what it predicts the
// covered checks must now report, and the checks it covers.
type Breaking struct {
	Name       string
	Corruption string
	// Victim is what the corruption touched, for the reader: an address,
	// an object ("ConfigMap ns/name") or a field.
	Victim string
	// Predict are the findings the corruption must make the covered
	// checks report (each check must report one that applies to it, on
	// the side corrupted). A BREAK without one cannot prove anything.
	Predict []result.Prediction
	// Covers are the subject's checks the corruption must fail.
	Covers []string
	// OracleCovers are the oracle's own checks, failed by the same
	// corruption replayed on the oracle side.
	OracleCovers []string
}

// Measured is what the covered checks said after the corruption, by check
// name; nil means the check passed.
type Measured map[string]error

// uniqueBreak returns name, or name with a number when a BREAK of that
// name was already recorded in the stage: proofs link by name.
func (r *Recorder) uniqueBreak(name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(r.breaks, func(b result.Break) bool { return b.Name == n })
	}
	out := name
	for i := 2; taken(out); i++ {
		out = fmt.Sprintf("%s_%d", name, i)
	}
	return out
}

// recordBreak judges one side's run of a BREAK. covers are the checks
// this side's measurement must fail, grant those a proof gives a ProvedBy;
// err is the BREAK's own machinery error (a corruption that could not be
// made, a read that failed), never a proof.
func (r *Recorder) recordBreak(b Breaking, side string, covers, grant []string, m Measured, err error) result.Break {
	out := result.Break{Name: b.Name, Corruption: b.Corruption, Victim: b.Victim, Covers: covers, Side: side, Predictions: b.Predict}
	var undo *UndoError
	switch {
	case errors.As(err, &undo):
		out.Outcome, out.Detail = result.CouldNotUndo, "the BREAK could not undo its corruption: "+undo.Error()
		out.MeasurementError = err.Error()
	case err != nil:
		out.Outcome, out.Detail = result.CouldNotRun, "the BREAK could not run: "+err.Error()
		out.MeasurementError = err.Error()
		for _, me := range result.MeasurementErrorsIn(err) {
			out.Stack = me.Stack
		}
	case len(covers) == 0:
		out.Outcome, out.Detail = result.CouldNotRun, "the BREAK covers no check"
	case len(b.Predict) == 0:
		out.Outcome, out.Detail = result.CouldNotRun, "the BREAK predicts no finding, so nothing it measures can prove it"
	default:
		judgePredicted(&out, b.Predict, side, covers, m)
	}
	out.Failed = out.Outcome == result.Proved
	if out.Failed {
		for _, name := range grant {
			if !slices.Contains(r.proofs[name], b.Name) {
				r.proofs[name] = append(r.proofs[name], b.Name)
			}
		}
	}
	return out
}

// judgePredicted proves a BREAK only when every covered check reported,
// on this side, a finding its predictions name. A check that passed
// held it; one that could not measure (or failed with text alone) could
// not run; one that found something else is off target, and the BREAK
// keeps what it got. Error text is never read.
func judgePredicted(out *result.Break, predict []result.Prediction, side string, covers []string, m Measured) {
	var held, cnr, off, proved []string
	for _, name := range covers {
		e, measured := m[name]
		result.Stamp(e, "", side) // the side of its measurement errors
		fs := result.Copies(e, name, side)
		out.Got = append(out.Got, fs...)
		mes := result.MeasurementErrorsIn(e)
		switch {
		case !measured:
			off = append(off, name+": not measured under the corruption")
		case e == nil:
			held = append(held, name+": still passed")
		case len(mes) > 0:
			for _, me := range mes {
				if out.MeasurementError == "" {
					out.MeasurementError, out.Stack = me.Error(), me.Stack
				}
				cnr = append(cnr, name+": "+me.Error())
			}
		case len(fs) == 0:
			cnr = append(cnr, name+": failed without a finding, which never proves: "+e.Error())
		default:
			hit := slices.ContainsFunc(fs, func(f result.Finding) bool {
				return slices.ContainsFunc(predict, func(p result.Prediction) bool { return p.Matches(name, side, &f) })
			})
			if hit {
				proved = append(proved, fmt.Sprintf("%s: %v", name, e))
			} else {
				off = append(off, fmt.Sprintf("%s reported %v, not the predicted %s", name, e, predictionsFor(predict, name)))
			}
		}
	}
	switch {
	case len(held) > 0:
		out.Outcome, out.Detail = result.Held, strings.Join(held, "; ")
	case len(cnr) > 0:
		out.Outcome, out.Detail = result.CouldNotRun, strings.Join(cnr, "; ")
	case len(off) > 0:
		out.Outcome, out.Detail = result.OffTarget, strings.Join(off, "; ")
	default:
		out.Outcome, out.Detail = result.Proved, strings.Join(proved, "; ")
	}
}

func predictionsFor(predict []result.Prediction, check string) string {
	var out []string
	for _, p := range predict {
		if p.Check == "" || p.Check == check {
			q := p
			q.Check = ""
			out = append(out, q.String())
		}
	}
	return strings.Join(out, " or ")
}

// addBreak records a BREAK's subject and oracle runs. A BREAK that held on
// the subject while the same corruption failed the same checks on the
// oracle is an engine finding: the subject missed what stock notices.
func (r *Recorder) addBreak(b Breaking, subject, oracle result.Break, replayed bool) {
	if replayed && subject.Outcome == result.Held && oracle.Outcome == result.Proved {
		subject.EngineFinding = true
		subject.Detail = "engine finding: stock's checks failed under the same corruption (" + oracle.Detail + "), the subject's did not: " + subject.Detail
	}
	r.breaks = append(r.breaks, subject)
	if subject.Outcome != result.Proved {
		what := map[result.BreakOutcome]string{
			result.Held:         "held: the corruption did not fail what it covers",
			result.OffTarget:    "failed off target",
			result.CouldNotRun:  "could not run",
			result.CouldNotUndo: "could not undo its corruption",
		}[subject.Outcome]
		if subject.EngineFinding {
			what = "held on the subject but failed stock's checks: an engine finding"
		}
		r.sentences = append(r.sentences, sentence{text: capitalise("FAILED BREAK %s (%s) %s: %s", b.Name, b.Corruption, what, subject.Detail), failure: true})
	}
	if replayed {
		r.breaks = append(r.breaks, oracle)
		if oracle.Outcome == result.CouldNotUndo {
			r.sentences = append(r.sentences, sentence{text: capitalise("FAILED BREAK %s on the oracle side could not undo its corruption: %s", b.Name, oracle.Detail), failure: true})
		}
	}
}

// SummaryCheck is the check a plan whose printed summary disagrees with its
// own JSON plan fails: the engine's two accounts of one plan differ (a
// person reviewing the plan reads the line). No corruption of the world
// makes a sound engine's two outputs disagree, so it carries no BREAK;
// it is recorded only when it fails.
const SummaryCheck = "the plan's printed summary agrees with its JSON plan"

// SummaryFinding records err as a failed SummaryCheck when it is a summary
// mismatch, and reports whether it was.
func (r *Recorder) SummaryFinding(err error) bool {
	var mismatch *engine.SummaryMismatch
	if !errors.As(err, &mismatch) {
		return false
	}
	r.Check(SummaryCheck, &result.Finding{Object: "the plan of " + mismatch.Engine, Field: FieldPrintedSummary,
		Want: mismatch.JSON.String(), Got: mismatch.Printed.String(), Detail: "its JSON plan against the line it printed (log: " + mismatch.Log + ")"}, "")
	return true
}

// FieldPrintedSummary is the finding field of SummaryCheck: the counts a
// plan printed, wanted equal to its JSON plan's.
const FieldPrintedSummary = "printed summary"

// Figure records a measured count, e.g. "subject.api_requests".
func (r *Recorder) Figure(key string, v int) { r.figures[key] = v }

// settle links each check to the BREAKs that proved it and marks every
// passing check with no proof and no reason unproven.
func (r *Recorder) settle() {
	for i, c := range r.checks {
		r.checks[i].ProvedBy = r.proofs[c.Name]
		if (c.Verdict == result.Pass || c.Verdict == result.OracleFinding) && len(r.proofs[c.Name]) == 0 && c.NoBreak == "" {
			r.checks[i].Verdict = result.Unproven
		}
	}
}

// failing reports whether a check verdict is a failure of either kind.
func failing(v result.Verdict) bool { return v == result.Fail || v == result.Limitation }

// Failed reports whether the stage is the engine's fail: a check failed,
// or a BREAK held on the subject where stock noticed it (an engine
// finding); and, in a stage with no limitation, a check is unproven or a
// subject BREAK did not prove. Where stock shares a failure (a
// limitation), the checks it makes unprovable and the BREAKs it keeps
// from proving (a second tamper stock misses too, a retamper of a world
// the reconverging apply did not restore) are its consequence, not the
// engine's: the stage is then a limitation, never a pass.
func (r *Recorder) Failed() bool {
	r.settle()
	limited, unproven := false, false
	for _, c := range r.checks {
		switch c.Verdict {
		case result.Pass, result.NotRun, result.OracleFinding:
		case result.Limitation:
			limited = true
		case result.Unproven:
			unproven = true
		default:
			return true
		}
	}
	// An engine finding fails the stage, and so does an undo that left
	// either side's world changed, whatever else it measured.
	if slices.ContainsFunc(r.breaks, func(b result.Break) bool { return b.EngineFinding || b.Outcome == result.CouldNotUndo }) {
		return true
	}
	if limited {
		return false
	}
	return unproven || slices.ContainsFunc(r.breaks, func(b result.Break) bool { return b.Side != "oracle" && b.Outcome != result.Proved })
}

// Limited reports whether a check is a limitation stock shares.
func (r *Recorder) Limited() bool {
	return slices.ContainsFunc(r.checks, func(c result.Check) bool { return c.Verdict == result.Limitation })
}

// Fill writes what was recorded into a stage result: failures lead the
// paragraph, and a claim whose checks did not all pass is left out.
func (r *Recorder) Fill(st *result.Stage) {
	r.settle()
	passed := map[string]bool{}
	for _, c := range r.checks {
		passed[c.Name] = c.Verdict == result.Pass
	}
	var lead, rest []string
	for _, s := range r.sentences {
		if s.failure {
			lead = append(lead, s.text)
			continue
		}
		ok := true
		for _, c := range s.restsOn {
			ok = ok && passed[c]
		}
		if ok {
			rest = append(rest, s.text)
		}
	}
	for _, c := range r.checks {
		if c.Verdict == result.Unproven {
			lead = append(lead, capitalise("UNPROVEN %s: it passed, but no BREAK made it fail", c.Name))
		}
	}
	st.Detail = strings.Join(append(lead, rest...), " ")
	st.Checks = append(st.Checks, r.checks...)
	st.Breaks = append(st.Breaks, r.breaks...)
	if len(r.figures) > 0 {
		st.Figures = r.figures
	}
}
