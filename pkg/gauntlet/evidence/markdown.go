package evidence

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Markdown writes r's evidence page: the heading and the estate, where the
// estate comes from, its set and lane, whether the run is clear (see
// Clear) and if not exactly why, one table row per stage with its
// verdict, duration and detail (every BREAK and every check that did not
// pass spelled out in it), the last run, the oracle's and the engine's
// versions against their pins, and how to reproduce the run.
//
// Model text is treated as plain prose, not markdown: in a table cell
// pipes and backslashes are escaped, "<" becomes "&lt;" and line breaks
// become <br>; elsewhere line breaks collapse to one space. Stage
// durations are whole milliseconds under a second and whole seconds above
// ("850ms", "3s" for 3.2s, "1m17s"); the total run time keeps tenths
// ("11m15.2s"). Default options: see WithHeading.
func Markdown(w io.Writer, r *result.Run, opts ...Option) error {
	if r == nil {
		return fmt.Errorf("evidence: markdown: %w", errNilRun)
	}
	// Defensive: findings about secret data show digests even in a run
	// that did not come from gauntlet.Run (which hides them already).
	r = r.SecretDataHidden()
	o := buildOptions(opts)
	var b strings.Builder
	writePage(&b, r, o)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("evidence: markdown %s: write: %w", r.Estate.Name, err)
	}
	return nil
}

func writePage(b *strings.Builder, r *result.Run, o *options) {
	heading := o.heading
	if heading == "" {
		heading = engineLabel(r.Subject) + " against " + engineLabel(r.Oracle)
	}
	fmt.Fprintf(b, "# Evidence · %s\n\n", prose(heading))
	fmt.Fprintf(b, "## %s\n\n", prose(orDefault(r.Estate.Name, "(unnamed estate)")))
	if p := estateParagraph(r.Estate); p != "" {
		fmt.Fprintf(b, "%s\n\n", p)
	}
	fmt.Fprintf(b, "%s\n\n", sourceLine(r.Estate))
	fmt.Fprintf(b, "Set: %s. Lane: %s.\n\n",
		prose(orDefault(r.Estate.Set, "not recorded")), prose(orDefault(r.Estate.Lane, "not recorded")))

	a := assess(r)
	b.WriteString(prose(a.verdictSentence()))
	if s := a.outsideSentence(); s != "" {
		b.WriteString(" " + prose(s))
	}
	b.WriteString("\n\n")

	writeTable(b, r.Stages)
	writeLimitations(b, r)
	writeAborted(b, r.Stages)
	writeChoices(b, r.Choices)
	if s := runOrderLine(r); s != "" {
		fmt.Fprintf(b, "%s\n\n", s)
	}

	fmt.Fprintf(b, "%s\n\n", lastRunLine(r))
	fmt.Fprintf(b, "Oracle: %s\n\n", engineSentence(r.Oracle))
	if r.OracleReplay != "" {
		fmt.Fprintf(b, "The oracle's side was not run again for this engine: it was replayed from its recording in %s of the same matrix (its engine calls with what they left and sent, and gauntlet's own requests to its cluster, each answered as recorded). `gauntlet matrix --oracle-live` runs it live.\n\n", r.OracleReplay)
	}
	fmt.Fprintf(b, "Engine: %s\n\n", engineSentence(r.Subject))
	writeReproduce(b, r)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// estateParagraph is the title, in bold, leading the description.
func estateParagraph(e result.Estate) string {
	title := strings.TrimSpace(e.Title)
	desc := strings.TrimSpace(e.Description)
	switch {
	case title == "" && desc == "":
		return ""
	case title == "":
		return prose(desc)
	case desc == "":
		return "**" + prose(sentence(title)) + "**"
	}
	return "**" + prose(sentence(title)) + "** " + prose(desc)
}

// sourceLine says where the estate's root comes from: a corpus estate's
// repository, commit, path and digest (each said to be missing when it
// is, since a source that cannot be found again is not evidence), or
// "written here" for a reference estate.
func sourceLine(e result.Estate) string {
	if e.SourceRepo == "" && e.SourceCommit == "" && e.SourcePath == "" && e.SourceSHA256 == "" {
		return "Source: written here, a reference estate kept in this repository."
	}
	parts := []string{prose(orDefault(e.SourceRepo, "an unrecorded repository")) + " at " +
		prose(orDefault(e.SourceCommit, "an unrecorded commit"))}
	if e.SourcePath != "" {
		parts = append(parts, "path "+codeSpan(e.SourcePath))
	} else {
		parts = append(parts, "path not recorded")
	}
	switch {
	case e.SourceSHA256 != "" && e.SourceSHA256Listing:
		parts = append(parts, "sha256 of the listing of its files' sha256 and paths (one `<sha256>  <path>` line per file, as sha256sum writes it; each file's own sha256 is in estate.yaml) "+codeSpan(e.SourceSHA256))
	case e.SourceSHA256 != "":
		parts = append(parts, "sha256 "+codeSpan(e.SourceSHA256))
	default:
		parts = append(parts, "sha256 not recorded")
	}
	return "Source: " + strings.Join(parts, ", ") + "."
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

// couldNotFinish opens the part of a stage's detail the runner adds when
// the stage stopped on an error.
const couldNotFinish = "The stage could not finish: "

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
		text := strings.TrimSpace(s.Aborted)
		f := fence(text)
		fmt.Fprintf(b, "<details><summary>%s: %s</summary>\n\n%stext\n%s\n%s\n\n</details>\n\n",
			prose(stageName(s)), prose(oneline.First(text, 160)), f, text, f)
	}
}

