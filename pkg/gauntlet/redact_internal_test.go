package gauntlet

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
	if err := redactRun(spec, res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "(sensitive)") || !strings.Contains(res.Stages[0].Detail, "demo") {
		t.Errorf("redacted result still holds the value or lost the rest: %s", b)
	}
	var buf bytes.Buffer
	l := redactingLogger{l: log.New(&buf), spec: spec}
	l.Infof("engine said %s", secret)
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), "(sensitive)") {
		t.Errorf("log: %s", buf.String())
	}
	// BREAK: with nothing marked sensitive the value goes through, so the
	// checks above can fail.
	spec.Sensitive = nil
	res2 := &result.Run{Stages: []result.Stage{{Detail: secret}}}
	if err := redactRun(spec, res2); err != nil || res2.Stages[0].Detail != secret {
		t.Errorf("redacted with nothing sensitive: %q, %v", res2.Stages[0].Detail, err)
	}
}
