package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

const (
	stagesMD = "docs/stages.md"
	// regenerateStages is the command that rewrites docs/stages.md.
	regenerateStages = "go run ./tools/gauntlet docs stages -w"
)

func docsStagesCommand() cli.Command {
	return cli.Command{
		Name:    "docs stages",
		Summary: "rewrite the stage reference's facts (docs/stages.md) from the stage registry",
		Doc: "docs/stages.md is prose written by hand around facts the registry owns: the order the stages run in, and each " +
			"stage's heading - its ID, title, whether it decides the clear, the requirements it proves and the stages it " +
			"depends on. This command rewrites those from the registry (`stage.Default()`) and keeps the prose; a stage " +
			"without a section, or a section of no stage, is an error naming the fix. Prints the page, or with -w writes it. " +
			"A test fails when the page is out of date.",
		Examples: []cli.Example{{What: "rewrite the reference after adding or changing a stage", Command: regenerateStages}},
		Setup: func(fs *cli.FlagSet) cli.Action {
			write := fs.Bool("w", false, "write "+stagesMD+" instead of printing it")
			return func(ctx context.Context, _ []string) error {
				have, err := os.ReadFile(stagesMD)
				if err != nil {
					return err
				}
				page, err := stagesPage(have, stage.Default())
				if err != nil {
					return err
				}
				if *write {
					return atomicfile.Write(filepath.FromSlash(stagesMD), page, 0o644)
				}
				_, err = os.Stdout.Write(page)
				return err
			}
		},
	}
}

// stageHeading matches a stage section's heading: "## <id> - ...".
var stageHeading = regexp.MustCompile(`^## ([a-z0-9_]+) - `)

// stagesPage rewrites page's order paragraph and stage headings from g.
func stagesPage(page []byte, g *stage.Registry) ([]byte, error) {
	lines := strings.Split(string(page), "\n")
	var out []string
	seen := map[string]bool{}
	var problems []string
	orderDone := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch m := stageHeading.FindStringSubmatch(l); {
		case strings.HasPrefix(l, "Order: "):
			// The order is its own paragraph's first lines, up to the one
			// that ends with a full stop.
			for i < len(lines) && !strings.HasSuffix(lines[i], ".") {
				i++
			}
			out = append(out, cli.Wrap("Order: "+strings.Join(g.IDs(), ", ")+".", 120, ""))
			orderDone = true
		case m != nil:
			st, ok := g.Lookup(m[1])
			if !ok {
				problems = append(problems, fmt.Sprintf("%q has a section but is no stage of the registry: remove the section or register the stage", m[1]))
				out = append(out, l)
				continue
			}
			seen[m[1]] = true
			out = append(out, heading(st.Info()))
		default:
			out = append(out, l)
		}
	}
	if !orderDone {
		problems = append(problems, `no "Order: ..." paragraph: add one line starting "Order: " under the introduction`)
	}
	for _, id := range g.IDs() {
		if !seen[id] {
			problems = append(problems, fmt.Sprintf("stage %s has no section: add \"## %s - ...\" with a paragraph on what it does, its checks and their BREAKs (the heading is then rewritten)", id, id))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s:\n  %s", stagesMD, strings.Join(problems, "\n  "))
	}
	return []byte(strings.Join(out, "\n")), nil
}

// heading is a stage's section heading: "## id - Title (headline;
// REQ-1, with records REQ-2; depends on a, b)".
func heading(in stage.Info) string {
	var parts []string
	switch {
	case in.Headline:
		parts = append(parts, "headline")
	case in.Declared != nil:
		parts = append(parts, "headline where declared")
	case in.HeadlineOnRecords:
		parts = append(parts, "headline with records")
	}
	var reqs []string
	reqs = append(reqs, in.Requirements...)
	if len(in.LocalRequirements) > 0 {
		reqs = append(reqs, "on local state "+strings.Join(in.LocalRequirements, ", "))
	}
	if len(in.RecordsRequirements) > 0 {
		reqs = append(reqs, "with records "+strings.Join(in.RecordsRequirements, ", "))
	}
	if len(reqs) > 0 {
		parts = append(parts, strings.Join(reqs, ", "))
	}
	if len(in.After) > 0 {
		parts = append(parts, "depends on "+strings.Join(in.After, ", "))
	}
	h := "## " + in.ID + " - " + in.Title
	if len(parts) > 0 {
		h += " (" + strings.Join(parts, "; ") + ")"
	}
	return h
}
