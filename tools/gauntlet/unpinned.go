package main

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/internal/unpinned"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// unpinnedEngine builds the engine spec names ("tofu@1.10.7",
// "tofu@<commit>") when no pin does, and says what it built; nil when
// spec is a path or a pinned engine, which the run resolves itself. The
// run is then given the binary by path, and its page and run.json say
// what it is (runOne).
func (f *toolchainFlags) unpinnedEngine(ctx context.Context, spec string, l log.Logger) (*unpinned.Engine, error) {
	if !isEngineSpec(spec) {
		return nil, nil
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return nil, err
	}
	_, pinErr := pins.Engine(spec)
	if pinErr == nil {
		return nil, nil
	}
	if f.offline {
		return nil, fmt.Errorf("%w; with --offline it cannot be built from the Go module proxy either", pinErr)
	}
	l.Infof("engine %s is not pinned: building it from the Go module proxy (minutes when cold; then cached)", spec)
	e, err := unpinned.Builder{Pins: pins, Lookup: unpinned.GoLookup, Options: f.options(l)}.Build(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("%w; %w", pinErr, err)
	}
	l.Infof("engine %s", e)
	return &e, nil
}
