package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/htmlreport"
	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// File names WriteAll uses inside its directory; each run's evidence is
// in <dir>/<Rep.Dir>/.
const (
	MarkdownFile = "report.md"
	JSONFile     = "report.json"
	HTMLFile     = "report.html"
)

// WriteAll compares, renders the report as markdown, JSON and HTML, with
// the pull request's summary and JUnit file, and writes them with every
// run's evidence into dir; it returns the paths written, the report's five
// first. page applies to every run's
// evidence page (evidence.WriteAll). Everything is rendered before
// anything is written. Renderers read the model only: no command, clock
// or network.
func WriteAll(dir string, in Input, page ...evidence.Option) (Report, []string, error) {
	r := Compare(in)
	var md, js, ht, sum, ju bytes.Buffer
	for _, f := range []func() error{
		func() error { return Markdown(&md, r) },
		func() error { return JSON(&js, r) },
		func() error { return HTML(&ht, r) },
		func() error { return Summary(&sum, r) },
		func() error { return JUnit(&ju, r) },
	} {
		if err := f(); err != nil {
			return r, nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, nil, fmt.Errorf("compare: %w", err)
	}
	var paths []string
	for _, f := range []struct {
		name string
		b    []byte
	}{{MarkdownFile, md.Bytes()}, {JSONFile, js.Bytes()}, {HTMLFile, ht.Bytes()}, {SummaryFile, sum.Bytes()}, {JUnitFile, ju.Bytes()}} {
		p := filepath.Join(dir, f.name)
		if err := atomicfile.Write(p, f.b, 0o644); err != nil {
			return r, paths, fmt.Errorf("compare: %w", err)
		}
		paths = append(paths, p)
	}
	for _, e := range in.Estates {
		for _, rep := range append(slices.Clone(e.Build), e.Baseline...) {
			if rep.Run == nil || rep.Dir == "" {
				continue
			}
			ps, err := evidence.WriteAll(filepath.Join(dir, filepath.FromSlash(rep.Dir)), rep.Run, page...)
			if err != nil {
				return r, paths, err
			}
			paths = append(paths, ps...)
		}
	}
	return r, paths, nil
}

// JSON writes report.json.
func JSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Schema string `json:"schema"`
		Report
	}{"gauntlet.compare/v1", r}); err != nil {
		return fmt.Errorf("compare: json: %w", err)
	}
	return nil
}

// Headline is the report's first sentence.
func (r Report) Headline() string {
	n := len(r.New)
	switch {
	case n == 0 && len(r.Removed) == 0:
		return fmt.Sprintf("No new difference: the build did what %s did in every stage of %d estate(s).", r.Baseline, len(r.Estates))
	case n == 0:
		return fmt.Sprintf("No new difference, and %d removed: the build passes where %s did not.", len(r.Removed), r.Baseline)
	}
	return fmt.Sprintf("%d new difference(s) the build introduced against %s, %d removed.", n, r.Baseline, len(r.Removed))
}

