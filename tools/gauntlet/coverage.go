package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/internal/surface"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

const (
	surfaceYAML = "conformance/surface.yaml"
	coverageMD  = "docs/coverage.md"
	// regenerateCoverage is the command that rewrites docs/coverage.md.
	regenerateCoverage = "go run ./tools/gauntlet docs coverage > docs/coverage.md"
	// everyEstate stands for "every estate" in the map's BREAK column.
	everyEstate = "corpus-k8s-metrics-server"
)

func docsCoverageCommand() cli.Command {
	return cli.Command{
		Name:    "docs coverage",
		Summary: "print the map of the engine's surface and what exercises it (docs/coverage.md)",
		Doc: "Reads conformance/surface.yaml - the CLI modes, language features and backends that matter on a Kubernetes " +
			"root, each exercised by named stages on named estates or a gap with its reason - checks every stage, estate " +
			"and bug row it names exists, and prints docs/coverage.md with each stage's BREAKs as the estate's latest " +
			"recorded run (conformance/runs) names them and each feature's bug rows with whether they are caught. A test " +
			"fails when the page is out of date.",
		Examples: []cli.Example{{What: "rewrite the map after adding a stage or an estate", Command: regenerateCoverage}},
		Setup: func(fs *cli.FlagSet) cli.Action {
			return func(ctx context.Context, _ []string) error { return writeCoverage(os.Stdout, ".") }
		},
	}
}

// writeCoverage checks the surface map under root and writes its page.
func writeCoverage(w io.Writer, root string) error {
	raw, err := os.ReadFile(filepath.Join(root, surfaceYAML))
	if err != nil {
		return err
	}
	m, err := surface.Parse(raw)
	if err != nil {
		return err
	}
	cat, err := loadBugs(root)
	if err != nil {
		return err
	}
	state := map[string]string{}
	for _, b := range cat.Bugs {
		state[b.ID] = "not caught"
		if b.Caught != nil {
			state[b.ID] = "caught"
		}
	}
	known, err := estateNamed(root)
	if err != nil {
		return err
	}
	if problems := surface.Check(m, surface.Known{
		Stage:  stage.Default().Known,
		Estate: known,
		Bug:    func(id string) bool { _, ok := state[id]; return ok },
	}); len(problems) > 0 {
		return errors.New(surfaceYAML + " names what does not exist:\n  " + strings.Join(problems, "\n  "))
	}
	latest, err := latestRuns(filepath.Join(root, runsDir))
	if err != nil {
		return err
	}
	breaks := func(estateName, stageID string) []string {
		r, ok := latest[estateName]
		if !ok {
			return nil
		}
		var out []string
		for _, s := range r.Stages {
			if s.ID != stageID {
				continue
			}
			for _, b := range s.Breaks {
				if !slices.Contains(out, b.Name) {
					out = append(out, b.Name)
				}
			}
		}
		return out
	}
	return surface.Markdown(w, m, breaks, func(id string) string { return state[id] }, everyEstate, regenerateCoverage)
}

// latestRuns reads every recorded run's run.json and keeps, per estate,
// the latest on the local substrate.
func latestRuns(runs string) (map[string]*result.Run, error) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		return nil, err
	}
	out := map[string]*result.Run{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(runs, e.Name(), conformance.RunJSON))
		if err != nil {
			return nil, err
		}
		var r result.Run
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(r.Substrate, "local") {
			continue
		}
		if have, ok := out[r.Estate.Name]; !ok || r.StartedAt.After(have.StartedAt) {
			out[r.Estate.Name] = &r
		}
	}
	return out, nil
}
