// Package estates_test runs estates through their gauntlet with
// `go test ./estates/`: an estate is a folder with an estate.yaml, and
// pkg/gauntlet/gauntlettest is its test.
//
// Two tiers. The README's test command runs the smoke tier: the estates in
// smoke below, clear and sabotaged, so the harness's own tests stay within
// minutes. The conformance tier - every estate, the kill matrix - is
// `bazel test //estates/...` (one target per estate and per mutant, cached
// by content) and `gauntlet record`; `GAUNTLET_ESTATES=all go test ./estates/`
// runs it here too.
package estates_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

// EstatesEnv picks the estates `go test ./estates/` runs: unset, the smoke
// tier; "all", every estate and the kill matrix; or a comma-separated list
// of estate names.
const EstatesEnv = "GAUNTLET_ESTATES"

// SubstrateEnv picks where `go test ./estates/` runs the estates: unset,
// the local substrate (two control planes as child processes); "kind",
// real nodes (root, a node image: `gauntlet kind node-image`), which is how
// CI's kind lane runs metrics-server's clear pass (its sabotaged pass skipped).
const SubstrateEnv = "GAUNTLET_SUBSTRATE"

// smoke is the tier the README's test command runs: the estate whose
// gauntlet exercises the most (the APIService checks, the sabotaged pass).
var smoke = []string{"corpus-k8s-metrics-server"}

// selected returns the estates to run among names and, for each left out,
// why.
func selected(names []string, env string) (run []string, left map[string]string, err error) {
	left = map[string]string{}
	var want []string
	switch env {
	case "":
		want = smoke
	case "all":
		return names, left, nil
	default:
		want = strings.Split(env, ",")
		for _, w := range want {
			if !slices.Contains(names, w) {
				return nil, nil, fmt.Errorf("$%s names %q, which is not an estate here (estates: %s)", EstatesEnv, w, strings.Join(names, ", "))
			}
		}
	}
	for _, n := range names {
		if slices.Contains(want, n) {
			run = append(run, n)
			continue
		}
		if env == "" {
			left[n] = "conformance tier, not the smoke tier: `bazel test //estates:" + n + "` (cached by content) or `gauntlet record` runs it; " + EstatesEnv + "=all (or =" + n + ") runs it here"
		} else {
			left[n] = "not in $" + EstatesEnv + "=" + env
		}
	}
	return run, left, nil
}

// TestEstates runs each selected estate as a subtest (-run
// 'TestEstates/<name>$' picks one), one after another: two clusters each,
// and both cores.
func TestEstates(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every estate's whole gauntlet takes minutes each")
	}
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("under Bazel every estate is its own target, //estates:<name> (bazel/defs.bzl estate_tests)")
	}
	names, err := estate.List(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no estate (a folder with an estate.yaml) in estates/")
	}
	run, left, err := selected(names, os.Getenv(EstatesEnv))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if why, ok := left[name]; ok {
				t.Skip(why)
			}
			var opts []gauntlet.Option
			if sub := os.Getenv(SubstrateEnv); sub != "" {
				opts = append(opts, gauntlet.WithSubstrate(sub))
			}
			gauntlettest.Run(t, name, opts...)
		})
	}
	if len(run) == 0 {
		t.Fatalf("no estate selected out of %d", len(names))
	}
}

func TestSelected(t *testing.T) {
	names := []string{"a", "corpus-k8s-metrics-server", "z"}
	run, left, err := selected(names, "")
	if err != nil || !slices.Equal(run, smoke) || len(left) != 2 || !strings.Contains(left["a"], "bazel test //estates:a") {
		t.Errorf("default: run %v, left %v, err %v; want the smoke tier and the way to run the others", run, left, err)
	}
	if run, _, _ := selected(names, "all"); !slices.Equal(run, names) {
		t.Errorf("all: run %v, want %v", run, names)
	}
	if run, _, _ := selected(names, "z,a"); !slices.Equal(run, []string{"a", "z"}) {
		t.Errorf("a list: run %v, want [a z]", run)
	}
	if _, _, err := selected(names, "a,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("an unknown estate: err %v, want one naming it", err)
	}
}

// TestEveryEstateLoads: every estate's estate.yaml parses and validates,
// and its pinned corpus files import and verify by sha256 - in the first
// tier, where only the smoke estate runs whole. An estate broken so (a
// source sha256 that no longer matches, a file it names that is missing)
// fails here in seconds, besides its Bazel target and its ledger cell.
func TestEveryEstateLoads(t *testing.T) {
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("under Bazel each estate's target loads and imports its own corpus files (bazel/defs.bzl estate_tests)")
	}
	names, err := estate.List(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			spec := gauntlettest.Load(t, name)
			if spec.Name != name {
				t.Errorf("estates/%s/estate.yaml names itself %q", name, spec.Name)
			}
		})
	}
}
