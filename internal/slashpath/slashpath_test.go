package slashpath

import "testing"

func TestRelAndClimb(t *testing.T) {
	for _, tc := range []struct {
		from, to, rel string
		up            int
		rest          string
	}{
		{"examples/app", "examples/app/main.tf", "main.tf", 0, "main.tf"},
		{"examples/app", "modules/x/main.tf", "../../modules/x/main.tf", 2, "modules/x/main.tf"},
		{"", "conf/app.conf", "conf/app.conf", 0, "conf/app.conf"},
		{"a", "a/b/../c.tf", "c.tf", 0, "c.tf"},
	} {
		rel := Rel(tc.from, tc.to)
		up, rest := Climb(rel)
		if rel != tc.rel || up != tc.up || rest != tc.rest {
			t.Errorf("Rel(%q, %q) = %q, Climb = %d, %q; want %q, %d, %q", tc.from, tc.to, rel, up, rest, tc.rel, tc.up, tc.rest)
		}
	}
}
