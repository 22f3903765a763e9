package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/bugs"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

const (
	bugsYAML = "conformance/bugs.yaml"
	bugsMD   = "conformance/bugs.md"
	// regenerateBugs is the command that rewrites conformance/bugs.md.
	regenerateBugs = "go run ./tools/gauntlet docs bugs > conformance/bugs.md"
)

func docsBugsCommand() cli.Command {
	return cli.Command{
		Name:    "docs bugs",
		Summary: "print the catalogue of released engine bugs (conformance/bugs.md), each claim checked against its runs",
		Doc: "Reads conformance/bugs.yaml - released engine bugs with their upstream links, the versions they hit and fixed, " +
			"and the estate and stage that catch each, or why nothing does yet - checks every claim against the run folders " +
			"it names (the run is of that estate, the side ran that engine, the stage failed with the finding's text on a " +
			"buggy engine and passed on a fixed one) and prints conformance/bugs.md. A claim the runs do not bear out is " +
			"an error (exit 1) naming the run; a test fails when the page is out of date.",
		Examples: []cli.Example{{What: "rewrite the catalogue's page after recording a run", Command: regenerateBugs}},
		Setup: func(fs *cli.FlagSet) cli.Action {
			return func(ctx context.Context, _ []string) error { return writeBugs(os.Stdout, ".") }
		},
	}
}

// writeBugs verifies the catalogue under root and writes its page.
func writeBugs(w io.Writer, root string) error {
	c, err := loadBugs(root)
	if err != nil {
		return err
	}
	known, err := estateNamed(root)
	if err != nil {
		return err
	}
	v, problems := bugs.Verify(c, root, bugs.Known{Estate: known, Stage: stage.Default().Known})
	if len(problems) > 0 {
		return errors.New(bugsYAML + " claims what its runs do not say:\n  " + strings.Join(problems, "\n  "))
	}
	if err := bugs.Markdown(w, v, "conformance", regenerateBugs); err != nil {
		return fmt.Errorf("write %s: %w", bugsMD, err)
	}
	return nil
}

// loadBugs reads and parses the catalogue under root.
func loadBugs(root string) (*bugs.Catalogue, error) {
	raw, err := os.ReadFile(filepath.Join(root, bugsYAML))
	if err != nil {
		return nil, err
	}
	return bugs.Parse(raw)
}

// estateNamed answers whether root's estates/ holds an estate of a name,
// for the generated pages that name estates.
func estateNamed(root string) (func(string) bool, error) {
	names, err := estate.List(filepath.Join(root, "estates"))
	if err != nil {
		return nil, err
	}
	return func(n string) bool { return slices.Contains(names, n) }, nil
}
