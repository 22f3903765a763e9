package evidence

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// assessment sorts a run's stages by what stands between it and "clear".
type assessment struct {
	headline int
	// failed holds headline stages whose verdict is fail, or a verdict
	// this package does not know (never taken for a pass).
	failed []result.Stage
	notRun []result.Stage
	// unproven holds passing headline stages the page cannot back.
	unproven []unprovenStage
	// outside holds non-headline stages that failed: they do not cost
	// the run its "clear", but the page still says so.
	outside []result.Stage
}

type unprovenStage struct {
	stage result.Stage
	why   []string
}

func assess(r *result.Run) assessment {
	var a assessment
	for _, s := range r.Stages {
		if !s.Headline {
			if s.Verdict != result.Pass && s.Verdict != result.NotRun {
				a.outside = append(a.outside, s)
			}
			continue
		}
		a.headline++
		switch s.Verdict {
		case result.Pass:
			if why := contradictions(s); len(why) > 0 {
				a.unproven = append(a.unproven, unprovenStage{stage: s, why: why})
			}
		case result.NotRun:
			a.notRun = append(a.notRun, s)
		default:
			a.failed = append(a.failed, s)
		}
	}
	return a
}

func (a assessment) clear() bool {
	return a.headline > 0 && len(a.failed) == 0 && len(a.notRun) == 0 && len(a.unproven) == 0
}

// contradictions lists what, inside a stage marked pass, says otherwise:
// a BREAK that did not fail its assertion (result.Break says such a stage
// fails) or a check that failed.
func contradictions(s result.Stage) []string {
	var why []string
	for _, b := range s.Breaks {
		if !b.Failed {
			why = append(why, breakLabel(b.Name)+" left its assertion passing")
		}
	}
	for _, c := range s.Checks {
		if c.Verdict != result.Pass && c.Verdict != result.NotRun {
			why = append(why, fmt.Sprintf("check %s %s", c.Name, verdictPhrase(c.Verdict)))
		}
	}
	return why
}

// verdictSentence is the page's one-line answer to "is the run clear?".
func (a assessment) verdictSentence() string {
	if a.clear() {
		return "Clear. Every headline stage passes."
	}
	if a.headline == 0 {
		return "Not clear. The run has no headline stage, so nothing it shows can be called clear."
	}
	var parts []string
	if n := len(a.failed); n > 0 {
		names := make([]string, n)
		for i, s := range a.failed {
			names[i] = stageName(s)
			if s.Verdict != result.Fail {
				names[i] += " (" + verdictPhrase(s.Verdict) + ")"
			}
		}
		parts = append(parts, fmt.Sprintf("%s of %d headline stages %s: %s",
			count(n), a.headline, plural(n, "fails", "fail"), joinAnd(names)))
	}
	if n := len(a.notRun); n > 0 {
		names := make([]string, n)
		for i, s := range a.notRun {
			names[i] = stageName(s) + " (" + reasonText(s.Reason) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s did not run: %s", count(n), joinAnd(names)))
	}
	if n := len(a.unproven); n > 0 {
		names := make([]string, n)
		for i, u := range a.unproven {
			names[i] = stageName(u.stage) + " (" + strings.Join(u.why, "; ") + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %s marked pass without proof: %s",
			count(n), plural(n, "is", "are"), joinAnd(names)))
	}
	return "Not clear: " + strings.Join(parts, "; ") + "."
}

// outsideSentence names failing non-headline stages, or is empty.
func (a assessment) outsideSentence() string {
	if len(a.outside) == 0 {
		return ""
	}
	names := make([]string, len(a.outside))
	for i, s := range a.outside {
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
