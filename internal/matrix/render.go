package matrix

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// File names WriteAll uses inside its directory; each engine's evidence
// page is in <dir>/<tool>/ (evidence.WriteAll).
const (
	MarkdownFile = "matrix.md"
	JSONFile     = "matrix.json"
	JUnitFile    = "junit.xml"
)

// WriteAll renders the matrix and every engine's evidence into dir and
// returns the paths written; page applies to every engine's evidence
// page (evidence.WriteAll). Everything is rendered before anything is
// written. Renderers read the model only: no command, clock or network.
func WriteAll(dir string, m *Matrix, page ...evidence.Option) ([]string, error) {
	var md, js, ju, ht bytes.Buffer
	if err := Markdown(&md, m); err != nil {
		return nil, err
	}
	if err := HTML(&ht, m); err != nil {
		return nil, err
	}
	if err := JSON(&js, m); err != nil {
		return nil, err
	}
	if err := JUnit(&ju, m); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range []struct {
		name string
		b    []byte
	}{{MarkdownFile, md.Bytes()}, {JSONFile, js.Bytes()}, {JUnitFile, ju.Bytes()}, {HTMLFile, ht.Bytes()}} {
		name, b := f.name, f.b
		p := filepath.Join(dir, name)
		if err := atomicfile.Write(p, b, 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	for _, c := range m.Columns {
		if c.Run == nil {
			continue
		}
		ps, err := evidence.WriteAll(ColumnDir(dir, c.Tool), c.Run, page...)
		if err != nil {
			return paths, err
		}
		paths = append(paths, ps...)
	}
	return paths, nil
}

// jsonMatrix is matrix.json: the matrix, its table and each run's
// headline (the runs themselves are in <tool>/run.json).
type jsonMatrix struct {
	*Matrix
	Clear bool      `json:"clear"`
	Runs  []jsonRun `json:"runs"`
	Table Table     `json:"table"`
	Cost  jsonCost  `json:"cost"`
}

type jsonRun struct {
	Engine   string         `json:"engine"`
	Subject  *result.Engine `json:"subject,omitempty"`
	Oracle   *result.Engine `json:"oracle,omitempty"`
	Clear    bool           `json:"clear"`
	Headline string         `json:"headline"`
	Duration time.Duration  `json:"duration_ns"`
	Evidence string         `json:"evidence,omitempty"`
	Error    string         `json:"error,omitempty"`
}

type jsonCost struct {
	// Total is the matrix's wall time; SumOfRuns adds the runs' own.
	Total     time.Duration `json:"total_ns"`
	SumOfRuns time.Duration `json:"sum_of_runs_ns"`
	Runs      int           `json:"runs"`
}

// JSON writes matrix.json.
func JSON(w io.Writer, m *Matrix) error {
	j := jsonMatrix{Matrix: m, Clear: m.Clear(), Table: Parity(m), Cost: cost(m)}
	for _, c := range m.Columns {
		r := jsonRun{Engine: c.Engine, Error: c.Error}
		if c.Run != nil {
			s, o := c.Run.Subject, c.Run.Oracle
			r.Subject, r.Oracle = &s, &o
			r.Clear, r.Headline, r.Duration = c.Run.Clear(), evidence.Headline(c.Run), c.Run.Duration
			r.Evidence = filepath.Join(c.Tool, evidence.MarkdownFile)
		}
		j.Runs = append(j.Runs, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

func cost(m *Matrix) jsonCost {
	c := jsonCost{Total: m.Duration}
	for _, col := range m.Columns {
		if col.Run != nil && !col.Reused {
			c.SumOfRuns += col.Run.Duration
			c.Runs++
		}
	}
	return c
}

// Markdown writes the matrix page.
func Markdown(w io.Writer, m *Matrix) error {
	t := Parity(m)
	var b strings.Builder
	fmt.Fprintf(&b, "# Engine matrix · %s\n\n", m.Estate.Name)
	if m.Estate.Title != "" {
		fmt.Fprintf(&b, "%s. ", m.Estate.Title)
	}
	fmt.Fprintf(&b, "Each column is one gauntlet run of this estate with that engine as the subject and %s as the oracle, on the %s substrate", m.Oracle, orElse(m.Substrate, "unknown"))
	if m.Commit != "" {
		fmt.Fprintf(&b, ", at gauntlet commit %s", shortCommit(m.Commit))
	}
	b.WriteString(". A cell is the stage's verdict and why: a pass counts the checks that held as stock's did and the BREAKs that proved them; ")
	b.WriteString("a fail names the check that differs (details below); a not-run names what the engine lacks and since which release.\n\n")

	b.WriteString("| stage |")
	for _, e := range t.Engines {
		fmt.Fprintf(&b, " %s |", e)
	}
	b.WriteString("\n|---|")
	for range t.Engines {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		fmt.Fprintf(&b, "| %s |", row.Stage)
		for _, c := range row.Cells {
			fmt.Fprintf(&b, " %s |", cellText(c))
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## Differences\n\n")
	n := 0
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			if c.Verdict == result.Pass || c.Verdict == result.NotRun || c.Verdict == result.NotApplicable {
				continue
			}
			for _, d := range c.Differs {
				n++
				fmt.Fprintf(&b, "- **%s × %s**: `%s`: %s\n", row.Stage, c.Engine, d.Check, prose(d.Detail))
			}
		}
	}
	if n == 0 {
		b.WriteString("No stage failed on any engine.\n")
	}

	b.WriteString("\n## Not run\n\n")
	n = 0
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			if c.Verdict == result.NotRun {
				n++
				fmt.Fprintf(&b, "- **%s × %s**: %s\n", row.Stage, c.Engine, prose(c.Why))
			}
		}
	}
	if n == 0 {
		b.WriteString("Every stage ran on every engine.\n")
	}

	// A stage the estate's shape cannot carry is the estate's, the same on
	// every engine: said apart from what did not run, never a difference.
	n = 0
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			if c.Verdict == result.NotApplicable {
				if n == 0 {
					b.WriteString("\n## Not applicable to this estate\n\n")
				}
				n++
				fmt.Fprintf(&b, "- **%s × %s**: %s\n", row.Stage, c.Engine, prose(c.Why))
			}
		}
	}

	b.WriteString("\n## Changes between versions\n\n")
	if len(t.Changes) == 0 {
		b.WriteString("No stage changed between consecutive pinned versions of an engine.\n")
	}
	for _, c := range t.Changes {
		fmt.Fprintf(&b, "- **%s**, %s -> %s: %s\n", c.Stage, c.From, c.To, prose(c.What))
	}

	if len(t.Figures) > 0 {
		b.WriteString("\nSame verdict, different figures (the subject's engine calls, plans and planned changes in a stage both versions passed):\n\n")
		for _, c := range t.Figures {
			fmt.Fprintf(&b, "- **%s**, %s -> %s: %s\n", c.Stage, c.From, c.To, c.What)
		}
	}

	b.WriteString("\n## The oracle across runs\n\n")
	b.WriteString(oracleRuns(m))
	if len(t.OracleDrift) == 0 {
		b.WriteString("Its BREAK outcomes and exact figures (engine calls, plans, planned changes) were the same in every run that passed the stage.\n")
	} else {
		b.WriteString("It did NOT observe the same thing every time - a gauntlet defect:\n\n")
		for _, d := range t.OracleDrift {
			fmt.Fprintf(&b, "- **%s**:", d.Stage)
			for _, e := range t.Engines {
				if o, ok := d.ByEngine[e]; ok {
					fmt.Fprintf(&b, " with %s `%s`;", e, o)
				}
			}
			b.WriteString("\n")
		}
	}

	c := cost(m)
	b.WriteString("\n## Runs\n\n| engine | binary | verdict | time | evidence |\n|---|---|---|---|---|\n")
	for _, col := range m.Columns {
		if col.Run == nil {
			fmt.Fprintf(&b, "| %s | - | could not run: %s | - | - |\n", col.Engine, cellEscape(oneline.First(col.Error, 300)))
			continue
		}
		s := col.Run.Subject
		reused := ""
		if col.Reused {
			reused = " (earlier run, reused)"
		}
		if col.Oracle != "" {
			reused += "; oracle " + oneline.First(col.Oracle, 120)
		}
		fmt.Fprintf(&b, "| %s%s | %s sha256 %s | %s | %s | [%s](%s/%s) |\n", col.Engine, reused, cellEscape(s.Display), shortSHA(s.SHA256),
			cellEscape(oneline.First(evidence.Headline(col.Run), 160)), col.Run.Duration.Round(time.Second), col.Tool, col.Tool, evidence.MarkdownFile)
	}
	pace := fmt.Sprintf("%d at a time", max(1, m.Jobs))
	if slices.ContainsFunc(m.Columns, func(col Column) bool { return col.Oracle == "recorded" }) {
		pace = "the recording run alone, then " + pace
	}
	fmt.Fprintf(&b, "\nWall time %s for %d runs made now, %s (their own times add up to %s).\n", m.Duration.Round(time.Second), c.Runs, pace, c.SumOfRuns.Round(time.Second))
	if m.Reproduce != "" {
		fmt.Fprintf(&b, "\nReproduce: `%s`\n", m.Reproduce)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cellText(c Cell) string {
	switch c.Verdict {
	case result.Pass:
		return "pass: " + cellEscape(c.Why)
	case result.NotRun:
		return "not run: " + cellEscape(oneline.First(c.Why, 90))
	case result.NotApplicable:
		return "not applicable: " + cellEscape(oneline.First(c.Why, 90))
	case result.Limitation:
		return "limitation: " + cellEscape(oneline.First(c.Why, 90))
	}
	if len(c.Differs) > 0 {
		names := make([]string, 0, len(c.Differs))
		for _, d := range c.Differs {
			names = append(names, "`"+cellEscape(d.Check)+"`")
		}
		return "**" + string(c.Verdict) + "**: " + strings.Join(names, ", ")
	}
	return "**" + string(c.Verdict) + "**: " + cellEscape(c.Why)
}

func cellEscape(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return strings.ReplaceAll(s, "\n", " ")
}

func prose(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "<", "&lt;")
}

func shortCommit(c string) string {
	dirty := strings.HasSuffix(c, "-dirty")
	c = strings.TrimSuffix(c, "-dirty")
	if len(c) > 10 {
		c = c[:10]
	}
	if dirty {
		c += " (with uncommitted changes)"
	}
	return c
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return orElse(s, "?")
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// JUnit writes one testsuite per engine, one testcase per stage: a
// failure names the differing checks, a skip its reason.
func JUnit(w io.Writer, m *Matrix) error {
	t := Parity(m)
	doc := junitSuites{Name: "gauntlet-matrix." + m.Estate.Name}
	for i, e := range t.Engines {
		s := junitSuite{Name: m.Estate.Name + "@" + e, Time: "0"}
		if r := m.Columns[i].Run; r != nil {
			s.Time = fmt.Sprintf("%.3f", r.Duration.Seconds())
		}
		for _, row := range t.Rows {
			c := row.Cells[i]
			tc := junitCase{Classname: "gauntlet." + m.Estate.Name + "." + e, Name: row.Stage}
			switch c.Verdict {
			case result.Pass:
			case result.NotRun:
				tc.Skipped = &junitMessage{Message: c.Why}
				s.Skipped++
			case result.NotApplicable:
				tc.Skipped = &junitMessage{Message: "not applicable to this estate: " + c.Why}
				s.Skipped++
			default:
				var lines []string
				for _, d := range c.Differs {
					lines = append(lines, d.Check+": "+d.Detail)
				}
				tc.Failure = &junitMessage{Message: c.Why, Body: strings.Join(lines, "\n")}
				s.Failures++
			}
			s.Tests++
			s.Cases = append(s.Cases, tc)
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("matrix: junit: %w", err)
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

// oracleRuns says how many times the oracle's side ran and how the
// other runs had it.
func oracleRuns(m *Matrix) string {
	var recorded string
	var replayed []string
	live := 0
	for _, col := range m.Columns {
		switch {
		case col.Run == nil || col.Reused:
		case col.Oracle == "recorded":
			recorded = col.Engine
		case col.Oracle == "replayed":
			replayed = append(replayed, col.Engine)
		default:
			live++
		}
	}
	if recorded == "" || len(replayed) == 0 {
		return fmt.Sprintf("The oracle's side of every stage ran live in each of the %d runs made now. ", live+len(replayed)+btoi(recorded != ""))
	}
	s := fmt.Sprintf("The oracle's side ran once, live, in the run with %s, and was replayed from that recording for %s (no oracle cluster or engine started for them). ",
		recorded, strings.Join(replayed, ", "))
	if live > 0 {
		s += fmt.Sprintf("%d run(s) had a live oracle of their own (see their oracle note below). ", live)
	}
	return s
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