// Markdown writes report.md, for a pull request comment.
func Markdown(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Compare · %s against %s\n\n", r.Engine, r.Baseline)
	fmt.Fprintf(&b, "%s %s\n\n", r.Headline(), lead(r))

	b.WriteString("## New differences\n\n")
	if len(r.New) == 0 {
		b.WriteString("None.\n")
	}
	for _, d := range r.New {
		writeDifference(&b, d)
	}
	if len(r.Unconfirmed) > 0 {
		b.WriteString("\n## Request counts that differ in one repetition (unconfirmed)\n\n")
		b.WriteString(unconfirmedNote + "\n\n")
		for _, d := range r.Unconfirmed {
			writeDifference(&b, d)
		}
	}
	b.WriteString("\n## Engine time outside the spread\n\n")
	if len(r.Timing) == 0 {
		fmt.Fprintf(&b, "None: %s\n", timingNote(r))
	}
	for _, d := range r.Timing {
		fmt.Fprintf(&b, "- **%s · %s**: %s\n", d.Estate, d.Stage, d.What)
	}
	b.WriteString("\n## Removed differences\n\n")
	if len(r.Removed) == 0 {
		b.WriteString("None.\n")
	}
	for _, d := range r.Removed {
		writeDifference(&b, d)
	}
	b.WriteString("\n## Shared\n\n")
	n := 0
	for _, e := range r.Estates {
		for _, row := range e.Stages {
			if row.Outcome == Shared || row.Outcome == Unsteady {
				n++
				fmt.Fprintf(&b, "- **%s · %s** (%s): %s\n", e.Name, row.Stage, row.Outcome, md(row.Why))
			}
		}
	}
	if n == 0 {
		b.WriteString("No stage fails the same way on both.\n")
	}
	for _, e := range r.Estates {
		fmt.Fprintf(&b, "\n## %s\n\n", e.Name)
		if e.Title != "" {
			fmt.Fprintf(&b, "%s.\n\n", md(strings.TrimSuffix(e.Title, ".")))
		}
		for _, msg := range e.Errors {
			fmt.Fprintf(&b, "- **%s**\n", md(msg))
		}
		b.WriteString("| stage | outcome | build | baseline | stock | engine seconds build / baseline / stock | ratio (spread) | requests build / baseline / stock |\n|---|---|---|---|---|---|---|---|\n")
		for _, row := range e.Stages {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Stage, outcomeWord(row), cell(row.Build.Summary), cell(row.Baseline.Summary),
				cell(stockWords(row.Stock)), secondsWords(row), ratioWords(row.Time), requestWords(row))
		}
		b.WriteString("\nEvidence: ")
		for i, l := range e.Evidence {
			if i > 0 {
				b.WriteString(" · ")
			}
			fmt.Fprintf(&b, "[%s](%s)", l.Label, l.Href)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDifference(b *strings.Builder, d Difference) {
	fmt.Fprintf(b, "- **%s · %s** (%s): %s\n", d.Estate, d.Stage, d.Kind, md(d.What))
	if d.Kind == "requests" || d.Kind == "figures" || d.Kind == "time" {
		fmt.Fprintf(b, "  [build evidence](%s) · [baseline evidence](%s)\n", d.BuildEvidence, d.BaselineEvidence)
		return
	}
	b.WriteString("\n  | baseline | build |\n  |---|---|\n")
	fmt.Fprintf(b, "  | %s | %s |\n", cell(findingLines(d.Baseline)), cell(findingLines(d.Build)))
	fmt.Fprintf(b, "  | [evidence](%s) | [evidence](%s) |\n\n", d.BaselineEvidence, d.BuildEvidence)
}

func findingLines(fs []Finding) string {
	if len(fs) == 0 {
		return "nothing failed"
	}
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.Check+": "+f.Detail)
	}
	return strings.Join(parts, "; ")
}

func lead(r Report) string {
	s := fmt.Sprintf("Each estate ran with the build (%s) and the baseline (%s), %d time(s) each, against %s as stock; the oracle's side ran once per estate and was replayed for the other runs.",
		r.Engine, r.Baseline, r.Repetitions, r.Oracle)
	if r.Shard != "" {
		s += " This is shard " + r.Shard + " of the estates."
	}
	return s + " A new difference is a stage that passed on the baseline and does not on the build, a failing check whose finding changed, or requests that changed; engine time is flagged only outside its spread."
}

func timingNote(r Report) string {
	if r.Repetitions < 2 {
		return "one repetition has no spread, so no time is flagged (-n 3 measures one)."
	}
	return fmt.Sprintf("every stage's engine time is within the spread of its %d repetitions, or within %d%%.", r.Repetitions, int(TimeTolerance*100))
}

func outcomeWord(row StageRow) string {
	switch {
	case row.Outcome == Same && row.Build.Verdict == result.Pass:
		return "same (pass)"
	case row.Outcome == Same:
		return "same (" + strings.ReplaceAll(string(row.Build.Verdict), "_", " ") + ")"
	case row.Outcome == New:
		return "**NEW**"
	}
	return string(row.Outcome)
}

func stockWords(s Stock) string {
	if s.Limitation != "" {
		return "limitation: " + oneline.First(s.Limitation, 120)
	}
	return "-"
}

func ratioWords(t Timing) string {
	if t.Ratio == 0 {
		return "-"
	}
	s := fmt.Sprintf("x%.2f", t.Ratio)
	if t.Samples >= 2 {
		s += fmt.Sprintf(" (x%.2f-x%.2f)", t.Low, t.High)
	}
	if t.Flagged {
		s = "**" + s + "**"
	}
	return s
}

func secondsWords(row StageRow) string {
	return fmt.Sprintf("%.1f / %.1f / %.1f", medianInt(row.Build.EngineMS)/1000, medianInt(row.Baseline.EngineMS)/1000, float64(row.Stock.EngineMS)/1000)
}

