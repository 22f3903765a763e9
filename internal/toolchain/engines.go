package toolchain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// EnginesGroup is the group of the extra engine pins: other versions of
// the two CLIs, never resolved unless named, so that a plain run or
// `gauntlet toolchain` builds only today's set.
const EnginesGroup = "engines"

// Unbuildable is what a user asking for terraform 1.12 or later is told:
// the Go module proxy does not serve the nested modules its go.mod
// replaces with local directories (internal/backend/remote-state/*, and
// oci exists at no commit), so it builds only with its source changed,
// and then it is no longer stock Terraform.
const Unbuildable = "terraform 1.12 and later cannot be built from the Go module proxy without changing its source " +
	"(its nested remote-state modules are not served at those commits, and remote-state/oci at none); " +
	"the newest buildable terraform is 1.11.4"

// EngineRef is one pinned engine: the tool that resolves it and what it is.
type EngineRef struct {
	// Tool is the pin's name ("tofu", "tofu-1.9.4").
	Tool string
	// Engine is "tofu" or "terraform".
	Engine  string
	Version string
}

// String is "tofu@1.9.4".
func (e EngineRef) String() string { return e.Engine + "@" + e.Version }

// engineOf says which CLI a pin is: the extra pins name it, the two
// default CLIs are their own name.
func engineOf(t ToolPin) string {
	if t.Engine != "" {
		return t.Engine
	}
	if t.Role != "" {
		return t.Name
	}
	return ""
}

// Engines lists every pinned engine, tofu first, each by version.
func (p *Pins) Engines() []EngineRef {
	var out []EngineRef
	for _, t := range p.Tools {
		if e := engineOf(t); e != "" {
			out = append(out, EngineRef{Tool: t.Name, Engine: e, Version: t.Version})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Engine != out[j].Engine {
			return out[i].Engine > out[j].Engine // tofu, then terraform
		}
		return versionLess(out[i].Version, out[j].Version)
	})
	return out
}

// Engine resolves "tofu@1.9.4" (or "tofu@1.9": the newest pinned patch of
// 1.9, or "tofu": the default pin) to its pin. An engine that is not
// pinned is an error listing those that are, and for terraform 1.12 or
// later one that says why it cannot be.
func (p *Pins) Engine(spec string) (EngineRef, error) {
	name, ver, _ := strings.Cut(strings.TrimSpace(spec), "@")
	var best *EngineRef
	for _, e := range p.Engines() {
		if e.Engine != name {
			continue
		}
		t, _ := p.Tool(e.Tool)
		switch {
		case ver == "" && t.Role != "",
			ver == e.Version,
			strings.Count(ver, ".") == 1 && strings.HasPrefix(e.Version, ver+"."):
			if best == nil || versionLess(best.Version, e.Version) {
				best = &e
			}
		}
	}
	if best != nil {
		return *best, nil
	}
	var have []string
	for _, e := range p.Engines() {
		have = append(have, e.String())
	}
	msg := fmt.Sprintf("engine %q is not pinned (pinned: %s)", spec, strings.Join(have, ", "))
	if maj, min := parseMajorMinor(ver); name == "terraform" && (maj > 1 || (maj == 1 && min >= 12)) {
		msg += "; " + Unbuildable
	}
	return EngineRef{}, fmt.Errorf("%s", msg)
}

func parseMajorMinor(v string) (int, int) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, 0
	}
	return a, b
}

// versionLess orders dotted numeric versions ("1.9.4" < "1.10.0").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}
