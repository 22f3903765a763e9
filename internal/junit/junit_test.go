package junit

import (
	"strings"
	"testing"
)

// TestWriteCounts: the suite's and the document's counts are the cases'.
func TestWriteCounts(t *testing.T) {
	var b strings.Builder
	err := Write(&b, Suites{Name: "n", Suites: []Suite{{Name: "s", Cases: []Case{
		{Name: "pass"},
		{Name: "fail", Failure: &Failure{Message: "m"}},
		{Name: "skip", Skipped: &Skipped{Message: "why"}},
		{Name: "error", Error: &Error{Message: "stopped"}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`<?xml`, `<testsuites name="n" tests="4" failures="1" errors="1" skipped="1"`, `<testsuite name="s" tests="4" failures="1" errors="1" skipped="1"`, `<skipped message="why">`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "</testsuites>\n") {
		t.Errorf("does not end in a newline:\n%s", out)
	}
}
