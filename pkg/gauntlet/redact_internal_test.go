package gauntlet

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/secret"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A sensitive value in a stage's detail, a check, a BREAK or a log line
// never comes out: the result and the log say "(sensitive)" instead.
func TestSensitiveValuesLeaveNoTrace(t *testing.T) {
	const secret = `hunter2"quoted`
	spec := &estate.Spec{Variables: map[string]any{"token": secret, "name": "demo"}, Sensitive: []string{"token"}}
	res := &result.Run{Stages: []result.Stage{{ID: "cold_deploy", Detail: "apply failed: token " + secret + " refused for demo",
		Checks: []result.Check{{Name: "c", Detail: "saw " + secret}}, Breaks: []result.Break{{Name: "b", Victim: secret}}}}}
	if err := redactRun(newRedactor(spec), res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "(sensitive)") || !strings.Contains(res.Stages[0].Detail, "demo") {
		t.Errorf("redacted result still holds the value or lost the rest: %s", b)
	}
	var buf bytes.Buffer
	l := redactingLogger{l: log.New(&buf), r: newRedactor(spec)}
	l.Infof("engine said %s", secret)
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), "(sensitive)") {
		t.Errorf("log: %s", buf.String())
	}
	// BREAK: with nothing marked sensitive the value goes through, so the
	// checks above can fail.
	spec.Sensitive = nil
	res2 := &result.Run{Stages: []result.Stage{{Detail: secret}}}
	if err := redactRun(newRedactor(spec), res2); err != nil || res2.Stages[0].Detail != secret {
		t.Errorf("redacted with nothing sensitive: %q, %v", res2.Stages[0].Detail, err)
	}
}

// A secret value an engine printed in Terraform JSON (here a
// random_password's result in show -json) and a Secret's data in a
// finding leave no trace in any format a run is rendered to (the matrix
// and mutants pages render the same redacted runs; TestSecretsLeaveNoTrace
// greps them after a real run). Each format is grepped on its own; the
// digest stands in the value's place.
func TestLearnedSecretsLeaveNoTraceInAnyFormat(t *testing.T) {
	const pw = "Rand0m-Password-From-State"
	red := newRedactor(&estate.Spec{})
	red.secrets.Learn(`{"values":{"root_module":{"resources":[{"type":"random_password","values":{"result":"` + pw + `"},"sensitive_values":{"result":true}}]}}}`)
	res := &result.Run{Estate: result.Estate{Name: "e"}, Stages: []result.Stage{{ID: "cold_deploy", Verdict: result.Fail,
		Detail: "apply printed " + pw,
		Checks: []result.Check{{Name: "same_objects", Verdict: result.Fail, Detail: "Secret ns/db: data.key: want " + pw,
			Findings: []result.Finding{{Object: "Secret ns/db", Field: "data.key", Want: "short-but-secret", Got: pw}}}},
		Breaks: []result.Break{{Name: "b", Outcome: result.Held, Detail: "held: " + pw}}}}}
	if err := redactRun(red, res); err != nil {
		t.Fatal(err)
	}
	formats := map[string]func(io.Writer) error{
		"evidence.md": func(w io.Writer) error { return evidence.Markdown(w, res) },
		"run.json":    func(w io.Writer) error { return evidence.JSON(w, res) },
		"junit.xml":   func(w io.Writer) error { return evidence.JUnit(w, res) },
	}
	for name, render := range formats {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, leak := range []string{pw, "short-but-secret"} {
			if strings.Contains(b.String(), leak) {
				t.Errorf("%s holds %q:\n%s", name, leak, b.String())
			}
		}
	}
	var b bytes.Buffer
	if err := evidence.Markdown(&b, res); err != nil || !strings.Contains(b.String(), secret.Digest(pw)) {
		t.Errorf("the page does not show the digest %s: %v\n%s", secret.Digest(pw), err, b.String())
	}
}

// A secret value that is also a word of the run's identity (the estate's
// name, its engines) is scrubbed from what the run measured but never
// renames the run: reference-ephemeral-write-only's Secret held
// "write-only", and its run.json named the estate
// "reference-ephemeral-sha256:...", which the ledger refused as another
// estate's run.
func TestSecretsLeaveTheRunsIdentity(t *testing.T) {
	const value = "write-only"
	red := newRedactor(&estate.Spec{Variables: map[string]any{"v": value}, Sensitive: []string{"v"}})
	res := &result.Run{Estate: result.Estate{Name: "reference-ephemeral-write-only", Title: "A write-only attribute"},
		Subject: result.Engine{Version: "write-only"}, Substrate: "local",
		Stages: []result.Stage{{ID: "cold_deploy", Detail: "the Secret holds write-only"}}}
	if err := redactRun(red, res); err != nil {
		t.Fatal(err)
	}
	if res.Estate.Name != "reference-ephemeral-write-only" || res.Estate.Title != "A write-only attribute" || res.Subject.Version != "write-only" {
		t.Errorf("the run's identity was rewritten: %+v %+v", res.Estate, res.Subject)
	}
	// BREAK of the test itself: the same value elsewhere is still scrubbed.
	if strings.Contains(res.Stages[0].Detail, value) {
		t.Errorf("the value went through in a stage's detail: %q", res.Stages[0].Detail)
	}
}
