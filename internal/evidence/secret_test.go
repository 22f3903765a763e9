package evidence_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// plantedSecret is a value a finding about a Secret's data carries.
const plantedSecret = "s3cr3t-Planted-Value-0042"

// secretRun is smallRun with a failed check and a BREAK whose findings are
// about a Secret's data and a kubernetes_secret_v1's data, each holding
// plantedSecret.
func secretRun() *result.Run {
	return withStage(0, func(s *result.Stage) {
		s.Verdict = result.Fail
		s.Checks = []result.Check{{Name: "same_objects", Verdict: result.Fail, Detail: "1 difference",
			Findings: []result.Finding{
				{Check: "same_objects", Side: "subject", Object: "Secret app/db", Field: "data.password", Want: plantedSecret, Got: "other"},
				{Check: "same_objects", Side: "subject", Address: "kubernetes_secret_v1.db", Field: `data["password"]`, Want: "x", Got: plantedSecret},
				{Check: "same_objects", Side: "subject", Object: "ConfigMap app/c", Field: "data.k", Want: "visible-config", Got: "v2"},
			}}}
		s.Breaks[0].Got = []result.Finding{{Object: "Secret app/db", Field: "stringData.token", Want: plantedSecret, Got: plantedSecret}}
		s.Breaks[0].Predictions = []result.Prediction{{Object: "Secret app/db", Field: "data.password", Got: plantedSecret}}
	})
}

// Every renderer shows a digest where a finding about secret data holds
// its value, and leaves other findings as they are; the run it was given
// is not changed.
func TestRenderersNeverPrintSecretData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(io.Writer, *result.Run) error
	}{
		{"markdown", func(w io.Writer, r *result.Run) error { return evidence.Markdown(w, r) }},
		{"json", evidence.JSON},
		{"junit", evidence.JUnit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := secretRun()
			var b bytes.Buffer
			if err := tc.render(&b, r); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b.Bytes(), []byte(plantedSecret)) {
				t.Errorf("%s prints the Secret's value:\n%s", tc.name, b.String())
			}
			if r.Stages[0].Checks[0].Findings[0].Want != plantedSecret {
				t.Errorf("rendering changed the run it was given")
			}
		})
	}
	// JSON is the one artifact that carries findings whole: it shows the
	// digest in the value's place and the ConfigMap's value as it is.
	var b bytes.Buffer
	if err := evidence.JSON(&b, secretRun()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"want": "sha256:`) || !strings.Contains(b.String(), "visible-config") {
		t.Errorf("run.json lost the digest or the ConfigMap's value:\n%s", b.String())
	}
}

// WriteAll, the writer every command uses, leaves no secret data in any
// file it writes.
func TestWriteAllLeavesNoSecretData(t *testing.T) {
	dir := t.TempDir()
	if _, err := evidence.WriteAll(dir, secretRun()); err != nil {
		t.Fatal(err)
	}
	grepSecret(t, dir, plantedSecret)
}

// grepSecret fails for every file under dir holding value.
func grepSecret(t *testing.T, dir, value string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(value)) {
			t.Errorf("%s holds the secret value", p)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk %s: %d files, %v", dir, n, err)
	}
}
