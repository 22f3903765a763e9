// Package estates_test runs every estate in this folder through its
// gauntlet with `go test ./estates/`: an estate is a folder with an
// estate.yaml, and pkg/gauntlet/gauntlettest is its test.
package estates_test

import (
	"os"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

// TestEstates runs each estate as a subtest (-run 'TestEstates/<name>$'
// picks one), one after another: two clusters each, and both cores.
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
	for _, name := range names {
		t.Run(name, func(t *testing.T) { gauntlettest.Run(t, name) })
	}
}
