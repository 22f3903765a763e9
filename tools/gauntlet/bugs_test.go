package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestBugCatalogueIsCurrent: every claim of conformance/bugs.yaml holds
// against the run folders it names, and conformance/bugs.md is what
// `gauntlet docs bugs` prints now; -update rewrites it.
func TestBugCatalogueIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	var b bytes.Buffer
	if err := writeBugs(&b, root); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, bugsMD)
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it: %s)", err, regenerateBugs)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is out of date with %s and its runs: run `%s` (or go test ./tools/gauntlet -run TestBugCatalogueIsCurrent -update)", bugsMD, bugsYAML, regenerateBugs)
	}
}

// TestCoverageMapIsCurrent: every stage, estate and bug row of
// conformance/surface.yaml exists, and docs/coverage.md is what `gauntlet
// docs coverage` prints now; -update rewrites it.
func TestCoverageMapIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	var b bytes.Buffer
	if err := writeCoverage(&b, root); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, coverageMD)
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it: %s)", err, regenerateCoverage)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is out of date with %s: run `%s` (or go test ./tools/gauntlet -run TestCoverageMapIsCurrent -update)", coverageMD, surfaceYAML, regenerateCoverage)
	}
}
