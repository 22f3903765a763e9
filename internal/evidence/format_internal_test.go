package evidence

import (
	"testing"
	"time"
)

// TestFormatDuration pins the duration forms: milliseconds under a
// second, whole seconds from a second up (3.2s is "3s"), tenths for the
// run's total.
func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d            time.Duration
		stage, total string
	}{
		{0, "0s", "0s"},
		{400 * time.Microsecond, "<1ms", "<1ms"},
		{850 * time.Millisecond, "850ms", "850ms"},
		{999600 * time.Microsecond, "1s", "1s"},
		{3200 * time.Millisecond, "3s", "3.2s"},
		{3500 * time.Millisecond, "4s", "3.5s"},
		{77 * time.Second, "1m17s", "1m17s"},
		{675200 * time.Millisecond, "11m15s", "11m15.2s"},
		{time.Hour + 5*time.Second, "1h0m5s", "1h0m5s"},
		{-2 * time.Second, "-2s", "-2s"},
	}
	for _, tc := range tests {
		if got := formatDuration(tc.d); got != tc.stage {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.d, got, tc.stage)
		}
		if got := formatTotal(tc.d); got != tc.total {
			t.Errorf("formatTotal(%v) = %q, want %q", tc.d, got, tc.total)
		}
	}
	if got := seconds(1500 * time.Millisecond); got != "1.500" {
		t.Errorf("seconds(1.5s) = %q, want 1.500", got)
	}
}

// TestCell pins table-cell escaping one rule at a time.
func TestCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a|b", `a\|b`},
		{`a\|b`, `a\\\|b`},
		{`C:\tmp`, `C:\\tmp`},
		{"one\ntwo", "one<br>two"},
		{"one\r\ntwo", "one<br>two"},
		{"one\rtwo", "one<br>two"},
		{"one\n\ntwo", "one<br><br>two"},
		{"<none>", "&lt;none>"},
		{"  padded \n", "padded"},
	}
	for _, tc := range tests {
		if got := cell(tc.in); got != tc.want {
			t.Errorf("cell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestProseAndSpans pins running-text and code-span escaping.
func TestProseAndSpans(t *testing.T) {
	if got, want := prose("a\n# not a heading\r\n\n| nor a row <x>"), "a # not a heading | nor a row &lt;x>"; got != want {
		t.Errorf("prose = %q, want %q", got, want)
	}
	for in, want := range map[string]string{
		"x":       "`x`",
		"a`b":     "``a`b``",
		"`a`":     "`` `a` ``",
		"a\nb":    "`a b`",
		"a```b``": "```` a```b`` ````",
	} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fence("a ```` b"); got != "`````" {
		t.Errorf("fence = %q", got)
	}
	if got := sentence("done?"); got != "done?" {
		t.Errorf("sentence kept punctuation badly: %q", got)
	}
}

// TestNoTerminalEscapes: colour codes an engine prints without -no-color
// never reach the page, in a cell or in prose.
func TestNoTerminalEscapes(t *testing.T) {
	in := "\x1b[31m\x1b[1mError:\x1b[0m state rm failed"
	if got := cell(in); got != "Error: state rm failed" {
		t.Errorf("cell: %q", got)
	}
	if got := prose(in); got != "Error: state rm failed" {
		t.Errorf("prose: %q", got)
	}
}

// TestZeroFiguresLeftOut: the sections layout drops figures of zero, and a
// stage whose figures are all zero has no figures line.
func TestZeroFiguresLeftOut(t *testing.T) {
	if got := figuresLine(nonZero(map[string]int{"subject.engine_calls": 3, "oracle.api_requests": 0})); got != "Figures: subject.engine_calls=3." {
		t.Errorf("got %q", got)
	}
	if got := figuresLine(nonZero(map[string]int{"a": 0, "b": 0})); got != "" {
		t.Errorf("all zero: got %q, want no line", got)
	}
}
