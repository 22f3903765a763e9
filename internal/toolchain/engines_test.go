package toolchain

import (
	"slices"
	"strings"
	"testing"
)

func TestEnginePinsAreOnDemand(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	def := p.DefaultToolNames()
	for _, e := range p.Engines() {
		if in := slices.Contains(def, e.Tool); in != (e.Tool == "tofu" || e.Tool == "terraform") {
			t.Errorf("%s (%s): in the default set = %v; only today's two CLIs are", e, e.Tool, in)
		}
	}
	if len(p.Engines()) < 8 {
		t.Errorf("pinned engines: %v, want at least 8", p.Engines())
	}
}

func TestEngineSpec(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"tofu":             "tofu@1.12.6",
		"terraform":        "terraform@1.11.4",
		"tofu@1.9":         "tofu@1.9.4",
		"tofu@1.12.6":      "tofu@1.12.6",
		"terraform@1.5.7":  "terraform@1.5.7",
		" terraform@1.9.5": "terraform@1.9.5",
	} {
		e, err := p.Engine(spec)
		if err != nil || e.String() != want {
			t.Errorf("Engine(%q) = %v, %v; want %s", spec, e, err, want)
		}
	}
	_, err = p.Engine("terraform@1.13.3")
	if err == nil || !strings.Contains(err.Error(), Unbuildable) {
		t.Errorf("terraform 1.13: %v, want the reason it cannot be built", err)
	}
	if _, err := p.Engine("tofu@1.7.10"); err == nil || strings.Contains(err.Error(), Unbuildable) || !strings.Contains(err.Error(), "tofu@1.8.11") {
		t.Errorf("tofu 1.7: %v, want the pinned list", err)
	}
	if !versionLess("1.9.4", "1.10.0") || versionLess("1.10.0", "1.9.4") {
		t.Error("versionLess must compare numerically")
	}
}
