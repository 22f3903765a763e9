package evidence

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The default layout (FormatSections) reads top-down: a table to take in
// the run at a glance, then a section per stage to read what it did.

// reasonLimit is how long the summary table's one-line reason may be,
// in runes.
const reasonLimit = 160

// writeSections is the default layout's part of the page between the
// verdict and the last run.
func writeSections(b *strings.Builder, r *result.Run) {
	stages := inRunOrder(r)
	writeSummary(b, stages)
	writeLimitations(b, stages, r.Oracle)
	writeOracleFindings(b, stages, r.Oracle)
	for _, s := range stages {
		if s.Verdict != result.NotRun && s.Verdict != result.NotApplicable {
			writeStage(b, s)
		}
	}
	writeNotRun(b, stages)
	writeNotApplicable(b, stages)
	writeChoices(b, r.Choices)
}

// inRunOrder is r's stages in the order they ran (r.RunOrder), then any
// stage RunOrder does not name in the stages' own order: all of them for
// a run recorded before the run order was.
func inRunOrder(r *result.Run) []result.Stage {
	out := make([]result.Stage, 0, len(r.Stages))
	used := make([]bool, len(r.Stages))
	for _, id := range r.RunOrder {
		for i, s := range r.Stages {
			if !used[i] && s.ID == id {
				used[i] = true
				out = append(out, s)
				break
			}
		}
	}
	for i, s := range r.Stages {
		if !used[i] {
			out = append(out, s)
		}
	}
	return out
}

// writeSummary is the table of stages in run order: verdict, time, how
// many checks a BREAK proved, and a one-line reason.
func writeSummary(b *strings.Builder, stages []result.Stage) {
	b.WriteString("| Stage | Verdict | Time | Checks | Reason |\n")
	b.WriteString("|---|---|---|---|---|\n")
	if len(stages) == 0 {
		b.WriteString("| (no stages) | not run | - | - | The run recorded no stage. |\n\n")
		return
	}
	for _, s := range stages {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n",
			cell(stageLabel(s)), cell(verdictWord(s.Verdict)), stageTime(s), cell(checksCount(s)), cell(summaryReason(s)))
	}
	b.WriteString("\n")
}

// stageLabel is the stage's title with its ID, and whether it is outside
// the headline: "Strict profile (strict, not a headline stage)".
func stageLabel(s result.Stage) string {
	var tags []string
	if name := stageName(s); name != s.ID && s.ID != "" {
		tags = append(tags, s.ID)
	}
	if !s.Headline {
		tags = append(tags, "not a headline stage")
	}
	if len(tags) == 0 {
		return stageName(s)
	}
	return stageName(s) + " (" + strings.Join(tags, ", ") + ")"
}

// stageTime is the stage's duration, or "-" for a stage that did not run
// (or did not apply) and took no time.
func stageTime(s result.Stage) string {
	if (s.Verdict == result.NotRun || s.Verdict == result.NotApplicable) && s.Duration == 0 {
		return "-"
	}
	return formatDuration(s.Duration)
}

// checksCount is "proven/total proven" and how many of the rest passed
// without a BREAK, did not run, failed...: "4/5 proven, 1 not run".
func checksCount(s result.Stage) string {
	if len(s.Checks) == 0 {
		if s.Verdict == result.NotRun || s.Verdict == result.NotApplicable {
			return "-"
		}
		return "none recorded"
	}
	proven := 0
	counts := map[string]int{}
	var order []string
	for _, c := range s.Checks {
		label := checkTally(c)
		if label == "" {
			proven++
			continue
		}
		if counts[label] == 0 {
			order = append(order, label)
		}
		counts[label]++
	}
	parts := []string{fmt.Sprintf("%d/%d proven", proven, len(s.Checks))}
	for _, l := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[l], l))
	}
	return strings.Join(parts, ", ")
}

// checkTally is how checksCount counts a check: "" when a BREAK proved it.
func checkTally(c result.Check) string {
	switch c.Verdict {
	case result.Pass:
		if len(c.ProvedBy) > 0 {
			return ""
		}
		return "without a BREAK"
	case result.Fail:
		return "failed"
	case result.Unproven:
		return "unproven"
	}
	return verdictWord(c.Verdict)
}

