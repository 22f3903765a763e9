package matrix

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/htmlreport"
	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// HTMLFile is matrix.html, beside matrix.md.
const HTMLFile = "matrix.html"

// HTML writes matrix.html: the parity table coloured by verdict (one row
// per engine, one column per stage), every difference with its checks,
// the changes between versions, charts of engine time and API requests
// per stage for every engine and stock, and links to every evidence
// page. One self-contained file (htmlreport).
func HTML(w io.Writer, m *Matrix) error {
	return htmlreport.Write(w, page(m))
}

func page(m *Matrix) htmlreport.Page {
	t := Parity(m)
	p := htmlreport.Page{
		Title: "Engine matrix · " + m.Estate.Name,
		Lead: fmt.Sprintf("%sEach row is one gauntlet run of this estate with that engine as the subject and %s as the oracle, on the %s substrate. %s",
			titleSentence(m.Estate.Title), m.Oracle, orElse(m.Substrate, "unknown"), oracleRuns(m)),
		Facts: []htmlreport.Fact{{Label: "estate", Value: m.Estate.Name}, {Label: "oracle", Value: m.Oracle},
			{Label: "engines", Value: fmt.Sprint(len(m.Columns))}, {Label: "clear", Value: yesNo(m.Clear())},
			{Label: "changes", Value: fmt.Sprint(len(t.Changes))}, {Label: "oracle drift", Value: fmt.Sprint(len(t.OracleDrift))},
			{Label: "wall time", Value: m.Duration.Round(time.Second).String()}},
	}
	if m.Commit != "" {
		p.Facts = append(p.Facts, htmlreport.Fact{Label: "commit", Value: shortCommit(m.Commit)})
	}
	sum := htmlreport.Table{Caption: "Each engine x stage: its verdict. Hover a cell for why; click it for the engine's evidence."}
	for _, row := range t.Rows {
		sum.Head = append(sum.Head, row.Stage)
	}
	for i, col := range m.Columns {
		r := htmlreport.Row{Head: htmlreport.Cell{Text: col.Engine, Href: evidenceOf(col)}}
		for _, row := range t.Rows {
			c := row.Cells[i]
			r.Cells = append(r.Cells, htmlreport.Cell{Text: verdictWord(c.Verdict), Class: verdictClass(c.Verdict), Title: c.Why, Href: evidenceOf(col)})
		}
		sum.Rows = append(sum.Rows, r)
	}
	sum.Legend = []htmlreport.Cell{{Text: "pass", Class: "pass"}, {Text: "fail", Class: "fail"}, {Text: "not run", Class: "notrun"},
		{Text: "not applicable to this estate", Class: "notapplicable"}}
	p.Summary = sum

	diffs := htmlreport.Section{ID: "differences", Heading: "Differences from stock", Empty: "No stage failed on any engine."}
	for _, row := range t.Rows {
		for i, c := range row.Cells {
			if c.Verdict == result.Pass || c.Verdict == result.NotRun || c.Verdict == result.NotApplicable {
				continue
			}
			col := htmlreport.Column{Heading: c.Engine, Href: evidenceOf(m.Columns[i])}
			for _, d := range c.Differs {
				col.Lines = append(col.Lines, d.Check+": "+d.Detail)
			}
			diffs.Items = append(diffs.Items, htmlreport.Item{Class: "new", Badge: string(c.Verdict), Title: row.Stage + " · " + c.Engine, What: c.Why, Sides: []htmlreport.Column{col}})
		}
	}
	changes := htmlreport.Section{ID: "changes", Heading: "Changes between versions", Empty: "No stage changed between consecutive pinned versions of an engine."}
	for _, c := range append(slices.Clone(t.Changes), t.Figures...) {
		changes.Items = append(changes.Items, htmlreport.Item{Class: "shared", Badge: "change", Title: fmt.Sprintf("%s · %s -> %s", c.Stage, c.From, c.To), What: c.What})
	}
	drift := htmlreport.Section{ID: "oracle", Heading: "The oracle across runs", Intro: oracleRuns(m),
		Empty: "Its BREAK outcomes and exact figures were the same in every run that passed the stage."}
	for _, d := range t.OracleDrift {
		it := htmlreport.Item{Class: "new", Badge: "oracle drift", Title: d.Stage, What: "the oracle did not observe the same thing every time - a gauntlet defect"}
		engines := make([]string, 0, len(d.ByEngine))
		for e := range d.ByEngine {
			engines = append(engines, e)
		}
		sort.Strings(engines)
		for _, e := range engines {
			it.Sides = append(it.Sides, htmlreport.Column{Heading: e, Lines: []string{d.ByEngine[e]}})
		}
		drift.Items = append(drift.Items, it)
	}
	p.Sections = append(p.Sections, diffs, changes, drift, charts(m, t))
	ev := htmlreport.Section{ID: "evidence", Heading: "Evidence", Empty: "No engine ran."}
	for _, col := range m.Columns {
		if col.Run == nil {
			ev.Items = append(ev.Items, htmlreport.Item{Class: "new", Badge: "could not run", Title: col.Engine, What: "could not run: " + oneline.First(col.Error, 300)})
			continue
		}
		ev.Links = append(ev.Links, htmlreport.Link{Label: fmt.Sprintf("%s: %s", col.Engine, oneline.First(evidence.Headline(col.Run), 100)), Href: evidenceOf(col)})
	}
	p.Sections = append(p.Sections, ev)
	return p
}

