package gauntlet

import (
	"encoding/json"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// redactingLogger passes every line through the estate's Redact: a
// sensitive variable's value never reaches the terminal.
type redactingLogger struct {
	l    log.Logger
	spec *estate.Spec
}

func (r redactingLogger) Infof(format string, args ...any) {
	r.l.Infof("%s", r.spec.Redact(fmt.Sprintf(format, args...)))
}

func (r redactingLogger) Warnf(format string, args ...any) {
	r.l.Warnf("%s", r.spec.Redact(fmt.Sprintf(format, args...)))
}

// redactRun takes every sensitive value out of a run's result - stage
// details, checks, BREAKs, reasons - before any renderer sees it. It goes
// through the result's JSON, where a value appears escaped.
func redactRun(spec *estate.Spec, res *result.Run) error {
	if res == nil || len(spec.Sensitive) == 0 {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	out := spec.RedactJSON(string(b))
	if out == string(b) {
		return nil
	}
	var clean result.Run
	if err := json.Unmarshal([]byte(out), &clean); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	*res = clean
	return nil
}