// summaryReason is the summary table's one line about a stage: why it did
// not run, or the first thing that failed (the error that stopped it, a
// failed check, a limitation, an unproven check, a BREAK that did not
// prove), or for a pass what it could not show; empty for a clean pass.
func summaryReason(s result.Stage) string {
	switch s.Verdict {
	case result.NotRun:
		return firstSentence(reasonText(s.Reason))
	case result.NotApplicable:
		return firstSentence("not applicable to this estate: " + reasonText(s.Reason))
	case result.Cancelled:
		return firstSentence(orDefault(s.Detail, "cancelled"))
	case result.Pass:
		if why := result.Contradictions(s); len(why) > 0 {
			return firstSentence("not proven: " + why[0])
		}
		var notRun []string
		for _, c := range s.Checks {
			if c.Verdict == result.NotRun {
				notRun = append(notRun, c.Name)
			}
		}
		if n := len(notRun); n > 0 {
			return oneline.First(fmt.Sprintf("%s %s not run here: %s", count(n), plural(n, "check", "checks"), strings.Join(notRun, ", ")), reasonLimit)
		}
		return ""
	}
	if k := s.Known; k != nil && k.Difference {
		return firstSentence("an engine difference, not a bug: " + k.Why)
	}
	if s.Aborted != "" {
		return oneline.First("could not finish: "+s.Aborted, reasonLimit)
	}
	for _, want := range []result.Verdict{result.Fail, result.Limitation, result.Unproven} {
		for _, c := range s.Checks {
			if c.Verdict != want {
				continue
			}
			switch want {
			case result.Limitation:
				return firstSentence(c.Name + ": stock fails it the same way")
			case result.Unproven:
				return firstSentence(c.Name + ": unproven, no BREAK made it fail")
			}
			if v := victims(c.Findings); len(v) > 1 {
				// Every victim, uncut: the detail's first line names
				// only the first.
				return fmt.Sprintf("%s failed: %d findings, on %s.", c.Name, len(c.Findings), joinAnd(v))
			}
			return firstSentence(c.Name + " failed: " + orDefault(c.Detail, "no detail recorded"))
		}
	}
	for _, br := range s.Breaks {
		if br.Side != "oracle" && !br.Failed {
			return firstSentence(breakFailure(br) + ": " + breakLabel(br.Name))
		}
	}
	return firstSentence(orDefault(s.Detail, verdictPhrase(s.Verdict)))
}

