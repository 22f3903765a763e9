package evidence_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
)

// update rewrites the golden files: go test ./internal/evidence/ -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the renderers")

// TestGolden pins every artifact of the metrics-server run byte for byte,
// the page in both layouts (the seed layout's page is the one earlier
// pages match), so any change to what a page says shows up in review as a
// diff of testdata/.
func TestGolden(t *testing.T) {
	r := metricsServerRun()
	renders := []struct {
		file   string
		render func(*bytes.Buffer) error
	}{
		{"metrics-server.md.golden", func(b *bytes.Buffer) error { return evidence.Markdown(b, r) }},
		{"metrics-server.seed.md.golden", func(b *bytes.Buffer) error {
			return evidence.Markdown(b, r, evidence.WithFormat(evidence.FormatSeed))
		}},
		{"metrics-server.json.golden", func(b *bytes.Buffer) error { return evidence.JSON(b, r) }},
		{"metrics-server.junit.golden", func(b *bytes.Buffer) error { return evidence.JUnit(b, r) }},
	}
	for _, rd := range renders {
		t.Run(rd.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := rd.render(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", rd.file)
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the render; if the change is meant, run with -update and review the diff\n--- got ---\n%s", path, b.String())
			}
		})
	}
}
