package estates_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/mutant"
)

// TestMutantsBzlListsEveryMutant: the kill matrix's Bazel targets come from
// bazel/mutants.bzl (Starlark cannot ask Go), so a mutant added to
// mutant.All() without a line there would never run under Bazel.
func TestMutantsBzlListsEveryMutant(t *testing.T) {
	path := filepath.Join("..", "bazel", "mutants.bzl")
	if d := os.Getenv("TEST_SRCDIR"); d != "" {
		path = filepath.Join(d, "_main", "bazel", "mutants.bzl")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s+"([a-z0-9-]+)",$`).FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, m := range append(mutant.All(), mutant.Identity()) {
		want = append(want, m.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("bazel/mutants.bzl lists %v, want mutant.All() and identity: %v", got, want)
	}
}