// unconfirmedNote says why a request count from one run is not a new
// difference.
const unconfirmedNote = "A side ran once, so these counts have no spread: a provider's wait loop (a rollout, a deletion) polls once more on a slower run. Within the poll tolerance (one request of a kind, or a tenth of its count) and not the same direction across most stages, they are not counted as new differences; -n 3 confirms or clears them."

func requestWords(row StageRow) string {
	s := fmt.Sprintf("%s / %s / %d", spanOf(row.Build.Requests), spanOf(row.Baseline.Requests), row.Stock.Requests)
	switch {
	case len(requestsBy(row, true)) > 0:
		s = "**" + s + "**"
	case len(likely(row)) > 0:
		s = "**" + s + "** (likely)"
	case len(row.Requests) > 0:
		s += " (unconfirmed)"
	}
	return s
}

func spanOf(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	return span([2]int{slices.Min(xs), slices.Max(xs)})
}

func cell(s string) string {
	s = strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
	return strings.ReplaceAll(s, "<", "&lt;")
}

func md(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "<", "&lt;")
}

// HTML writes report.html: the same content as the markdown, as one
// self-contained page with the summary coloured and charts per estate.
func HTML(w io.Writer, r Report) error {
	return htmlreport.Write(w, Page(r))
}

// Page is the report as an htmlreport page.
func Page(r Report) htmlreport.Page {
	p := htmlreport.Page{
		Title: fmt.Sprintf("Compare · %s against %s", r.Engine, r.Baseline),
		Lead:  r.Headline() + " " + lead(r),
		Facts: []htmlreport.Fact{{Label: "build", Value: r.Engine}, {Label: "baseline", Value: r.Baseline}, {Label: "stock", Value: r.Oracle},
			{Label: "estates", Value: fmt.Sprint(len(r.Estates))}, {Label: "repetitions", Value: fmt.Sprint(r.Repetitions)},
			{Label: "new", Value: fmt.Sprint(len(r.New))}, {Label: "removed", Value: fmt.Sprint(len(r.Removed))},
			{Label: "requests changed", Value: fmt.Sprint(requestRows(r))}, {Label: "unconfirmed", Value: fmt.Sprint(len(r.Unconfirmed))},
			{Label: "shared", Value: fmt.Sprint(r.Counts[Shared])}, {Label: "time flagged", Value: fmt.Sprint(len(r.Timing))}},
	}
	if r.Shard != "" {
		p.Facts = append(p.Facts, htmlreport.Fact{Label: "shard", Value: r.Shard})
	}
	p.Summary = summary(r)
	p.Sections = append(p.Sections,
		htmlreport.Section{ID: "new", Heading: fmt.Sprintf("New differences (%d)", len(r.New)), Empty: "None: the build did what the baseline did.", Items: items(r.New, "new", true, r)},
		htmlreport.Section{ID: "time", Heading: fmt.Sprintf("Engine time outside the spread (%d)", len(r.Timing)), Empty: "None: " + timingNote(r), Items: items(r.Timing, "new", true, r)},
		htmlreport.Section{ID: "removed", Heading: fmt.Sprintf("Removed differences (%d)", len(r.Removed)), Empty: "None.", Items: items(r.Removed, "removed", true, r)},
		htmlreport.Section{ID: "shared", Heading: "Shared", Empty: "No stage fails the same way on both.", Items: shared(r)},
	)
	if len(r.Unconfirmed) > 0 {
		its := items(r.Unconfirmed, "unsteady", false, r)
		for i := range its {
			its[i].Badge = "unconfirmed"
		}
		p.Sections = slices.Insert(p.Sections, 1, htmlreport.Section{ID: "unconfirmed", Intro: unconfirmedNote, Items: its,
			Heading: fmt.Sprintf("Request counts that differ in one repetition, unconfirmed (%d)", len(r.Unconfirmed))})
	}
	// The charts first, right under the summary: a build that sends twice
	// the requests shows there at a glance, before any card.
	charts := htmlreport.Section{ID: "charts", Heading: "Engine time and API requests per stage",
		Intro: "Medians over the repetitions: the build, the baseline, and stock (the oracle's side, recorded once)."}
	for _, e := range r.Estates {
		charts.Charts = append(charts.Charts, chartGroup(e, r))
	}
	p.Sections = slices.Insert(p.Sections, 0, charts)
	ev := htmlreport.Section{ID: "evidence", Heading: "Evidence", Empty: "No run wrote evidence."}
	for _, e := range r.Estates {
		for _, l := range e.Evidence {
			ev.Links = append(ev.Links, htmlreport.Link{Label: e.Name + " · " + l.Label, Href: l.Href})
		}
		for _, msg := range e.Errors {
			ev.Items = append(ev.Items, htmlreport.Item{Class: "new", Badge: "could not run", Title: e.Name, What: msg})
		}
	}
	p.Sections = append(p.Sections, ev)
	return p
}

