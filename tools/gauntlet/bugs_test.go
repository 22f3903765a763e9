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
	checkGenerated(t, filepath.Join(root, bugsMD), b.Bytes(), regenerateBugs)
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
	checkGenerated(t, filepath.Join(root, coverageMD), b.Bytes(), regenerateCoverage)
}

// checkGenerated fails when the committed file at path is not want, the
// page its command prints now; with -update it rewrites the file first.
func checkGenerated(t *testing.T, path string, want []byte, regenerate string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it: %s)", err, regenerate)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s is out of date: run `%s` (or go test ./tools/gauntlet -run %s -update)", path, regenerate, t.Name())
	}
}
