package result

import (
	"errors"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/errtree"
)

// Limitation is the verdict of a check that failed the same way on both
// sides - the subject and stock report the same findings - and of a stage
// whose only failures are such checks: a behaviour stock shares (the
// provider's or the root's, e.g. a drift the provider does not see), never
// the engine's fail and never a pass. A check comparing the engine with
// stock cannot be one: its findings are the subject's alone.
const Limitation Verdict = "limitation"

// SharedFailure reports whether a failed check's findings make it a
// limitation: there are findings on both sides, no measurement error, and
// with the side set aside the two sides found exactly the same things
// (victim, field, want and got). The victim is compared by address and
// object name alike: the two clusters hold the same namespaces and names.
func SharedFailure(findings []Finding, measurementErrors []string) bool {
	if len(measurementErrors) > 0 {
		return false
	}
	var subject, oracle []string
	for _, f := range findings {
		key := strings.Join([]string{f.Check, f.Address, f.Object, f.Field, f.Want, f.Got}, "\x00")
		switch f.Side {
		case "subject":
			subject = append(subject, key)
		case "oracle":
			oracle = append(oracle, key)
		default:
			return false // a parity finding, or one no side measured
		}
	}
	if len(subject) == 0 || len(oracle) == 0 {
		return false
	}
	slices.Sort(subject)
	slices.Sort(oracle)
	return slices.Equal(subject, oracle)
}

// StockAloneFailure reports whether a failed check's findings are the
// oracle's alone: stock fails it and the engine under test does not (a
// defect of stock or of the provider under stock). It is no pass - the
// reference the engine is judged beside failed - and never the engine's
// fail, so its verdict is a limitation, said in those words.
func StockAloneFailure(findings []Finding, measurementErrors []string) bool {
	if len(measurementErrors) > 0 || len(findings) == 0 {
		return false
	}
	for _, f := range findings {
		if f.Side != "oracle" {
			return false
		}
	}
	return true
}

// OracleFinding is the verdict of a check that holds each side to the
// same promise on its own - an exit code on an unchanged world, an apply
// that must succeed - which stock broke and the engine under test kept:
// a defect of the pinned oracle (or of the provider under it), reported
// as stock's in its own words. The engine's side passed and is proven by
// its own BREAK, so it is no limitation and costs the run nothing; a
// check that compares the engine with stock can never be one (the stage
// says which checks are promises: Recorder.Promise).
const OracleFinding Verdict = "oracle_finding"

// SideError is what one side of a two-sided step returned: the stage
// reads which sides failed from it, not from its text.
type SideError struct {
	Side string
	Err  error
}

// Error names the side once: a finding or measurement error stamped with
// its side already starts with it.
func (e *SideError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Side+": ") {
		return msg
	}
	return e.Side + ": " + msg
}

func (e *SideError) Unwrap() error { return e.Err }

// StockAlone reports whether err, a stage's abort, came from the oracle's
// side alone: followed through every wrap and join, each branch ends in
// an oracle SideError. Stock could not finish a step the engine under
// test finished, so the stage stops short for stock's reason, not the
// engine's.
func StockAlone(err error) bool {
	return errtree.Every(err, func(e error) (bool, bool) {
		s, ok := e.(*SideError)
		return ok && s.Side == "oracle", ok
	})
}

// SidesOf lists the sides of every SideError in err's tree, the subject
// first: which side's step stopped a stage.
func SidesOf(err error) []string {
	seen := map[string]bool{}
	var visit func(error)
	visit = func(e error) {
		switch x := e.(type) {
		case nil:
		case *SideError:
			seen[x.Side] = true
		case interface{ Unwrap() []error }:
			for _, c := range x.Unwrap() {
				visit(c)
			}
		default:
			visit(errors.Unwrap(e))
		}
	}
	visit(err)
	var out []string
	for _, s := range []string{"subject", "oracle"} {
		if seen[s] {
			out = append(out, s)
		}
	}
	return out
}
