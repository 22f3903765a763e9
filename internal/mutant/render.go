package mutant

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// Markdown renders the matrix: the score, one row per mutant with the
// stage that caught it, the check and the finding it caused, then mutant
// x stage.
func Markdown(m *Matrix) string {
	var b strings.Builder
	k, n := m.Score()
	fmt.Fprintf(&b, "# Kill matrix: %s\n\n", m.Estate)
	scope := "each mutant's expected stages and what they depend on, stopping once one caught it"
	if m.AllStages {
		scope = "every stage for every mutant"
	}
	fmt.Fprintf(&b, "Mutation score **%d/%d**. Subject: mutant engines wrapping %s, on the %s substrate; %s. %d runs in %s.\n\n",
		k, n, orUnknown(m.Engine), m.Substrate, scope, len(m.Rows), m.Duration.Round(time.Second))
	if err := m.Err(); err != nil {
		fmt.Fprintf(&b, "**NOT all killed** - every row below that is not `killed` is a defect of the gauntlet: %v.\n\n", err)
	} else {
		b.WriteString("Every mutant was caught by a stage it names.\n\n")
	}
	b.WriteString("| mutant | promise broken | expected | status | caught by | check | finding |\n|---|---|---|---|---|---|---|\n")
	for _, r := range m.Rows {
		detail, check := r.Finding, r.Check
		if r.Status != Killed {
			detail = r.Why
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | **%s** | %s | %s | %s |\n", r.Name, cell(r.Promise), strings.Join(r.Expect, ", "),
			r.Status, dash(r.KilledBy), cell(dash(check)), cell(clip(detail, 400)))
	}
	b.WriteString("\n## Mutant x stage\n\n`check`: a check failed (caught); `finding`: a BREAK found the engine out (caught); `break`: a BREAK did not prove (the gauntlet's weakness, not a catch); `error`: the stage could not finish; `n/a`: not applicable to the estate; `*`: a stage the mutant names.\n\n")
	ids := stage.Default().Shown()
	b.WriteString("| mutant | " + strings.Join(ids, " | ") + " |\n|---|" + strings.Repeat("---|", len(ids)) + "\n")
	for _, r := range m.Rows {
		cells := map[string]StageCell{}
		for _, c := range r.Stages {
			cells[c.Stage] = c
		}
		b.WriteString("| `" + r.Name + "` |")
		for _, id := range ids {
			c, ok := cells[id]
			v := "."
			switch {
			case ok && c.Cell == NotApplicable:
				v = "n/a"
			case ok && c.Cell != NotRun:
				v = string(c.Cell)
			}
			for _, e := range r.Expect {
				if e == id {
					v += "*"
				}
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## How each mutant breaks its promise\n\n")
	for _, r := range m.Rows {
		fmt.Fprintf(&b, "- `%s`: %s.\n", r.Name, r.How)
	}
	return b.String()
}

// WriteAll writes mutants.md and mutants.json into dir.
func WriteAll(dir string, m *Matrix) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	md, js := filepath.Join(dir, "mutants.md"), filepath.Join(dir, "mutants.json")
	if err := os.WriteFile(md, []byte(Markdown(m)), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(js, append(raw, '\n'), 0o644); err != nil {
		return nil, err
	}
	return []string{md, js}, nil
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "the pinned tofu"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
