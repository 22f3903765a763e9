// Package oneline cuts text to one short line for table cells, titles and
// summaries: the evidence page, the matrix and the comparison say a
// stage's or a run's detail the same way.
package oneline

import (
	"strings"
	"unicode/utf8"
)

// First is the first non-empty line of s, trimmed and cut to limit runes
// with an ellipsis.
func First(s string, limit int) string {
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			if utf8.RuneCountInString(l) > limit {
				return string([]rune(l)[:limit]) + "…"
			}
			return l
		}
	}
	return ""
}

// Last is a stage detail's closing words, cut as First: from the
// runner's "The stage could not finish: ..." when it is there (the why
// that matters), else the detail's first line.
func Last(s string, limit int) string {
	if i := strings.LastIndex(s, "The stage could not finish"); i >= 0 {
		return First(s[i:], limit)
	}
	return First(s, limit)
}
