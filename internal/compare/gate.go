package compare

import (
	"fmt"
	"io"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/junit"
)

// File names of what a pull request's check reads: the short summary (a
// comment, or a CI job summary) and one JUnit case per estate x stage.
const (
	SummaryFile = "summary.md"
	JUnitFile   = "junit.xml"
)

// summaryRows caps the table of changed stages in the summary: a comment
// stays readable; report.md and report.html carry every row.
const summaryRows = 25

// Summary writes summary.md: the headline, the new differences, a line per
// stage whose requests or engine time moved (before -> after, percent),
// and where the whole report is. GitHub-flavoured markdown, for a pull
// request comment or $GITHUB_STEP_SUMMARY.
func Summary(w io.Writer, r Report) error {
	var b strings.Builder
	verdict := "no new difference"
	if len(r.New) > 0 {
		verdict = fmt.Sprintf("%d new difference(s)", len(r.New))
	}
	fmt.Fprintf(&b, "### gauntlet compare: %s against %s - %s\n\n%s\n\n", r.Engine, r.Baseline, verdict, r.Headline())
	fmt.Fprintf(&b, "| new | removed | unconfirmed requests | engine time flagged | repetitions |\n|---|---|---|---|---|\n| %d | %d | %d | %d | %d |\n\n",
		len(r.New), len(r.Removed), len(r.Unconfirmed), len(r.Timing), r.Repetitions)
	if len(r.New) > 0 {
		b.WriteString("**New differences**\n\n")
		for i, d := range r.New {
			if i == summaryRows {
				fmt.Fprintf(&b, "- ... and %d more in report.md\n", len(r.New)-summaryRows)
				break
			}
			fmt.Fprintf(&b, "- %s · %s (%s): %s\n", d.Estate, d.Stage, d.Kind, md(d.What))
		}
		b.WriteString("\n")
	}
	var rows []string
	for _, e := range r.Estates {
		for _, row := range e.Stages {
			if len(row.Requests) == 0 && !row.Time.Flagged {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |", e.Name, row.Stage, outcomeWord(row),
				change(medianInt(row.Baseline.Requests), medianInt(row.Build.Requests), "%.0f"),
				change(medianInt(row.Baseline.EngineMS)/1000, medianInt(row.Build.EngineMS)/1000, "%.1f s")))
		}
	}
	if len(rows) > 0 {
		b.WriteString("**Requests and engine time that moved** (the subject's, median of the repetitions: baseline -> build)\n\n")
		b.WriteString("| estate | stage | outcome | API requests | engine time |\n|---|---|---|---|---|\n")
		for i, l := range rows {
			if i == summaryRows {
				fmt.Fprintf(&b, "| ... | %d more rows in report.md | | | |\n", len(rows)-summaryRows)
				break
			}
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "The whole report: %s (every stage, both sides' findings side by side), %s, %s.\n", HTMLFile, MarkdownFile, JSONFile)
	_, err := io.WriteString(w, b.String())
	return err
}

// change is "before -> after (+p%)" in the given format.
func change(before, after float64, format string) string {
	return fmt.Sprintf(format+" -> "+format, before, after) + percent(before, after)
}

// percent is " (+p%)", how far after is from before; "" when they are
// equal or before is 0.
func percent(before, after float64) string {
	if before > 0 && before != after {
		return fmt.Sprintf(" (%+.0f%%)", (after-before)/before*100)
	}
	return ""
}

// JUnit writes junit.xml: a suite per estate, a case per stage; a new
// difference fails its case, a stage whose repetitions disagreed is
// skipped (nothing is concluded), every other case passes and says why.
func JUnit(w io.Writer, r Report) error {
	news := map[string][]string{}
	for _, d := range r.New {
		news[d.Estate+"/"+d.Stage] = append(news[d.Estate+"/"+d.Stage], d.Kind+": "+d.What)
	}
	doc := junit.Suites{Name: fmt.Sprintf("gauntlet compare %s against %s", r.Engine, r.Baseline), Time: "0"}
	for _, e := range r.Estates {
		s := junit.Suite{Name: e.Name, Time: "0"}
		for _, row := range e.Stages {
			c := junit.Case{Classname: "compare." + e.Name, Name: row.Stage, Time: "0", SystemOut: row.Why}
			switch {
			case len(news[e.Name+"/"+row.Stage]) > 0:
				c.Failure = &junit.Failure{Message: oneLine(row.Why), Type: "new_difference", Text: strings.Join(news[e.Name+"/"+row.Stage], "\n")}
			case row.Outcome == Unsteady:
				c.Skipped = &junit.Skipped{Message: oneLine(row.Why)}
			}
			s.Cases = append(s.Cases, c)
		}
		doc.Suites = append(doc.Suites, s)
	}
	if err := junit.Write(w, doc); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
