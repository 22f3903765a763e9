package oneline

import "testing"

func TestFirstAndLast(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{First("\n  first line is long\nsecond", 10), "first line…"},
		{First("\r\n  short \r\nsecond", 10), "short"},
		{First("héllo wörld", 5), "héllo…"},
		{First(" \n\t\n", 10), ""},
		{Last("Applied 3 resources. The stage could not finish: apply: exit 1\nstderr follows", 80), "The stage could not finish: apply: exit 1"},
		{Last("All 12 checks held.\nmore", 80), "All 12 checks held."},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