// charts are engine time and API requests per stage that ran, one bar
// per engine and one for stock (the oracle's side of the first run).
func charts(m *Matrix, t Table) htmlreport.Section {
	var series []string
	for _, c := range m.Columns {
		series = append(series, c.Engine)
	}
	series = append(series, "stock "+m.Oracle)
	tm := htmlreport.Chart{Title: "Engine time", Unit: "seconds", Series: series}
	rq := htmlreport.Chart{Title: "API requests", Unit: "requests", Series: series}
	for _, row := range t.Rows {
		ran := false
		var ms, reqs []float64
		var stockMS, stockReq float64
		stock := false
		for _, col := range m.Columns {
			st, ok := findStage(col.Run, row.Stage)
			ran = ran || ok && st.Verdict != result.NotRun && st.Verdict != result.NotApplicable
			ms = append(ms, float64(st.Figures["subject.engine_ms"])/1000)
			reqs = append(reqs, float64(st.Figures["subject.api_requests"]))
			if ok && !stock && st.Verdict != result.NotRun && st.Verdict != result.NotApplicable {
				stock, stockMS, stockReq = true, float64(st.Figures["oracle.engine_ms"])/1000, float64(st.Figures["oracle.api_requests"])
			}
		}
		if !ran {
			continue
		}
		tm.Groups = append(tm.Groups, htmlreport.Group{Label: row.Stage, Values: append(ms, stockMS)})
		rq.Groups = append(rq.Groups, htmlreport.Group{Label: row.Stage, Values: append(reqs, stockReq)})
	}
	return htmlreport.Section{ID: "charts", Heading: "Engine time and API requests per stage",
		Intro:  "Each engine's own time and the requests it sent through the wire proxy, beside stock's (the oracle's side).",
		Charts: []htmlreport.ChartGroup{{Title: m.Estate.Name, Charts: []htmlreport.Chart{tm, rq}}}}
}

func evidenceOf(c Column) string {
	if c.Run == nil {
		return ""
	}
	return filepath.ToSlash(filepath.Join(c.Tool, evidence.MarkdownFile))
}

func verdictWord(v result.Verdict) string {
	switch v {
	case result.NotRun:
		return "not run"
	case result.NotApplicable:
		return "not applicable"
	}
	return string(v)
}

func verdictClass(v result.Verdict) string {
	switch v {
	case result.Pass:
		return "pass"
	case result.NotRun:
		return "notrun"
	case result.NotApplicable:
		return "notapplicable"
	}
	return "fail"
}

func titleSentence(s string) string {
	if s == "" {
		return ""
	}
	return s + ". "
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
