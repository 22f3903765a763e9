package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The matrix's pages and every engine's evidence under it show a digest
// where a finding about a Secret's data holds its value.
func TestWriteAllLeavesNoSecretData(t *testing.T) {
	const planted = "Matrix-Planted-Secret-77"
	check := result.Check{Name: "same_objects", Verdict: result.Fail, Detail: "1 difference",
		Findings: []result.Finding{{Object: "Secret ns/db", Field: "data.password", Want: planted, Got: "x"}}}
	run := &result.Run{Estate: result.Estate{Name: "e"}, Stages: []result.Stage{stageOf("cold_deploy", result.Fail, 1, check)}}
	m := &Matrix{Estate: run.Estate, Columns: []Column{{Engine: "tofu@1.12.6", Tool: "tofu", Run: run}}}
	dir := t.TempDir()
	paths, err := WriteAll(dir, m)
	if err != nil || len(paths) < 6 {
		t.Fatalf("wrote %v, %v", paths, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(planted)) {
			t.Errorf("%s holds the Secret's value", filepath.Base(p))
		}
	}
}

// Every engine's evidence page is written in the layout WriteAll is
// given: by default a summary table, the seed layout's one row per stage
// when asked.
func TestWriteAllPageFormat(t *testing.T) {
	run := &result.Run{Estate: result.Estate{Name: "e"}, Stages: []result.Stage{stageOf("cold_deploy", result.Pass, 1)}}
	m := &Matrix{Estate: run.Estate, Columns: []Column{{Engine: "tofu@1.12.6", Tool: "tofu", Run: run}}}
	for header, opts := range map[string][]evidence.Option{
		"| Stage | Verdict | Time | Checks | Reason |": nil,
		"| Stage | Verdict | Duration | Detail |":      {evidence.WithFormat(evidence.FormatSeed)},
	} {
		dir := t.TempDir()
		if _, err := WriteAll(dir, m, opts...); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(dir, "tofu", evidence.MarkdownFile))
		if err != nil || !bytes.Contains(page, []byte(header)) {
			t.Errorf("tofu's page lacks %q (%v):\n%s", header, err, page)
		}
	}
}

// A column's failed calls' logs (kept in ColumnDir/logs while it ran,
// Options.Out) sit beside its evidence page, which WriteAll writes into
// the same folder and leaves them in.
func TestColumnLogsBesideItsPage(t *testing.T) {
	run := &result.Run{Estate: result.Estate{Name: "e"}, Stages: []result.Stage{stageOf("cold_deploy", result.Pass, 1)}}
	m := &Matrix{Estate: run.Estate, Columns: []Column{{Engine: "tofu@1.12.6", Tool: "tofu", Run: run}}}
	dir := t.TempDir()
	kept := filepath.Join(ColumnDir(dir, "tofu"), "logs", "subject", "007-tofu-apply.log")
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("Error: boom\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAll(dir, m); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ColumnDir(dir, "tofu"), evidence.MarkdownFile)); err != nil {
		t.Errorf("the column's page is not in its folder: %v", err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "Error: boom\n" {
		t.Errorf("the kept log went: %q, %v", b, err)
	}
}
