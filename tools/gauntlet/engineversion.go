package main

import (
	"fmt"
	"strings"

	version "github.com/hashicorp/go-version"
	"github.com/zclconf/go-cty/cty"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// versionBar is a root's `required_version` that a pinned default engine
// does not meet: every run of the root stops at that engine's init.
type versionBar struct {
	file, line, constraint string
	excludes               []string // the default engines it refuses, "tofu 1.12.6"
}

func (v versionBar) String() string {
	return fmt.Sprintf("%s: required_version %q excludes %s: each refuses the root at init, before any stage; where the root does not need an older engine, a delta removing the line runs it", v.line, v.constraint, strings.Join(v.excludes, " and "))
}

// defaultEngines are the pinned engine under test and oracle a run uses
// when none is named.
func defaultEngines() ([]toolchain.EngineRef, error) {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return nil, err
	}
	var out []toolchain.EngineRef
	for _, name := range []string{"tofu", "terraform"} {
		e, err := pins.Engine(name)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// versionBars reads the terraform blocks of the root's .tf files and
// returns each literal required_version some engine does not meet. A
// constraint that is not a literal string, or that go-version cannot
// parse, is left to the engine to judge.
func versionBars(files []rootFile, engines []toolchain.EngineRef) []versionBar {
	var bars []versionBar
	for _, f := range files {
		for _, blk := range f.body.Blocks {
			if blk.Type != "terraform" {
				continue
			}
			a, ok := blk.Body.Attributes["required_version"]
			if !ok {
				continue
			}
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() || !v.Type().Equals(cty.String) || v.IsNull() {
				continue
			}
			c, err := version.NewConstraint(v.AsString())
			if err != nil {
				continue
			}
			bar := versionBar{file: f.name, line: fmt.Sprintf("%s:%d", f.name, a.SrcRange.Start.Line), constraint: v.AsString()}
			for _, e := range engines {
				ev, err := version.NewVersion(e.Version)
				if err == nil && !c.Check(ev) {
					bar.excludes = append(bar.excludes, e.Engine+" "+e.Version)
				}
			}
			if len(bar.excludes) > 0 {
				bars = append(bars, bar)
			}
		}
	}
	return bars
}
