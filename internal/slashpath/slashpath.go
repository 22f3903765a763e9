// Package slashpath works on the slash-separated, root-relative paths
// estates name files by ("../../modules/x/main.tf"), whatever the OS.
package slashpath

import (
	"path/filepath"
	"strings"
)

// Rel is the slash path from folder from to file to, both relative to
// the same root; to itself if the two cannot be related.
func Rel(from, to string) string {
	r, err := filepath.Rel(filepath.FromSlash("/"+from), filepath.FromSlash("/"+to))
	if err != nil {
		return to
	}
	return filepath.ToSlash(r)
}

// Climb counts the folders p climbs above its start ("../../x" climbs 2)
// and returns the rest of it ("x").
func Climb(p string) (int, string) {
	n := 0
	for strings.HasPrefix(p, "../") {
		n, p = n+1, p[3:]
	}
	return n, p
}
