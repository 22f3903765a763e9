package evidence

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Schema names the JSON artifact's shape. It changes only when a field is
// renamed, removed or changes meaning; new fields may appear under it.
const Schema = "gauntlet.run/v1"

// Document is the JSON artifact: the run's own fields, with result.Run's
// field names, at the top level beside "schema" and "clear". It is
// exported so readers (the conformance ledger, tests) decode exactly what
// JSON writes.
type Document struct {
	Schema string `json:"schema"`
	// Clear is result.Run.Assess().Clear(), the verdict the markdown page states.
	Clear bool `json:"clear"`
	// ChecksNotRun are the checks a clear run did not run (on this
	// substrate), so no reader takes it for a full one.
	ChecksNotRun []result.CheckNotRun `json:"checks_not_run,omitempty"`
	*result.Run
}

// JSON writes r as the run.json artifact: a Document, indented by two
// spaces, ending in a newline. HTML characters are not escaped ("<" stays
// "<"), since the artifact is read by people and programs, never
// embedded in a page.
func JSON(w io.Writer, r *result.Run) error {
	if r == nil {
		return fmt.Errorf("evidence: json: %w", errNilRun)
	}
	// Defensive: findings about secret data show digests even in a run
	// that did not come from gauntlet.Run (which hides them already).
	r = r.SecretDataHidden()
	a := r.Assess()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Document{Schema: Schema, Clear: a.Clear(), ChecksNotRun: a.ChecksNotRun, Run: r}); err != nil {
		return fmt.Errorf("evidence: json %s: %w", r.Estate.Name, err)
	}
	return nil
}
