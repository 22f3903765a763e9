package bisect

import (
	"fmt"
	"io"
	"strings"
)

// Page is what a bisection's page says beside its result.
type Page struct {
	Estate, Stage, Finding, Reproduce string
}

// Markdown writes bisect.md: the question, the boundary found, and every
// step with its outcome, why and a link to its evidence page.
func Markdown(w io.Writer, r *Result, p Page) error {
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	f("# Bisect: %s, stage %s\n\n", p.Estate, p.Stage)
	seek := "the stage fails"
	if p.Finding != "" {
		seek = fmt.Sprintf("the stage fails saying %q", p.Finding)
	}
	f("Bad is: %s; good is: the stage passes; anything else is skipped. Candidates, oldest first: %s.\n\n", seek, strings.Join(r.Candidates, ", "))
	if r.Before != "" {
		var outcome = map[string]Outcome{}
		for _, s := range r.Steps {
			outcome[s.Engine] = s.Outcome
		}
		f("**%s is %s; %s is %s**", r.Before, outcome[r.Before], r.After, outcome[r.After])
		if r.Exact {
			f(": adjacent candidates, so the change lies between these two releases")
		} else {
			f(": skipped candidates lie between them, so the change is somewhere in that span")
		}
		f(". Narrowing it to a commit needs the commits between the two, in order, which the Go module proxy does not list; `gauntlet run --engine ENGINE@<commit>` builds and runs any one you pick.\n\n")
	}
	f("| Step | Engine | Outcome | Why | Evidence |\n|---|---|---|---|---|\n")
	for i, s := range r.Steps {
		ev := "-"
		if s.Evidence != "" {
			ev = fmt.Sprintf("[evidence](%s)", s.Evidence)
		}
		f("| %d | %s | %s | %s | %s |\n", i+1, s.Engine, s.Outcome, strings.ReplaceAll(s.Why, "|", `\|`), ev)
	}
	if p.Reproduce != "" {
		f("\nReproduce: `%s`\n", p.Reproduce)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
