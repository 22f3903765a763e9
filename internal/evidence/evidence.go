// Package evidence renders a gauntlet run (result.Run) as the three
// artifacts a run leaves behind: a markdown evidence page, the run as JSON,
// and JUnit XML for CI. Renderers read the model and nothing else: they run
// no command, read no clock (every time shown is in the model) and touch no
// network, so the same Run always renders to the same bytes.
package evidence

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// File names WriteAll uses inside its directory.
const (
	MarkdownFile = "evidence.md"
	JSONFile     = "run.json"
	JUnitFile    = "junit.xml"
)

var errNilRun = errors.New("nil run")

// Option configures the markdown page.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	heading string
	format  Format
}

// Format is the markdown page's layout.
type Format string

const (
	// FormatSections reads top-down: a summary table with one row per
	// stage in the order the stages ran (verdict, time, checks proven,
	// a one-line reason), then a section per stage that ran with its
	// paragraph, checks, BREAKs and figures, then the stages that did
	// not run with their reasons.
	FormatSections Format = "sections"
	// FormatSeed is the earlier layout, kept for pages that must match
	// it: one table row per stage in display order, the stage's whole
	// detail (paragraph, BREAKs, checks, figures) in one cell.
	FormatSeed Format = "seed"
)

// Formats are the layouts Markdown can write, the default first.
func Formats() []Format { return []Format{FormatSections, FormatSeed} }

// ParseFormat reads a layout's name as a flag gives it; "" is the
// default, FormatSections. An unknown name is an error listing the valid
// ones.
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return FormatSections, nil
	}
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("evidence: page format %q: want %s", s, formatNames())
}

func formatNames() string {
	var names []string
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, " or ")
}

// WithFormat sets the page's layout. Default: FormatSections. Markdown
// refuses a format it does not know (see ParseFormat).
func WithFormat(f Format) Option { return optionFunc(func(o *options) { o.format = f }) }

// WithHeading sets the words after "Evidence · " in the page's first
// heading. Default: the engine under test against the oracle, e.g.
// "tofu 1.12.6 against terraform 1.15.8", both read from the run.
func WithHeading(s string) Option { return optionFunc(func(o *options) { o.heading = s }) }

func buildOptions(opts []Option) *options {
	o := &options{format: FormatSections}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(o)
		}
	}
	return o
}

// Headline is the page's one-line verdict, for the CLI: "Clear.", "Clear -
// N checks not run on the local substrate: ...", "Clear - N stages not
// applicable to this estate: ...", "Not clear: ..." or "Cancelled ...".
// It reads the same assessment as everything else.
func Headline(r *result.Run) string {
	if r == nil {
		return "Not clear: no run."
	}
	a := assess(r)
	s := a.verdictSentence()
	if o := a.outsideSentence(); o != "" {
		s += " " + o
	}
	return s
}

// WriteAll renders r into dir (created with its parents if missing) as
// evidence.md, run.json and junit.xml, and returns their paths in that
// order. Every artifact is rendered in memory before any file is written,
// and each file is written to a temporary name and renamed, so a failed
// render leaves no file behind and a reader never sees half a file. opts
// apply to the markdown page.
func WriteAll(dir string, r *result.Run, opts ...Option) ([]string, error) {
	if r == nil {
		return nil, fmt.Errorf("evidence: write all in %s: %w", dir, errNilRun)
	}
	renders := []struct {
		name   string
		render func(io.Writer) error
	}{
		{MarkdownFile, func(w io.Writer) error { return Markdown(w, r, opts...) }},
		{JSONFile, func(w io.Writer) error { return JSON(w, r) }},
		{JUnitFile, func(w io.Writer) error { return JUnit(w, r) }},
	}
	bufs := make([][]byte, len(renders))
	for i, rd := range renders {
		var b bytes.Buffer
		if err := rd.render(&b); err != nil {
			return nil, fmt.Errorf("evidence: write all: render %s: %w", rd.name, err)
		}
		bufs[i] = b.Bytes()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence: write all: %w", err)
	}
	paths := make([]string, 0, len(renders))
	for i, rd := range renders {
		p := filepath.Join(dir, rd.name)
		if err := writeFileAtomic(p, bufs[i]); err != nil {
			return paths, fmt.Errorf("evidence: write all: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// writeFileAtomic writes data next to path and renames it into place, so
// an interrupted write never leaves a truncated artifact under the real
// name.
func writeFileAtomic(path string, data []byte) error {
	// Evidence is meant to be read by others (CI uploaders, reviewers): a
	// plain file's mode.
	return atomicfile.Write(path, data, 0o644)
}
