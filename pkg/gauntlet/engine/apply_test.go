package engine

import (
	"strings"
	"testing"
)

// TestParseApplied reads both CLIs' apply summaries, OpenTofu's count of
// objects a removed block forgot included.
func TestParseApplied(t *testing.T) {
	for out, want := range map[string]Applied{
		"Apply complete! Resources: 1 added, 2 changed, 3 destroyed.\n":                 {Added: 1, Changed: 2, Destroyed: 3},
		"Apply complete! Resources: 1 imported, 0 added, 0 changed, 0 destroyed.\n":     {Imported: 1},
		"x\nApply complete! Resources: 0 added, 0 changed, 0 destroyed, 1 forgotten.\n": {Forgotten: 1},
		"Destroy complete! Resources: 4 destroyed.\n":                                   {Destroyed: 4},
	} {
		got, ok := parseApplied(out)
		if !ok || got.String() != want.String() || got.Forgotten != want.Forgotten {
			t.Errorf("parseApplied(%q) = %+v, %v; want %+v", out, got, ok, want)
		}
	}
	if _, ok := parseApplied("Apply complete! Resources: 0 added, 0 changed, 0 destroyed, 1 gone.\n"); ok {
		t.Error("an unknown count was read as a summary")
	}
}

// TestScopeArgs: plan and apply pass -parallelism, -destroy and each
// -target the same way, and nothing for the zero values.
func TestScopeArgs(t *testing.T) {
	if got := scopeArgs(0, false, nil); len(got) != 0 {
		t.Errorf("zero values: %q", got)
	}
	got := strings.Join(scopeArgs(4, true, []string{"a.b", "c"}), " ")
	if want := "-parallelism=4 -destroy -target=a.b -target=c"; got != want {
		t.Errorf("scopeArgs = %q, want %q", got, want)
	}
}
