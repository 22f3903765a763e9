// Package report writes a run's evidence - the page (evidence.md), the
// model (run.json) and the test report (junit.xml) - for a caller of
// gauntlet.Run that is not the gauntlet command: the same renderers the
// command, gauntlettest and the ledger use, so a page written here reads
// as every other. A renderer never runs a command; it only reads the
// result.
package report

import (
	"io"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The files WriteAll writes, in its order.
const (
	MarkdownFile = evidence.MarkdownFile
	JSONFile     = evidence.JSONFile
	JUnitFile    = evidence.JUnitFile
)

// WriteAll writes evidence.md, run.json and junit.xml into dir (made with
// its parents when missing) and returns their paths. Each file is rendered
// in memory first and renamed into place, so a failed render or an
// interrupted write leaves no half file.
func WriteAll(dir string, r *result.Run) ([]string, error) { return evidence.WriteAll(dir, r) }

// Markdown writes the evidence page: the verdict, why first when the run
// is not clear, a summary table, then a section per stage.
func Markdown(w io.Writer, r *result.Run) error { return evidence.Markdown(w, r) }

// JSON writes run.json, the result model as recorded in the ledger.
func JSON(w io.Writer, r *result.Run) error { return evidence.JSON(w, r) }

// JUnit writes junit.xml: a test case per stage, check and BREAK.
func JUnit(w io.Writer, r *result.Run) error { return evidence.JUnit(w, r) }

// Headline is the page's one-line verdict ("Clear. ..." or "Not clear:
// ...").
func Headline(r *result.Run) string { return evidence.Headline(r) }