// writeChoices lists what drift, rename, remove and plan approval acted
// on, and whether gauntlet derived it from the root or estate.yaml wrote
// it; a stage with no fitting choice says why.
func writeChoices(b *strings.Builder, choices []result.Choice) {
	if len(choices) == 0 {
		return
	}
	b.WriteString("Stage plans (derived by gauntlet from the root where estate.yaml has no section):\n\n")
	b.WriteString("| Stage | From | Plan | Why |\n|---|---|---|---|\n")
	for _, c := range choices {
		var fields []string
		for _, f := range c.Fields {
			fields = append(fields, f.Name+" "+codeSpan(f.Value))
		}
		plan := strings.Join(fields, "; ")
		if plan == "" {
			plan = "none: the stage does not run"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(c.Stage), cell(c.Source), cell(plan), cell(prose(c.Why)))
	}
	b.WriteString("\n")
}

// writeLimitations lists, in a section of their own, the checks the
// subject and stock failed the same way: each is a limitation of the
// estate or its provider, counted neither as a pass nor as the engine's
// fail. Nothing is written when there are none.
func writeLimitations(b *strings.Builder, r *result.Run) {
	var items []string
	for _, s := range r.Stages {
		for _, c := range s.Checks {
			if c.Verdict == result.Limitation {
				items = append(items, fmt.Sprintf("- %s, %s: %s", prose(stageName(s)), prose(c.Name), prose(orDefault(c.Detail, "no detail recorded"))))
			}
		}
	}
	if len(items) == 0 {
		return
	}
	b.WriteString("### Limitations stock shares\n\n")
	fmt.Fprintf(b, "%s fails these checks exactly as the engine does (the same findings on both sides), so they say nothing about the engine: each is a behaviour of the estate or its provider. They are not passes, and the stages holding them are not the engine's fail.\n\n",
		prose(engineLabel(r.Oracle)))
	b.WriteString(strings.Join(items, "\n") + "\n\n")
}

// stageDetail is the stage's Detail cell: the paragraph, or for a stage
// that did not run its reason first; then every BREAK; then the checks
// that did not pass (a check that did not run is never hidden behind a
// stage that passed); then requirements and figures.
func stageDetail(s result.Stage) string {
	var parts []string
	if s.Verdict == result.NotRun {
		parts = append(parts, sentence("Not run: "+reasonText(s.Reason)))
	}
	detail := s.Detail
	if i := strings.Index(detail, couldNotFinish); i >= 0 && s.Aborted != "" {
		// The whole error is folded under the table; the cell keeps its
		// first line.
		detail = detail[:i] + couldNotFinish + oneline.First(s.Aborted, 200) + " (the whole error is under the table)"
	}
	if d := sentence(detail); d != "" {
		parts = append(parts, d)
	} else if s.Verdict != result.NotRun {
		parts = append(parts, "No detail recorded.")
	}
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
	if len(s.Figures) > 0 {
		keys := slices.Sorted(maps.Keys(s.Figures))
		figs := make([]string, len(keys))
		for i, k := range keys {
			figs[i] = fmt.Sprintf("%s=%d", k, s.Figures[k])
		}
		parts = append(parts, "Figures: "+strings.Join(figs, ", ")+".")
	}
	return strings.Join(parts, " ")
}