// requestRows counts the stages whose requests changed, confirmed or likely.
func requestRows(r Report) int {
	n := 0
	for _, e := range r.Estates {
		for _, row := range e.Stages {
			if len(requestsBy(row, true)) > 0 || len(likely(row)) > 0 {
				n++
			}
		}
	}
	return n
}

func summary(r Report) htmlreport.Table {
	var ids []string
	seen := map[string]bool{}
	for _, e := range r.Estates {
		for _, row := range e.Stages {
			seen[row.Stage] = true
		}
	}
	for _, id := range stage.Default().Shown() {
		if seen[id] {
			ids = append(ids, id)
			delete(seen, id)
		}
	}
	for _, e := range r.Estates {
		for _, row := range e.Stages {
			if seen[row.Stage] {
				ids = append(ids, row.Stage)
				delete(seen, row.Stage)
			}
		}
	}
	t := htmlreport.Table{Head: ids, Caption: "Each estate x stage: the build against the baseline. Hover a cell for why; click it for the build's evidence."}
	for _, e := range r.Estates {
		row := htmlreport.Row{Head: htmlreport.Cell{Text: e.Name}}
		if len(e.Evidence) > 0 {
			row.Head.Href = e.Evidence[0].Href
		}
		for _, id := range ids {
			c := htmlreport.Cell{Text: "-", Class: ""}
			for _, s := range e.Stages {
				if s.Stage == id {
					c = summaryCell(s)
				}
			}
			row.Cells = append(row.Cells, c)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Legend = []htmlreport.Cell{{Text: "NEW: the build introduced a difference", Class: "new"}, {Text: "removed: the build passes where the baseline did not", Class: "removed"},
		{Text: "shared: both fail the same way", Class: "shared"}, {Text: "same: both pass", Class: "pass"}, {Text: "not run on both", Class: "notrun"},
		{Text: "n/a: not applicable to the estate on both", Class: "notapplicable"},
		{Text: "unsteady: repetitions disagree", Class: "unsteady"}}
	return t
}

func summaryCell(s StageRow) htmlreport.Cell {
	c := htmlreport.Cell{Title: s.Why, Href: orElse(s.Build.Evidence, s.Baseline.Evidence)}
	switch {
	case s.Outcome == Same && s.Build.Verdict == result.Pass:
		c.Text, c.Class = "same", "pass"
	case s.Outcome == Same && s.Build.Verdict == result.NotApplicable:
		c.Text, c.Class = "n/a", "notapplicable" // short: 18 stage columns fit a 1280-pixel window
	case s.Outcome == Same:
		c.Text, c.Class = "not run", "notrun"
	case s.Outcome == New:
		c.Text, c.Class = "NEW", "new"
	default:
		c.Text, c.Class = string(s.Outcome), string(s.Outcome)
	}
	if len(requestsBy(s, true)) > 0 || len(likely(s)) > 0 {
		c.Mark = "req"
	} else if len(s.Requests) > 0 {
		c.Mark = "req?"
	}
	if s.Time.Flagged {
		c.Mark += "t"
	}
	return c
}

// items are the cards of ds, styled as class; a request difference lists
// the row's confirmed request deltas, or with confirmed false the ones
// from a single repetition.
func items(ds []Difference, class string, confirmed bool, r Report) []htmlreport.Item {
	var out []htmlreport.Item
	for _, d := range ds {
		it := htmlreport.Item{Class: class, Title: fmt.Sprintf("%s · %s · %s", d.Estate, d.Stage, d.Kind), What: d.What}
		if d.Kind == "time" {
			it.Badge = "time"
		}
		base := htmlreport.Column{Heading: "baseline " + r.Baseline, Href: d.BaselineEvidence}
		build := htmlreport.Column{Heading: "build " + r.Engine, Href: d.BuildEvidence}
		switch d.Kind {
		case "requests":
			row := findRow(r, d.Estate, d.Stage)
			for _, q := range requestsBy(row, confirmed) {
				base.Lines = append(base.Lines, fmt.Sprintf("%s: %s", q.Request, span(q.Baseline)))
				build.Lines = append(build.Lines, fmt.Sprintf("%s: %s", q.Request, span(q.Build)))
			}
		case "figures", "time":
		default:
			base.Lines, build.Lines = lines(d.Baseline), lines(d.Build)
		}
		it.Sides = []htmlreport.Column{base, build}
		if lim := findRow(r, d.Estate, d.Stage).Stock.Limitation; lim != "" {
			it.Sides = append(it.Sides, htmlreport.Column{Heading: "stock " + r.Oracle, Lines: []string{"limitation (estate.yaml): " + lim}})
		}
		out = append(out, it)
	}
	return out
}

func shared(r Report) []htmlreport.Item {
	var out []htmlreport.Item
	for _, e := range r.Estates {
		for _, row := range e.Stages {
			if row.Outcome != Shared && row.Outcome != Unsteady {
				continue
			}
			it := htmlreport.Item{Class: string(row.Outcome), Title: e.Name + " · " + row.Stage, What: row.Why,
				Sides: []htmlreport.Column{{Heading: "baseline " + r.Baseline, Href: row.Baseline.Evidence, Lines: lines(row.Baseline.Findings)},
					{Heading: "build " + r.Engine, Href: row.Build.Evidence, Lines: lines(row.Build.Findings)}}}
			if row.Stock.Limitation != "" {
				it.Sides = append(it.Sides, htmlreport.Column{Heading: "stock " + r.Oracle, Lines: []string{"limitation (estate.yaml): " + row.Stock.Limitation}})
			}
			out = append(out, it)
		}
	}
	return out
}

func lines(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Check+": "+f.Detail)
	}
	return out
}

