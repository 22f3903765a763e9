package bugs

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// Markdown writes conformance/bugs.md from a verified catalogue: a table
// of every row, then each row with its shape, its finding as the buggy
// run said it and links to its runs' evidence pages (relative to dir, the
// page's folder from the repository's root), or why nothing catches it.
// regenerate is the command that rewrites the page.
func Markdown(w io.Writer, v *Verified, dir, regenerate string) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	caught, notCaught, reported, differences := 0, 0, 0, 0
	for _, r := range v.Bugs {
		switch {
		case r.Difference != "" && r.Caught != nil:
			reported++
		case r.Caught != nil:
			caught++
		default:
			notCaught++
		}
		if r.Difference != "" {
			differences++
		}
	}
	p("# Released engine bugs gauntlet is measured by\n\n")
	p("Generated from `conformance/bugs.yaml` and the run folders it names by `%s`; a test fails when this page is out\n", regenerate)
	p("of date or a run does not say what the catalogue claims of it (the stage's verdict, the engine on that side, the\n")
	p("finding's text). %d rows: %d caught by a stage with recorded runs on a buggy and a fixed engine, %d not caught\n", len(v.Bugs), caught, notCaught)
	p("yet (each says why)")
	if differences > 0 {
		p("; %d of all rows an engine difference rather than a bug", differences)
	}
	if reported > 0 {
		p(", %d of them reported as one by a stage (runs on an engine that differs and one that does not)", reported)
	}
	p(".\n\n")
	p("| # | Bug | Upstream | Affected -> fixed | Pinned engines hit | Caught by |\n")
	p("|---|---|---|---|---|---|\n")
	for i, r := range v.Bugs {
		by := "not caught yet"
		switch {
		case r.Difference != "" && r.Caught == nil:
			by = "an engine difference, not caught as one yet"
		case r.Difference != "":
			by = fmt.Sprintf("`%s` / `%s`, reported as an engine difference", r.Caught.Estate, r.Caught.Stage)
		case r.Caught != nil:
			by = fmt.Sprintf("`%s` / `%s`", r.Caught.Estate, r.Caught.Stage)
		}
		p("| %d | [%s](#%s) | %s | %s -> %s | %s | %s |\n", i+1, cell(r.Title), r.ID, links(r.Upstream), cell(r.Affected), cell(r.Fixed), orNone(r.Pinned), by)
	}
	for i, r := range v.Bugs {
		p("\n<a id=\"%s\"></a>\n## %d. %s\n\n", r.ID, i+1, r.Title)
		p("- **Engine:** %s; affected %s, fixed in %s; upstream %s.\n", r.Engine, r.Affected, r.Fixed, links(r.Upstream))
		if len(r.Pinned) > 0 {
			p("- **Pinned engines it hits:** %s.\n", strings.Join(r.Pinned, ", "))
		}
		p("- **Shape:** %s\n", strings.TrimSpace(r.Shape))
		if r.Difference != "" {
			p("- **An engine difference, not a bug:** %s\n", strings.TrimSpace(r.Difference))
		}
		if r.Caught == nil {
			p("- **Not caught yet:** %s\n", strings.TrimSpace(r.NotCaught))
			continue
		}
		if r.Difference != "" {
			p("- **Reported as an engine difference by:** estate `%s`, stage `%s`, which reports `%s` and says it is the difference its estate.yaml documents.\n", r.Caught.Estate, r.Caught.Stage, r.Caught.Finding)
		} else {
			p("- **Caught by:** estate `%s`, stage `%s`, which reports `%s`.\n", r.Caught.Estate, r.Caught.Stage, r.Caught.Finding)
		}
		if r.Bisect != "" {
			p("- **Bisected:** [the steps and their evidence](%s).\n", relTo(dir, r.Bisect))
		}
		p("\n| Run | Engine (side) | Stage | Verdict | What it said |\n|---|---|---|---|---|\n")
		for _, s := range v.Seen[r.ID] {
			link := path.Join(relTo(dir, s.Run), "evidence.md")
			said := "-"
			if s.Line != "" {
				said = cell(clip(s.Line, 240))
			}
			st := r.Caught.Stage
			if s.Stage != "" {
				st = s.Stage
			}
			p("| [%s](%s) | %s (%s) | %s | %s | %s |\n", path.Base(s.Run), link, s.Engine, s.Side, st, s.Verdict, said)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// links renders owner/repo#N references as links to their GitHub pages.
func links(refs []string) string {
	var out []string
	for _, r := range refs {
		repo, n, _ := strings.Cut(r, "#")
		out = append(out, fmt.Sprintf("[%s](https://github.com/%s/issues/%s)", r, repo, n))
	}
	return strings.Join(out, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// relTo is p (from the repository's root) seen from dir, as a link.
func relTo(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p // both are repository paths; Rel fails only on an absolute one
	}
	return filepath.ToSlash(rel)
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`), "\n", " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
