package evidence_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
)

// A source of several files is recorded with one sha256 over its
// listing; the page says so, and says a single file's sha256 plainly.
func TestSourceSHA256SaysWhatItHashes(t *testing.T) {
	for _, listing := range []bool{false, true} {
		r := smallRun()
		r.Estate.SourceRepo, r.Estate.SourceCommit = "https://github.com/example/app", "0123456789012345678901234567890123456789"
		r.Estate.SourcePath, r.Estate.SourceSHA256 = "main.tf, templates/a.tpl", strings.Repeat("ab", 32)
		r.Estate.SourceSHA256Listing = listing
		var b bytes.Buffer
		if err := evidence.Markdown(&b, r); err != nil {
			t.Fatal(err)
		}
		says := strings.Contains(b.String(), "sha256 of the listing of its files' sha256 and paths")
		if says != listing {
			t.Errorf("listing %v: the page says it is a listing's hash: %v\n%s", listing, says, b.String())
		}
		if !strings.Contains(b.String(), strings.Repeat("ab", 32)) {
			t.Errorf("the page lost the sha256")
		}
	}
}