// checksLine lists every check with what proves it: the BREAKs that made
// it fail, or why none can; a check that did not pass says so first.
func checksLine(checks []result.Check) string {
	if len(checks) == 0 {
		return ""
	}
	items := make([]string, len(checks))
	for i, c := range checks {
		switch c.Verdict {
		case result.Pass:
			if len(c.ProvedBy) > 0 {
				labels := make([]string, len(c.ProvedBy))
				for j, b := range c.ProvedBy {
					labels[j] = breakLabel(b)
				}
				items[i] = c.Name + " (proved by " + strings.Join(labels, ", ") + ")"
			} else {
				items[i] = c.Name + " (no BREAK: " + orDefault(c.NoBreak, "no reason recorded") + ")"
			}
		case result.NotRun:
			items[i] = c.Name + " (NOT RUN here: " + reasonText(c.Detail) + ")"
		case result.Unproven:
			items[i] = "**" + c.Name + " (UNPROVEN: it passed, but no BREAK made it fail)**"
		default:
			items[i] = "**" + c.Name + " (" + strings.ToUpper(verdictWord(c.Verdict)) + ": " + orDefault(c.Detail, "no detail recorded") + ")**"
		}
	}
	return "Checks: " + strings.Join(items, "; ") + "."
}

// breakSentence says what a BREAK corrupted and what became of it: proved
// (the checks it covers reported the finding it predicted), or, in bold, held, off
// target, could not run, or an engine finding.
func breakSentence(br result.Break) string {
	corruption := strings.TrimSpace(br.Corruption)
	if corruption == "" {
		corruption = "(corruption not recorded)"
	}
	detail := strings.TrimSpace(br.Detail)
	label := breakLabel(br.Name)
	if br.Failed {
		s := label + " " + corruption + " and " + orDefault(strings.Join(br.Covers, ", "), "the assertion") + " correctly failed"
		if detail != "" {
			s += ": " + detail
		}
		return sentence(s)
	}
	what := map[result.BreakOutcome]string{
		result.Held:         "NOT LOAD-BEARING",
		result.OffTarget:    "FAILED OFF TARGET",
		result.CouldNotRun:  "COULD NOT RUN",
		result.CouldNotUndo: "COULD NOT UNDO",
	}[br.Outcome]
	if br.EngineFinding {
		what = "ENGINE FINDING"
	}
	if what == "" {
		what = "NOT LOAD-BEARING"
	}
	s := "**" + what + ": " + label + "** " + corruption
	if detail != "" {
		s += "; " + detail
	}
	return sentence(s)
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

func lastRunLine(r *result.Run) string {
	commit := "an unrecorded commit"
	if r.Commit != "" {
		commit = "commit " + shortCommit(r.Commit)
	}
	when := "at an unrecorded time"
	if !r.StartedAt.IsZero() {
		when = "on " + r.StartedAt.UTC().Format(time.RFC3339)
	}
	return prose(fmt.Sprintf("Last run at %s %s, exit code %d, against substrate %s. Total run time %s.",
		commit, when, r.ExitCode, orDefault(r.Substrate, "not recorded"), formatTotal(r.Duration)))
}

// engineLabel is "name version", or whatever of it the run recorded.
func engineLabel(e result.Engine) string {
	l := strings.TrimSpace(e.Name + " " + e.Version)
	if l == "" {
		return orDefault(e.Display, "an unrecorded engine")
	}
	return l
}

// engineSentence is an engine's version as the run saw it and against its
// pin: stale or current, or, for an engine given by path, that there is no
// pin to hold it to.
func engineSentence(e result.Engine) string {
	s := engineLabel(e)
	if d := strings.TrimSpace(e.Display); d != "" && d != s {
		s += " (" + d + ")"
	}
	switch {
	case e.Pinned == "":
		s += ", given by path"
		if e.Path != "" {
			s += " " + e.Path
		}
		s += " with no pin to hold it to."
	case e.Stale():
		s += ". Stale: the current pin is " + strings.TrimSpace(e.Name+" "+e.Pinned) + "."
	default:
		s += ", matching its current pin."
	}
	return prose(s)
}

func writeReproduce(b *strings.Builder, r *result.Run) {
	b.WriteString("## Reproduce it\n\n")
	cmd := strings.TrimSpace(r.Reproduce)
	if cmd == "" {
		b.WriteString("The run recorded no command to reproduce it.\n")
	} else {
		f := fence(cmd)
		fmt.Fprintf(b, "%ssh\n%s\n%s\n", f, cmd, f)
	}
	if len(r.Environment) > 0 {
		b.WriteString("\nThe run's environment:\n\n")
		for _, e := range r.Environment {
			fmt.Fprintf(b, "- %s\n", codeSpan(e))
		}
	}
}
