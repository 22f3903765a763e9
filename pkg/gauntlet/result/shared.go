package result

import (
	"slices"
	"strings"
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
