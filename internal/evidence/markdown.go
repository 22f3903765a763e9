package evidence

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Markdown writes r's evidence page. Every layout opens with the
// heading and the estate, where the estate comes from, its set and lane,
// and whether the run is clear (see Clear) and if not exactly why; and
// closes with the last run, the oracle's and the engine's versions
// against their pins, and how to reproduce the run. Between them, by
// default (FormatSections), a summary table with one row per stage in the
// order the stages ran (result.Run.RunOrder; the stages' own order for a
// run that did not record it): its verdict, time, checks proven and a
// one-line reason; the checks stock fails alike; then one section per
// stage that ran, in that order, with its paragraph, every check and what
// proves it, every BREAK and what became of it, and its figures; then the
// stages that did not run, each with its whole reason; then the stage
// plans. WithFormat(FormatSeed) writes the earlier layout instead: one
// table row per stage in display order, every word about it in one cell.
//
// Model text is treated as plain prose, not markdown: in a table cell
// pipes and backslashes are escaped, "<" becomes "&lt;" and line breaks
// become <br>; elsewhere line breaks collapse to one space. Stage
// durations are whole milliseconds under a second and whole seconds above
// ("850ms", "3s" for 3.2s, "1m17s"); the total run time keeps tenths
// ("11m15.2s"). Default options: see WithHeading and WithFormat.
func Markdown(w io.Writer, r *result.Run, opts ...Option) error {
	if r == nil {
		return fmt.Errorf("evidence: markdown: %w", errNilRun)
	}
	o := buildOptions(opts)
	if _, err := ParseFormat(string(o.format)); err != nil {
		return fmt.Errorf("evidence: markdown %s: %w", r.Estate.Name, err)
	}
	// Defensive: findings about secret data show digests even in a run
	// that did not come from gauntlet.Run (which hides them already).
	r = r.SecretDataHidden()
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
	estate := func() {
		if p := estateParagraph(r.Estate); p != "" {
			fmt.Fprintf(b, "%s\n\n", p)
		}
		fmt.Fprintf(b, "%s\n\n", sourceLine(r.Estate))
		fmt.Fprintf(b, "Set: %s. Lane: %s.\n\n",
			prose(orDefault(r.Estate.Set, "not recorded")), prose(orDefault(r.Estate.Lane, "not recorded")))
	}
	if o.format == FormatSeed {
		estate()
	}

	a := assess(r)
	b.WriteString(prose(a.verdictSentence()))
	if s := a.outsideSentence(); s != "" {
		b.WriteString(" " + prose(s))
	}
	b.WriteString("\n\n")

	if o.format == FormatSeed {
		writeSeed(b, r)
	} else {
		// Why first: whose trouble keeps the run from clear, before what
		// the estate is.
		if w := whySentence(r); w != "" && a.Cancelled == nil && !a.Sabotaged {
			b.WriteString(prose(w) + "\n\n")
		}
		estate()
		writeSections(b, r)
	}

	fmt.Fprintf(b, "%s\n\n", lastRunLine(r))
	fmt.Fprintf(b, "Oracle: %s\n\n", engineSentence(r.Oracle))
	if r.OracleReplay != "" {
		fmt.Fprintf(b, "The oracle's side was not run again for this engine: it was replayed from its recording in %s of the same matrix (its engine calls with what they left and sent, and gauntlet's own requests to its cluster, each answered as recorded). `gauntlet matrix --oracle-live` runs it live.\n\n", r.OracleReplay)
	}
	if r.ReattachedProviders != "" {
		fmt.Fprintf(b, "Provider plugins were started once per side and every engine call but init and the interrupted applies reattached to them (`--reattach-providers`), instead of each call starting its own as in production. Reattached: %s.\n\n", r.ReattachedProviders)
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

// couldNotFinish opens the part of a stage's detail the runner adds when
// the stage stopped on an error.
const couldNotFinish = "The stage could not finish: "

// paragraph is the stage's Detail as a sentence. For a stage that could
// not finish, the runner's whole error in it is cut to its first line and
// where says where the page shows it whole.
func paragraph(s result.Stage, where string) string {
	detail := s.Detail
	if i := strings.Index(detail, couldNotFinish); i >= 0 && s.Aborted != "" {
		detail = detail[:i] + couldNotFinish + oneline.First(s.Aborted, 200) + " (" + where + ")"
	}
	return sentence(detail)
}

// abortedFold is a stage's whole error, folded: every error the engine
// printed can be the cause.
func abortedFold(s result.Stage) string {
	text := strings.TrimSpace(s.Aborted)
	f := fence(text)
	return fmt.Sprintf("<details><summary>%s: %s</summary>\n\n%stext\n%s\n%s\n\n</details>\n\n",
		prose(stageName(s)), prose(oneline.First(text, 160)), f, text, f)
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
func writeLimitations(b *strings.Builder, stages []result.Stage, oracle result.Engine) {
	writeChecksOf(b, stages, result.Limitation, "Limitations stock shares",
		"%s fails these checks exactly as the engine does (the same findings on both sides), so they say nothing about the engine: each is a behaviour of the estate or its provider. They are not passes, and the stages holding them are not the engine's fail.",
		oracle, func(s result.Stage, c result.Check) string {
			return fmt.Sprintf("- %s, %s: %s", prose(stageName(s)), prose(c.Name), prose(orDefault(c.Detail, "no detail recorded")))
		})
}

// writeOracleFindings lists, in a section of their own, the promises
// stock alone broke while the engine under test kept them: defects of the
// pinned oracle (or of the provider under it), which cost the engine
// nothing and are no limitation. Nothing is written when there are none.
func writeOracleFindings(b *strings.Builder, stages []result.Stage, oracle result.Engine) {
	writeChecksOf(b, stages, result.OracleFinding, "The oracle's findings",
		"%s breaks these promises on its own cluster, and the engine under test keeps them (each proven on the engine's side by its BREAK). They are stock's defects - of the pinned oracle or of the provider under it - reported as stock's: not the engine's fail, not a limitation, and they cost the run nothing.",
		oracle, func(s result.Stage, c result.Check) string {
			item := fmt.Sprintf("- %s, %s", prose(stageName(s)), prose(c.Name))
			for _, f := range c.Findings {
				item += fmt.Sprintf("\n  - finding: %s", prose(f.Error()))
			}
			return item
		})
}

// writeChecksOf writes a section of the checks with verdict v, under
// heading, its lead (a format naming the oracle's engine) first and one
// item per check; nothing when no check has that verdict.
func writeChecksOf(b *strings.Builder, stages []result.Stage, v result.Verdict, heading, lead string, oracle result.Engine, item func(result.Stage, result.Check) string) {
	var items []string
	for _, s := range stages {
		for _, c := range s.Checks {
			if c.Verdict == v {
				items = append(items, item(s, c))
			}
		}
	}
	if len(items) == 0 {
		return
	}
	b.WriteString("### " + heading + "\n\n")
	fmt.Fprintf(b, lead+"\n\n", prose(engineLabel(oracle)))
	b.WriteString(strings.Join(items, "\n") + "\n\n")
}

// figuresLine is "Figures: " and the figures by name, or empty.
func figuresLine(figures map[string]int) string {
	if len(figures) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(figures))
	figs := make([]string, len(keys))
	for i, k := range keys {
		figs[i] = fmt.Sprintf("%s=%d", k, figures[k])
	}
	return "Figures: " + strings.Join(figs, ", ") + "."
}

// callsLine is "Engine calls: " and each side's calls by subcommand,
// costliest first, with their time; or empty for a run recorded before
// calls were broken down.
func callsLine(s result.Stage) string {
	var sides []string
	for _, side := range []string{"subject", "oracle"} {
		by := s.Calls[side]
		if len(by) == 0 {
			continue
		}
		subs := slices.Sorted(maps.Keys(by))
		slices.SortStableFunc(subs, func(a, b string) int { return by[b].MS - by[a].MS })
		parts := make([]string, len(subs))
		for i, sub := range subs {
			parts[i] = fmt.Sprintf("%s %d (%.1fs)", sub, by[sub].N, float64(by[sub].MS)/1000)
		}
		sides = append(sides, side+" "+strings.Join(parts, ", "))
	}
	if len(sides) == 0 {
		return ""
	}
	return "Engine calls: " + strings.Join(sides, "; ") + "."
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
	s := "**" + breakFailure(br) + ": " + label + "** " + corruption
	if detail != "" {
		s += "; " + detail
	}
	return sentence(s)
}

// breakFailure names what became of a BREAK that did not prove, in
// capitals: held (not load-bearing), off target, could not run, could not
// undo, or an engine finding.
func breakFailure(br result.Break) string {
	if br.EngineFinding {
		return "ENGINE FINDING"
	}
	if what, ok := map[result.BreakOutcome]string{
		result.Held:         "NOT LOAD-BEARING",
		result.OffTarget:    "FAILED OFF TARGET",
		result.CouldNotRun:  "COULD NOT RUN",
		result.CouldNotUndo: "COULD NOT UNDO",
	}[br.Outcome]; ok {
		return what
	}
	return "NOT LOAD-BEARING"
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
