package evidence_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
)

// TestWriteAll proves the three files land in a directory it creates,
// hold exactly what the single renderers write, and leave no temporary
// file behind; a nil run writes nothing.
func TestWriteAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "metrics-server")
	r := metricsServerRun()
	paths, err := evidence.WriteAll(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "evidence.md"), filepath.Join(dir, "run.json"), filepath.Join(dir, "junit.xml")}
	if len(paths) != len(want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	var md, js, ju bytes.Buffer
	if err := evidence.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := evidence.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := evidence.JUnit(&ju, r); err != nil {
		t.Fatal(err)
	}
	for i, content := range [][]byte{md.Bytes(), js.Bytes(), ju.Bytes()} {
		if paths[i] != want[i] {
			t.Errorf("path %d = %s, want %s", i, paths[i], want[i])
		}
		got, err := os.ReadFile(want[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, content) {
			t.Errorf("%s differs from its renderer's output", want[i])
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("dir holds %d entries, want exactly the 3 artifacts", len(entries))
	}

	empty := filepath.Join(t.TempDir(), "nil")
	if _, err := evidence.WriteAll(empty, nil); err == nil {
		t.Error("WriteAll(nil run) succeeded")
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("WriteAll(nil run) created %s", empty)
	}
}
