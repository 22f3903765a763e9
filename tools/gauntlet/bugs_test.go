package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
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

func TestStagesPageIsCurrent(t *testing.T) {
	have, err := os.ReadFile(filepath.Join("..", "..", stagesMD))
	if err != nil {
		t.Fatal(err)
	}
	want, err := stagesPage(have, stage.Default())
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, filepath.Join("..", "..", stagesMD), want, regenerateStages)
}

// TestStagesPageRefuses: a registered stage without a section, and a
// section of no stage, are errors naming the fix; a heading that lies is
// rewritten.
func TestStagesPageRefuses(t *testing.T) {
	g := stage.Default()
	page := "# Stages\n\nOrder: cold_deploy.\n\n## cold_deploy - Whatever (nothing)\n\nprose\n\n## gone - Gone\n"
	_, err := stagesPage([]byte(page), g)
	if err == nil || !strings.Contains(err.Error(), `"gone" has a section but is no stage`) || !strings.Contains(err.Error(), "stage migrate has no section") {
		t.Errorf("want both problems named, got %v", err)
	}
	var full strings.Builder
	full.WriteString("Order: x.\n")
	for _, id := range g.IDs() {
		fmt.Fprintf(&full, "## %s - stale (x)\n\nprose of %s\n", id, id)
	}
	out, err := stagesPage([]byte(full.String()), g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "## migrate - Migrate (headline; GAUNT-MIG-01, with records GAUNT-RECORDS-01; depends on cold_deploy)\n\nprose of migrate") ||
		!strings.Contains(string(out), "Order: cold_deploy, migrate,") || strings.Contains(string(out), "stale") {
		t.Errorf("headings and order not rewritten from the registry, or prose lost:\n%s", out)
	}
}
