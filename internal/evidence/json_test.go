package evidence_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestJSONRoundTrip proves run.json decodes back into the very run it was
// written from, with "schema" and "clear" beside the run's own fields at
// the top level under result.Run's field names.
func TestJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		run   *result.Run
		clear bool
	}{
		{"metrics-server", metricsServerRun(), true},
		{"failed stage", withStage(1, func(s *result.Stage) { s.Verdict = result.Fail }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := evidence.JSON(&b, tc.run); err != nil {
				t.Fatal(err)
			}
			var doc evidence.Document
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatalf("run.json does not decode: %v", err)
			}
			if doc.Schema != "gauntlet.run/v1" || doc.Clear != tc.clear {
				t.Errorf("schema %q clear %v, want gauntlet.run/v1 %v", doc.Schema, doc.Clear, tc.clear)
			}
			if doc.Run == nil || !reflect.DeepEqual(*doc.Run, *tc.run) {
				t.Errorf("run did not round-trip:\n got %+v\nwant %+v", doc.Run, tc.run)
			}

			var top map[string]json.RawMessage
			if err := json.Unmarshal(b.Bytes(), &top); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"schema", "clear", "estate", "subject", "oracle", "substrate", "started_at", "duration_ns", "exit_code", "reproduce", "stages"} {
				if _, ok := top[k]; !ok {
					t.Errorf("run.json has no top-level %q", k)
				}
			}
			var stages []map[string]any
			if err := json.Unmarshal(top["stages"], &stages); err != nil {
				t.Fatal(err)
			}
			if stages[0]["id"] != tc.run.Stages[0].ID || stages[0]["verdict"] != string(tc.run.Stages[0].Verdict) {
				t.Errorf("first stage %v", stages[0])
			}
		})
	}
}

// TestJSONIsReadable proves the artifact is indented and leaves "<" and
// ">" alone.
func TestJSONIsReadable(t *testing.T) {
	r := withStage(0, func(s *result.Stage) { s.Detail = "10250 -> 10251 <none>" })
	var b bytes.Buffer
	if err := evidence.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !bytes.HasPrefix(b.Bytes(), []byte("{\n  \"schema\": \"gauntlet.run/v1\",\n  \"clear\": true,\n")) {
		t.Errorf("run.json does not open with schema and clear, indented:\n%s", out[:min(len(out), 200)])
	}
	if !bytes.Contains(b.Bytes(), []byte(`"10250 -> 10251 <none>"`)) {
		t.Errorf("detail was HTML-escaped:\n%s", out)
	}
}
