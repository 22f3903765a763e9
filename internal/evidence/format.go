package evidence

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// verdictWord is the table's word for a verdict: pass, fail, not run, not
// applicable. An unknown verdict is shown as itself, quoted, never as a
// pass.
func verdictWord(v result.Verdict) string {
	switch v {
	case result.Pass:
		return "pass"
	case result.Fail:
		return "fail"
	case result.NotRun:
		return "not run"
	case result.NotApplicable:
		return "not applicable"
	case result.Cancelled:
		return "cancelled"
	case result.Limitation:
		return "limitation"
	case result.OracleFinding:
		return "oracle's finding"
	}
	return fmt.Sprintf("unknown verdict %q", string(v))
}

// verdictPhrase is a verdict as a predicate: "passes", "fails", "did not run".
func verdictPhrase(v result.Verdict) string {
	switch v {
	case result.Pass:
		return "passes"
	case result.Fail:
		return "fails"
	case result.NotRun:
		return "did not run"
	case result.NotApplicable:
		return "is not applicable to this estate"
	case result.Cancelled:
		return "was cancelled"
	case result.Limitation:
		return "fails the same way on stock (a limitation, not the engine's)"
	case result.OracleFinding:
		return "passes on the engine under test and fails on stock alone (the oracle's finding)"
	}
	return fmt.Sprintf("has unknown verdict %q", string(v))
}

// formatDuration is a stage's duration on the page. Under a second it is
// whole milliseconds ("850ms"; "<1ms" for anything shorter but not zero).
// From a second up it is rounded to the whole second in Go's h/m/s form
// ("3s", "1m17s", "1h0m5s"): 3.2s shows as "3s" because a stage's
// sub-second jitter is noise next to what it measured. Zero is "0s".
func formatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + formatDuration(-d)
	}
	if d == 0 {
		return "0s"
	}
	if ms := d.Round(time.Millisecond); ms < time.Second {
		if ms == 0 {
			return "<1ms"
		}
		return fmt.Sprintf("%dms", ms/time.Millisecond)
	}
	return d.Round(time.Second).String()
}

// formatTotal is the whole run's time: tenths of a second from a second
// up ("11m15.2s", "3.2s"), since it is read once, as a total; below a
// second it reads like a stage's.
func formatTotal(d time.Duration) string {
	if d < 0 {
		return "-" + formatTotal(-d)
	}
	if d.Round(time.Millisecond) < time.Second {
		return formatDuration(d)
	}
	return d.Round(100 * time.Millisecond).String()
}

// seconds is a duration as JUnit wants it: seconds with millisecond
// precision.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}

// shortCommit keeps a commit readable in running text; the JSON artifact
// keeps it whole. A "-dirty" suffix (a run from uncommitted changes,
// which no commit can vouch for) always survives the shortening.
func shortCommit(c string) string {
	const n = 10
	hash, dirty := strings.CutSuffix(c, "-dirty")
	if len(hash) > n {
		hash = hash[:n]
	}
	if dirty {
		hash += "-dirty"
	}
	return hash
}

// ansi is a terminal escape sequence (colour, cursor): an engine call made
// without -no-color prints them, and a page shows them as "[0m[1m".
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// plain is s without terminal escape sequences.
func plain(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansi.ReplaceAllString(s, "")
}

// cell makes s safe as one GitHub-flavoured-markdown table cell: pipes are
// escaped so they cannot split the cell, backslashes are doubled first so
// a backslash in the text cannot swallow that escape, "<" becomes "&lt;"
// so text like "<none>" is not read as an HTML tag, and line breaks (any
// of \r\n, \r, \n) become <br> because a raw newline ends the table row.
func cell(s string) string {
	s = strings.TrimSpace(plain(s))
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '|':
			b.WriteString(`\|`)
		case '<':
			b.WriteString("&lt;")
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b.WriteString("<br>")
		case '\n':
			b.WriteString("<br>")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// prose makes s safe as running text in one paragraph: every run of
// whitespace holding a line break becomes one space (a line starting with
// "#", "|" or "-" would otherwise turn into a heading, table or list) and
// "<" becomes "&lt;".
func prose(s string) string {
	s = strings.TrimSpace(plain(s))
	if strings.ContainsAny(s, "\r\n") {
		lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		s = strings.Join(nonEmpty(lines), " ")
	}
	return strings.ReplaceAll(s, "<", "&lt;")
}

func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sentence trims s and ends it with a full stop unless it already ends in
// sentence punctuation, so model text can be joined into one paragraph.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	switch r {
	case '.', '!', '?', '…':
		return s
	}
	return s + "."
}

// fence is a backtick fence longer than any backtick run in s, so s cannot
// close its own code block.
func fence(s string) string {
	return strings.Repeat("`", max(3, longestBacktickRun(s)+1))
}

// codeSpan puts s, on one line, in an inline code span whose backtick
// delimiter is longer than any backtick run inside it. Nothing else is
// escaped: markdown shows a code span's text as it is.
func codeSpan(s string) string {
	s = strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s))
	d := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		// A space each side keeps the content's own backticks off the
		// delimiter; markdown strips exactly one such space.
		return d + " " + s + " " + d
	}
	return d + s + d
}

func longestBacktickRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
