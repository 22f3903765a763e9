package gauntlet

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/corpus"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// preflight is everything checked before any cluster starts: a bad estate,
// an unknown stage, a missing or altered corpus file or an engine that is
// not there must cost seconds, not a cluster start.
type preflight struct {
	tc *toolchain.Toolchain
	// subjectTool and oracleTool are the pins the two engines came from
	// (subjectTool is empty for an engine given by path).
	subjectTool, oracleTool string
	subject                 *engine.Engine
	oracle                  *engine.Engine
	// fetched are each root's verified corpus files, by root name.
	fetched map[string][]estate.Fetched
}

func check(ctx context.Context, spec *estate.Spec, o *options) (*preflight, error) {
	if err := knownStages(spec, o.stages); err != nil {
		return nil, err
	}
	for _, id := range o.only {
		if !o.stages.Known(id) {
			return nil, fmt.Errorf("unknown stage %q (stages: %s)", id, strings.Join(o.stages.IDs(), ", "))
		}
	}
	if o.provider == nil {
		if err := substrate.Check(o.substrate); err != nil {
			return nil, err
		}
		if o.substrate == "kubeconfig" && (o.kubeconfigs[0] == "" || o.kubeconfigs[1] == "" || o.kubeconfigs[0] == o.kubeconfigs[1]) {
			return nil, fmt.Errorf("substrate kubeconfig needs two different kubeconfigs, the subject's and the oracle's")
		}
	}
	if o.enginePath != "" {
		if _, err := os.Stat(o.enginePath); err != nil {
			return nil, fmt.Errorf("engine %s: %w", o.enginePath, err)
		}
	}
	p := &preflight{}
	topts := []toolchain.Option{toolchain.WithLogger(o.logger), toolchain.WithOffline(o.offline)}
	if o.cacheDir != "" {
		topts = append(topts, toolchain.WithCacheDir(o.cacheDir))
	}
	cacheDir := o.cacheDir
	if cacheDir == "" {
		d, err := toolchain.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cacheDir = d
	}
	p.fetched = map[string][]estate.Fetched{}
	for _, rs := range spec.RootSpecs() {
		if rs.Source == nil {
			continue
		}
		f, err := corpus.Verified(cacheDir, rs.Source)
		if err != nil {
			return nil, fmt.Errorf("estate %s: %w", spec.Name, err)
		}
		p.fetched[rs.Name] = f
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return nil, err
	}
	// The roots as a run lays them out, read before any cluster starts:
	// an unpinned file, an unsupplied provider or an unset variable
	// costs seconds here instead of two cluster starts.
	work, err := os.MkdirTemp("", "gauntlet-preflight-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	notes, err := spec.Check(work, func(root string) estate.Materials {
		return materials(p.fetched[root], o.substrate, "", pins)
	})
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		o.logger.Infof("estate %s: %s", spec.Name, n)
	}
	p.oracleTool = "terraform"
	if o.oracleTool != "" {
		e, err := pins.Engine(o.oracleTool)
		if err != nil {
			return nil, fmt.Errorf("oracle: %w", err)
		}
		p.oracleTool = e.Tool
	}
	if o.enginePath == "" {
		p.subjectTool = "tofu"
		if o.subjectTool != "" {
			e, err := pins.Engine(o.subjectTool)
			if err != nil {
				return nil, fmt.Errorf("engine: %w", err)
			}
			p.subjectTool = e.Tool
		}
	}
	topts = append(topts, toolchain.WithPins(pins))
	tools := []string{p.oracleTool, "terraform-provider-kubernetes", "terraform-provider-random"}
	if o.substrate == "local" {
		tools = append(tools, local.Tools()...)
	}
	if p.subjectTool != "" && p.subjectTool != p.oracleTool {
		tools = append(tools, p.subjectTool)
	}
	tc, err := toolchain.Resolve(ctx, append(topts, toolchain.WithTools(tools...))...)
	if err != nil {
		return nil, err
	}
	p.tc = tc
	enginePath := o.enginePath
	if enginePath == "" {
		enginePath = tc.Path(p.subjectTool)
	}
	if p.subject, err = engine.New(ctx, enginePath, tc.CLIConfig); err != nil {
		return nil, err
	}
	if p.oracle, err = engine.New(ctx, tc.Path(p.oracleTool), tc.CLIConfig); err != nil {
		return nil, err
	}
	return p, nil
}

// materials are what a root is made from on one side: its verified
// files, the substrate's deltas, the pinned kubernetes provider and the
// side's kubeconfig for "${kubeconfig}" in variables.
func (p *preflight) materials(root, substrate, kubeconfig string) estate.Materials {
	return materials(p.fetched[root], substrate, kubeconfig, p.tc.Pins)
}

// materials: the kubernetes provider is the one the providers file adds
// where the root requires none; every pinned provider is one the root may
// require (each need checked against its pin).
func materials(fetched []estate.Fetched, substrate, kubeconfig string, pins *toolchain.Pins) estate.Materials {
	m := estate.Materials{Fetched: fetched, Substrate: substrate, Kubeconfig: kubeconfig}
	for _, pr := range pins.Providers {
		pin := estate.ProviderPin{Name: pr.Type, Source: pr.Namespace + "/" + pr.Type, Version: pr.Version}
		if pr.Type == "kubernetes" {
			m.Providers = append(m.Providers, pin)
		}
		m.Supplied = append(m.Supplied, pin)
	}
	return m
}

// knownStages refuses skip, findings and not_derived keys that name no stage. The
// estate package cannot ask the stages (they import it), so the loader
// takes any key and this is where a typo is caught: a finding for a stage
// that does not exist would otherwise be silently never checked.
func knownStages(spec *estate.Spec, stages *stage.Registry) error {
	for _, sec := range []struct {
		key string
		ids map[string]string
	}{{"skip", spec.Skip}, {"findings", spec.FindingWhy()}, {"not_derived", spec.NotDerived}} {
		for _, id := range slices.Sorted(maps.Keys(sec.ids)) {
			if !stages.Known(id) {
				return fmt.Errorf("estate %s: %s names unknown stage %q (stages: %s)", spec.Name, sec.key, id, strings.Join(stages.IDs(), ", "))
			}
		}
	}
	return nil
}
