package gauntlet

import (
	"encoding/json"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/internal/secret"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// redactor is everything a run must not print: the estate's sensitive
// variables ("(sensitive)") and the secret values the engines printed
// (their digests), learned as the run goes (see secret.Values.Learn).
type redactor struct {
	spec    *estate.Spec
	secrets *secret.Values
}

func newRedactor(spec *estate.Spec) *redactor {
	r := &redactor{spec: spec, secrets: &secret.Values{}}
	r.secrets.Add(spec.SensitiveValues()...)
	return r
}

// text redacts plain text.
func (r *redactor) text(s string) string { return r.secrets.Redact(r.spec.Redact(s)) }

// redactingLogger passes every line through the run's redactor: no
// secret value reaches the terminal.
type redactingLogger struct {
	l log.Logger
	r *redactor
}

// A line with nothing to redact goes on as the caller wrote it, format
// and arguments (a logger may read them: a test cancels a run when it sees
// "stage %s started" with the stage's name); only a redacted line is
// passed as text.
func (l redactingLogger) Infof(format string, args ...any) { l.pass(l.l.Infof, format, args...) }

func (l redactingLogger) Warnf(format string, args ...any) { l.pass(l.l.Warnf, format, args...) }

func (l redactingLogger) pass(logf func(string, ...any), format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if red := l.r.text(line); red != line {
		logf("%s", red)
		return
	}
	logf(format, args...)
}

// redactRun takes every secret out of a run's result - stage details,
// checks, findings, BREAKs, reasons - before any renderer sees it: the
// findings about secret data show digests (result.Run.HideSecretData),
// and every sensitive or learned value goes, through the result's JSON,
// where a value appears escaped.
func redactRun(r *redactor, res *result.Run) error {
	if res == nil {
		return nil
	}
	res.HideSecretData()
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	out := r.secrets.Redact(r.spec.RedactJSON(string(b)))
	if out == string(b) {
		return nil
	}
	var clean result.Run
	if err := json.Unmarshal([]byte(out), &clean); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	// The run's identity comes from the checkout and its pins, never from
	// a cluster or a state: a secret value that happens to be a word of
	// the estate's name must not rename the run (the ledger would refuse
	// it as another estate's).
	clean.Estate, clean.Subject, clean.Oracle, clean.Substrate, clean.Commit = res.Estate, res.Subject, res.Oracle, res.Substrate, res.Commit
	*res = clean
	return nil
}