func findRow(r Report, estate, id string) StageRow {
	for _, e := range r.Estates {
		if e.Name != estate {
			continue
		}
		for _, row := range e.Stages {
			if row.Stage == id {
				return row
			}
		}
	}
	return StageRow{}
}

// chartGroup draws one estate's stages that ran: engine time in seconds
// and API requests, each for the build, the baseline and stock.
func chartGroup(e EstateReport, r Report) htmlreport.ChartGroup {
	series := []string{"build", "baseline", "stock"}
	tm := htmlreport.Chart{Title: "Engine time", Unit: "seconds", Series: series}
	rq := htmlreport.Chart{Title: "API requests", Unit: "requests", Series: series}
	for _, row := range e.Stages {
		if len(row.Build.EngineMS) == 0 && len(row.Baseline.EngineMS) == 0 {
			continue
		}
		if (row.Build.Verdict == result.NotRun || row.Build.Verdict == result.NotApplicable) &&
			(row.Baseline.Verdict == result.NotRun || row.Baseline.Verdict == result.NotApplicable) {
			continue
		}
		// A side that did not run the stage (stock in a subject-only
		// stage) has no figure there: n/a, not a bar of 0.
		ran := func(ms []int) bool { return len(ms) > 0 && slices.Max(ms) > 0 }
		tm.Groups = append(tm.Groups, htmlreport.Group{Label: row.Stage, Values: []float64{
			orNA(ran(row.Build.EngineMS), medianInt(row.Build.EngineMS)/1000), orNA(ran(row.Baseline.EngineMS), medianInt(row.Baseline.EngineMS)/1000),
			orNA(row.Stock.EngineMS > 0, float64(row.Stock.EngineMS)/1000)}})
		rq.Groups = append(rq.Groups, htmlreport.Group{Label: row.Stage, Values: []float64{
			orNA(ran(row.Build.EngineMS), medianInt(row.Build.Requests)), orNA(ran(row.Baseline.EngineMS), medianInt(row.Baseline.Requests)),
			orNA(row.Stock.EngineMS > 0, float64(row.Stock.Requests))}})
	}
	g := htmlreport.ChartGroup{Title: e.Name, Charts: []htmlreport.Chart{tm, rq}}
	for _, l := range e.Evidence {
		g.Links = append(g.Links, htmlreport.Link{Label: l.Label, Href: l.Href})
	}
	return g
}

// orNA is v where a side has it, else NaN (drawn n/a).
func orNA(has bool, v float64) float64 {
	if !has {
		return math.NaN()
	}
	return v
}

func medianInt(xs []int) float64 {
	fs := make([]float64, len(xs))
	for i, x := range xs {
		fs[i] = float64(x)
	}
	return median(fs)
}
