package wordwrap

import (
	"slices"
	"testing"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"one two three", 7, []string{"one two", "three"}},
		{"  spaced\n words ", 20, []string{"spaced words"}},
		{"a verylongword b", 4, []string{"a", "verylongword", "b"}},
	} {
		if got := Lines(tc.s, tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("Lines(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
		}
	}
}
