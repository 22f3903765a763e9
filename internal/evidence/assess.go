package evidence

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// assessment is the run's one verdict (result.Run.Assess) with the
// sentences the page says about it.
type assessment struct {
	result.Assessment
	substrate string
	// oracle names stock as the page does ("terraform 1.11.4").
	oracle string
	// cancelled is cancelledSentence(r): it names the stage by its title.
	cancelled string
}

func assess(r *result.Run) assessment {
	return assessment{Assessment: r.Assess(), substrate: r.Substrate, oracle: orDefault(r.Oracle.Display, "the oracle"), cancelled: cancelledSentence(r)}
}

// verdictSentence is the page's one-line answer to "is the run clear?",
// and, when stock alone broke a promise the engine kept, that it did:
// stock's finding costs the engine nothing, but no reader should miss it.
func (a assessment) verdictSentence() string {
	s := a.verdictCore()
	if n := len(a.OracleFindings); n > 0 && a.Cancelled == nil {
		checks := make([]string, n)
		for i, c := range a.OracleFindings {
			checks[i] = c.Stage + ": " + c.Check
		}
		s += fmt.Sprintf(" Stock (%s) broke %s %s the engine under test kept - the oracle's %s, not the engine's: %s.",
			a.oracle, count(n), plural(n, "promise", "promises"), plural(n, "finding", "findings"), strings.Join(checks, "; "))
	}
	return s
}

func (a assessment) verdictCore() string {
	if a.Cancelled != nil {
		return a.cancelled
	}
	if a.Sabotaged {
		return "Not clear: a sabotaged run (every BREAK's corruption skipped, to test the BREAKs themselves) is never clear."
	}
	if a.Clear() {
		var short []string
		if na := a.notApplicablePart(); na != "" {
			short = append(short, na)
		}
		if n := len(a.ChecksNotRun); n > 0 {
			names := make([]string, n)
			for i, c := range a.ChecksNotRun {
				names[i] = c.Stage + ": " + c.Check
			}
			short = append(short, fmt.Sprintf("%s %s not run on the %s substrate: %s",
				count(n), plural(n, "check", "checks"), orDefault(a.substrate, "unnamed"), strings.Join(names, "; ")))
		}
		switch {
		case len(short) == 0:
			return "Clear. Every headline stage passes."
		case len(a.ChecksNotRun) == 0:
			return "Clear - " + short[0] + ". Every other headline stage passes."
		case len(a.NotApplicable) == 0:
			return "Clear - " + short[0] + ". Every headline stage passes on what this substrate can show; `--substrate kind` runs the rest."
		}
		return "Clear - " + strings.Join(short, "; ") + ". Every other headline stage passes on what this substrate can show; `--substrate kind` runs the rest."
	}
	if a.Headline == len(a.NotApplicable) {
		if a.Headline == 0 {
			return "Not clear. The run has no headline stage, so nothing it shows can be called clear."
		}
		return "Not clear. No headline stage applies to this estate, so nothing it shows can be called clear: " + a.notApplicablePart() + "."
	}
	var parts []string
	if n := len(a.Failed); n > 0 {
		names := make([]string, n)
		for i, s := range a.Failed {
			names[i] = stageName(s)
			if s.Verdict != result.Fail {
				names[i] += " (" + verdictPhrase(s.Verdict) + ")"
			}
		}
		parts = append(parts, fmt.Sprintf("%s of %d headline stages %s: %s",
			count(n), a.Headline, plural(n, "fails", "fail"), joinAnd(names)))
	}
	if n := len(a.Limitations); n > 0 {
		names := make([]string, n)
		for i, s := range a.Limitations {
			names[i] = stageName(s)
		}
		parts = append(parts, fmt.Sprintf("%s %s the same way on stock (%s): %s - a limitation of the estate or its provider, not the engine's fail",
			count(n), plural(n, "fails", "fail"), a.oracle, joinAnd(names)))
	}
	if n := len(a.NotRun); n > 0 {
		names := make([]string, n)
		for i, s := range a.NotRun {
			names[i] = stageName(s) + " (" + reasonText(s.Reason) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s did not run: %s", count(n), joinAnd(names)))
	}
	if n := len(a.NotApplicable); n > 0 {
		// Said, but not what keeps the run from clear.
		parts = append(parts, fmt.Sprintf("%s %s not applicable to this estate, which costs no clear: %s",
			count(n), plural(n, "stage is", "stages are"), a.notApplicableNames()))
	}
	if n := len(a.Unproven); n > 0 {
		names := make([]string, n)
		for i, u := range a.Unproven {
			names[i] = stageName(u.Stage) + " (" + strings.Join(u.Why, "; ") + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %s marked pass without proof: %s",
			count(n), plural(n, "is", "are"), joinAnd(names)))
	}
	if n := len(a.Aborted); n > 0 {
		names := make([]string, n)
		for i, s := range a.Aborted {
			names[i] = fmt.Sprintf("%s after %d %s (%s)", s.Stage, s.Recorded, plural(s.Recorded, "check", "checks"), oneline.First(s.Reason, 160))
		}
		parts = append(parts, fmt.Sprintf("%s %s aborted, so every check after the abort did not run: %s",
			count(n), plural(n, "stage", "stages"), joinAnd(names)))
	}
	return "Not clear: " + strings.Join(parts, "; ") + "."
}

// notApplicablePart names the headline stages the estate's shape cannot
// carry, each with its reason: "one stage not applicable to this estate:
// Remove a block (the root has one kubernetes object: ...)", or is empty.
func (a assessment) notApplicablePart() string {
	n := len(a.NotApplicable)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s not applicable to this estate: %s", count(n), plural(n, "stage", "stages"), a.notApplicableNames())
}

// notApplicableNames is "Remove a block (its reason)", joined.
func (a assessment) notApplicableNames() string {
	names := make([]string, len(a.NotApplicable))
	for i, s := range a.NotApplicable {
		names[i] = stageName(s) + " (" + reasonText(s.Reason) + ")"
	}
	return joinAnd(names)
}

// outsideSentence names failing non-headline stages, or is empty.
func (a assessment) outsideSentence() string {
	if len(a.Outside) == 0 {
		return ""
	}
	names := make([]string, len(a.Outside))
	for i, s := range a.Outside {
		names[i] = stageName(s)
		if s.Verdict != result.Fail {
			names[i] += " (" + verdictPhrase(s.Verdict) + ")"
		}
	}
	return fmt.Sprintf("Outside the headline, %s %s.", joinAnd(names), plural(len(names), "fails", "fail"))
}

func stageName(s result.Stage) string {
	if t := strings.TrimSpace(s.Title); t != "" {
		return t
	}
	return s.ID
}

// breakLabel is how a BREAK is named on the page and in JUnit: "BREAK "
// and its name, unless the name already says BREAK (e.g. "BREAK_COUNT=1").
func breakLabel(name string) string {
	if strings.HasPrefix(strings.ToUpper(name), "BREAK") {
		return name
	}
	return "BREAK " + name
}

func reasonText(reason string) string {
	if r := strings.TrimSpace(reason); r != "" {
		return r
	}
	return "no reason recorded"
}

func count(n int) string {
	words := []string{"none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