// victims are the findings' victims, each once, in order.
func victims(fs []result.Finding) []string {
	var out []string
	for _, f := range fs {
		if v := f.Victim(); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// firstSentence is s's first line up to its first full stop, cut to
// reasonLimit runes.
func firstSentence(s string) string {
	l := oneline.First(s, len(s))
	if i := strings.Index(l, ". "); i >= 0 {
		l = l[:i+1]
	}
	return oneline.First(l, reasonLimit)
}

// writeStage is one stage's section: what it is, its paragraph (and its
// whole error, folded, when it could not finish), every check with what
// proves it, every BREAK with what became of it, and its figures.
func writeStage(b *strings.Builder, s result.Stage) {
	fmt.Fprintf(b, "### %s\n\n", prose(stageName(s)))
	meta := []string{"Stage " + codeSpan(s.ID), verdictWord(s.Verdict), formatDuration(s.Duration)}
	if !s.Headline {
		meta = append(meta, "not a headline stage")
	}
	if len(s.Requirements) > 0 {
		meta = append(meta, "requirements "+strings.Join(s.Requirements, ", "))
	}
	b.WriteString(prose(strings.Join(meta, " · ")) + "\n\n")
	if p := paragraph(s, "the whole error is below"); p != "" {
		b.WriteString(prose(p) + "\n\n")
	} else {
		b.WriteString("No detail recorded.\n\n")
	}
	if s.Known != nil {
		b.WriteString(prose(knownLine(s.Known)) + "\n\n")
	}
	if s.Aborted != "" {
		b.WriteString(abortedFold(s))
	}
	if len(s.Checks) > 0 {
		b.WriteString("Checks:\n\n")
		for _, c := range s.Checks {
			b.WriteString(checkItem(c))
		}
		b.WriteString("\n")
	}
	b.WriteString(breakTable(s))
	if f := figuresLine(nonZero(s.Figures)); f != "" {
		b.WriteString(prose(f) + "\n\n")
	}
	if c := callsLine(s); c != "" {
		b.WriteString(prose(c) + "\n\n")
	}
}

// checkItem is a check as a list item: its verdict and what proves it,
// or why nothing can; a check that did not pass says so in bold, a failed
// one with what it found, one finding or unmade measurement a line.
func checkItem(c result.Check) string {
	var s string
	switch c.Verdict {
	case result.Pass:
		if len(c.ProvedBy) > 0 {
			labels := make([]string, len(c.ProvedBy))
			for i, name := range c.ProvedBy {
				labels[i] = breakLabel(name)
			}
			s = c.Name + ": pass, proved by " + strings.Join(labels, ", ")
		} else {
			s = c.Name + ": pass, no BREAK: " + orDefault(c.NoBreak, "no reason recorded")
		}
		return "- " + prose(sentence(s)) + "\n"
	case result.NotRun:
		return "- " + prose(sentence(c.Name+": NOT RUN here: "+reasonText(c.Detail))) + "\n"
	case result.Unproven:
		return "- **" + prose(c.Name) + ": UNPROVEN**: it passed, but no BREAK made it fail.\n"
	}
	word := strings.ToUpper(verdictWord(c.Verdict))
	switch c.Verdict {
	case result.Limitation:
		word += " (stock fails it the same way)"
	case result.OracleFinding:
		word += " (stock alone breaks this promise; the engine under test keeps it)"
	}
	detail := orDefault(c.Detail, "no detail recorded")
	if len(c.Findings) > 0 || len(c.MeasurementErrors) > 0 {
		// The findings below are the detail's substance; its first line
		// keeps the context around them.
		detail = oneline.First(detail, 200)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- **%s: %s**: %s\n", prose(c.Name), prose(word), prose(sentence(detail)))
	for _, f := range c.Findings {
		fmt.Fprintf(&b, "  - finding: %s\n", prose(f.Error()))
	}
	for _, m := range c.MeasurementErrors {
		fmt.Fprintf(&b, "  - could not measure: %s\n", prose(m))
	}
	return b.String()
}

// writeNotRun lists the stages that did not run, each with its whole
// reason (the summary table cuts it to a line) and what it would have
// verified; they have no section and no figures.
func writeNotRun(b *strings.Builder, stages []result.Stage) {
	writeStagesBy(b, stages, result.NotRun, "Stages that did not run", "")
}

// writeNotApplicable lists the stages the estate's shape cannot carry,
// each with its whole reason and what it would have verified: none of
// them is a pass, a fail or a proof, and none costs the run its clear.
func writeNotApplicable(b *strings.Builder, stages []result.Stage) {
	writeStagesBy(b, stages, result.NotApplicable, "Stages not applicable to this estate",
		"The estate's shape cannot carry these stages: no object of its root could. They are neither passes nor fails, prove no requirement, and do not cost the run its clear.")
}

// writeStagesBy lists, under heading (and intro, if any), the stages of
// verdict v, each with its whole reason, its detail and what it would
// have verified.
func writeStagesBy(b *strings.Builder, stages []result.Stage, v result.Verdict, heading, intro string) {
	var items []string
	for _, s := range stages {
		if s.Verdict != v {
			continue
		}
		parts := []string{sentence(reasonText(s.Reason))}
		if d := sentence(s.Detail); d != "" {
			parts = append(parts, d)
		}
		parts = append(parts, proofSentences(s)...)
		items = append(items, "- "+prose(stageLabel(s)+": "+strings.Join(parts, " ")))
	}
	if len(items) == 0 {
		return
	}
	b.WriteString("### " + heading + "\n\n")
	if intro != "" {
		b.WriteString(intro + "\n\n")
	}
	b.WriteString(strings.Join(items, "\n") + "\n\n")
}

// breakTable is a stage's BREAKs on the subject's side as a table: the
// BREAK, what it corrupted, the checks it covers, what became of it (in
// capitals when it did not prove) and what the checks said; empty when
// the stage ran none.
func breakTable(s result.Stage) string {
	var rows []string
	for _, br := range s.Breaks {
		if br.Side == "oracle" {
			continue
		}
		outcome := "proved"
		if !br.Failed {
			outcome = "**" + breakFailure(br) + "**"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", cell(breakLabel(br.Name)),
			cell(orDefault(br.Corruption, "(corruption not recorded)")), cell(orDefault(strings.Join(br.Covers, ", "), "-")),
			outcome, cell(orDefault(br.Detail, "-"))))
	}
	if len(rows) == 0 {
		return ""
	}
	return "BREAKs:\n\n| BREAK | Corruption | Covers | Outcome | What the checks said |\n|---|---|---|---|---|\n" + strings.Join(rows, "") + "\n"
}

// nonZero is the figures that are not zero: a figure of zero says
// nothing, and a line of zeros is left out.
func nonZero(figures map[string]int) map[string]int {
	kept := map[string]int{}
	for k, v := range figures {
		if v != 0 {
			kept[k] = v
		}
	}
	return kept
}

// knownLine is the estate's word on a stage that failed exactly as its
// findings list: a documented engine difference, said as one with where
// it is documented, or a failure the estate knows of.
func knownLine(k *result.Known) string {
	why := strings.TrimSuffix(strings.TrimSpace(k.Why), ".")
	if !k.Difference {
		return "Known to this estate (estate.yaml findings): " + why + "."
	}
	return fmt.Sprintf("An engine difference, not a bug (estate.yaml findings): %s. %s behave this way by design; documented in %s.",
		why, k.Engines, strings.Join(k.References, ", "))
}
