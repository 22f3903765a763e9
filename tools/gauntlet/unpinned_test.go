package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// A path or a pinned engine is the run's to resolve; an engine no pin
// names is built, except offline, where the error says so and names
// what is pinned.
func TestUnpinnedEngine(t *testing.T) {
	f := toolchainFlags{offline: true}
	ctx := context.Background()
	for _, spec := range []string{"", "./bin/tofu", "/usr/local/bin/tofu", "tofu@1.12.6", "terraform@1.11.4", "tofu@1.9"} {
		if e, err := f.unpinnedEngine(ctx, spec, log.Discard()); e != nil || err != nil {
			t.Errorf("%q: built %v, %v; want it left to the run", spec, e, err)
		}
	}
	_, err := f.unpinnedEngine(ctx, "tofu@1.10.7", log.Discard())
	if err == nil || !strings.Contains(err.Error(), "is not pinned") || !strings.Contains(err.Error(), "--offline") {
		t.Errorf("offline, an engine no pin names: %v", err)
	}
}
