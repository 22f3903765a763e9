package evidence

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The seed layout (FormatSeed): one table row per stage in display
// order, every word about a stage in its Detail cell.

// writeSeed is the seed layout's part of the page between the verdict and
// the last run.
func writeSeed(b *strings.Builder, r *result.Run) {
	writeTable(b, r.Stages)
	writeLimitations(b, r.Stages, r.Oracle)
	writeOracleFindings(b, r.Stages, r.Oracle)
	writeAborted(b, r.Stages)
	writeChoices(b, r.Choices)
	if s := runOrderLine(r); s != "" {
		fmt.Fprintf(b, "%s\n\n", s)
	}
}

func writeTable(b *strings.Builder, stages []result.Stage) {
	b.WriteString("| Stage | Verdict | Duration | Detail |\n")
	b.WriteString("|---|---|---|---|\n")
	if len(stages) == 0 {
		b.WriteString("| (no stages) | not run | 0s | The run recorded no stage. |\n\n")
		return
	}
	for _, s := range stages {
		title := stageName(s)
		if !s.Headline {
			title += " (not a headline stage)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n",
			cell(title), cell(verdictWord(s.Verdict)), formatDuration(s.Duration), cell(stageDetail(s)))
	}
	b.WriteString("\n")
}

// writeAborted shows the whole error of every stage that could not
// finish, each folded: every error the engine printed can be the cause.
func writeAborted(b *strings.Builder, stages []result.Stage) {
	var aborted []result.Stage
	for _, s := range stages {
		if s.Aborted != "" {
			aborted = append(aborted, s)
		}
	}
	if len(aborted) == 0 {
		return
	}
	b.WriteString("Stages that could not finish, each with its whole error:\n\n")
	for _, s := range aborted {
		b.WriteString(abortedFold(s))
	}
}

// proofSentences are a stage's subject BREAKs, the checks that did not
// pass and its requirements, a sentence each.
func proofSentences(s result.Stage) []string {
	var parts []string
	for _, br := range s.Breaks {
		if br.Side != "oracle" {
			parts = append(parts, breakSentence(br))
		}
	}
	if line := checksLine(s.Checks); line != "" {
		parts = append(parts, line)
	}
	if len(s.Requirements) > 0 {
		parts = append(parts, "Requirements: "+strings.Join(s.Requirements, ", ")+".")
	}
	return parts
}

// stageDetail is the stage's Detail cell: the paragraph, or for a stage
// that did not run or does not apply its reason first; then every BREAK; then the checks
// that did not pass (a check that did not run is never hidden behind a
// stage that passed); then requirements and figures.
func stageDetail(s result.Stage) string {
	var parts []string
	switch s.Verdict {
	case result.NotRun:
		parts = append(parts, sentence("Not run: "+reasonText(s.Reason)))
	case result.NotApplicable:
		parts = append(parts, sentence("Not applicable to this estate: "+reasonText(s.Reason)))
	}
	// The whole error is folded under the table; the cell keeps its
	// first line.
	if d := paragraph(s, "the whole error is under the table"); d != "" {
		parts = append(parts, d)
	} else if s.Verdict != result.NotRun && s.Verdict != result.NotApplicable {
		parts = append(parts, "No detail recorded.")
	}
	parts = append(parts, proofSentences(s)...)
	if f := figuresLine(s.Figures); f != "" {
		parts = append(parts, f)
	}
	return strings.Join(parts, " ")
}

// runOrderLine shows the order stages ran in, when it is not the table's.
func runOrderLine(r *result.Run) string {
	if len(r.RunOrder) == 0 {
		return ""
	}
	ids := make([]string, len(r.Stages))
	for i, s := range r.Stages {
		ids[i] = s.ID
	}
	if slices.Equal(ids, r.RunOrder) {
		return ""
	}
	return "Stages ran in this order: " + prose(strings.Join(r.RunOrder, ", ")) + "."
}
