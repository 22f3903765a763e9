package engine

import (
	"strings"
	"testing"
)

func TestCapabilitiesFromVersion(t *testing.T) {
	for _, c := range []struct {
		name, version string
		cap           Capability
		want          bool
	}{
		{"terraform", "1.5.7", ImportBlocks, true},
		{"terraform", "1.5.7", RemovedBlocks, false},
		{"terraform", "1.9.5", RemovedBlocks, true},
		{"terraform", "1.9.5", MovedAcrossTypes, true},
		{"terraform", "1.4.6", ImportBlocks, false},
		{"tofu", "1.9.4", MovedAcrossTypes, false},
		{"tofu", "1.10.10", MovedAcrossTypes, true},
		{"tofu", "1.8.11", RemovedBlocks, true},
		{"tofu", "1.9.4", RemovedForget, false},
		{"tofu", "1.10.10", RemovedForget, true},
		{"terraform", "1.9.5", RemovedForget, true},
		{"tofu", "1.12.6", StalePlanRefusal, true},
		{"tofu", "1.12.6", LiveMode, false},
	} {
		if got := StockCapabilities(c.name, c.version)[c.cap]; got != c.want {
			t.Errorf("%s %s %s = %v, want %v", c.name, c.version, c.cap, got, c.want)
		}
	}
}

func TestNeedsNamesTheReleaseAndItsSource(t *testing.T) {
	p := Profile{Name: "terraform", Version: "1.5.7", Capabilities: StockCapabilities("terraform", "1.5.7")}
	got := p.Needs(RemovedBlocks)
	for _, want := range []string{"needs removed blocks", "since terraform 1.7.0", "CHANGELOG 1.7.0", "this is terraform 1.5.7"} {
		if !strings.Contains(got, want) {
			t.Errorf("Needs = %q, want it to contain %q", got, want)
		}
	}
	if got := (Profile{Name: "fork", Version: "0.1.0"}).Needs(LiveMode); !strings.Contains(got, "does not declare") {
		t.Errorf("an unknown engine's reason = %q", got)
	}
}

func TestEveryFactHasASource(t *testing.T) {
	for _, f := range Facts {
		if f.Source == "" || f.Since == "" || (f.Engine != "tofu" && f.Engine != "terraform") {
			t.Errorf("fact %+v: every capability names its engine, release and source", f)
		}
	}
}
