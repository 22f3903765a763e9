// Package wordwrap folds prose into lines of a width, word by word: the
// CLI's help, docs/stages.md's order line and the status page's reasons
// fold the same way.
package wordwrap

import "strings"

// Lines folds s's words into lines of at most width bytes; a word longer
// than width stands on a line of its own. Empty s is one empty line.
func Lines(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	return append(lines, line)
}
