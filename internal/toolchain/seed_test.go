package toolchain_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// seedOf lays a resolved tool out as a seed: <tool>/<version-key>/<binary>.
func seedOf(t *testing.T, b toolchain.Binary, content []byte) string {
	t.Helper()
	seed := t.TempDir()
	dir := filepath.Join(seed, b.Name, filepath.Base(filepath.Dir(b.Path)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if content == nil {
		var err error
		if content, err = os.ReadFile(b.Path); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, b.Name), content, 0o555); err != nil {
		t.Fatal(err)
	}
	return seed
}

const seeded = "terraform-provider-random"

// TestSeedFillsTheDefaultCache: an empty default cache takes a tool from
// the seed, verified and stamped, without building.
func TestSeedFillsTheDefaultCache(t *testing.T) {
	b, _ := testenv.Toolchain(t, seeded).Binary(seeded)
	cache := t.TempDir()
	t.Setenv(toolchain.CacheEnv, cache)
	t.Setenv(toolchain.SeedEnv, seedOf(t, b, nil))
	tc, err := toolchain.Resolve(context.Background(), toolchain.WithTools(seeded), toolchain.WithoutBuild(), toolchain.WithOffline(true))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tc.Binary(seeded)
	if !strings.HasPrefix(got.Path, cache) || got.SHA256 != b.SHA256 {
		t.Fatalf("resolved %s (sha256 %s), want a copy in %s with sha256 %s", got.Path, got.SHA256, cache, b.SHA256)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(got.Path), "stamp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Origin string }
	if err := json.Unmarshal(raw, &st); err != nil || st.Origin != "seed" {
		t.Errorf("stamp %s: want origin seed", raw)
	}
}

// TestSeedIsNotUsedForAGivenCache: an explicit cache directory is used as
// given, so a missing tool still names the toolchain command.
func TestSeedIsNotUsedForAGivenCache(t *testing.T) {
	b, _ := testenv.Toolchain(t, seeded).Binary(seeded)
	t.Setenv(toolchain.SeedEnv, seedOf(t, b, nil))
	_, err := toolchain.Resolve(context.Background(), toolchain.WithCacheDir(t.TempDir()), toolchain.WithTools(seeded),
		toolchain.WithoutBuild(), toolchain.WithOffline(true))
	if err == nil || !strings.Contains(err.Error(), "go run ./tools/gauntlet toolchain") {
		t.Fatalf("want the not-in-cache error, got %v", err)
	}
}

// TestTamperedSeedIsRejected: a seed binary that is not the pinned build
// fails loudly instead of being cached.
func TestTamperedSeedIsRejected(t *testing.T) {
	b, _ := testenv.Toolchain(t, seeded).Binary(seeded)
	t.Setenv(toolchain.CacheEnv, t.TempDir())
	t.Setenv(toolchain.SeedEnv, seedOf(t, b, []byte("#!/bin/sh\n")))
	_, err := toolchain.Resolve(context.Background(), toolchain.WithTools(seeded), toolchain.WithoutBuild(), toolchain.WithOffline(true))
	if err == nil || !strings.Contains(err.Error(), "seed") {
		t.Fatalf("a tampered seed was accepted (err %v)", err)
	}
}

// TestWithSeedFillsAnyCache: WithSeed imports into a cache that is not the
// default one (Bazel's toolchain repository seeded from the machine's
// cache), verified and stamped, without building.
func TestWithSeedFillsAnyCache(t *testing.T) {
	b, _ := testenv.Toolchain(t, seeded).Binary(seeded)
	cache := t.TempDir()
	tc, err := toolchain.Resolve(context.Background(), toolchain.WithCacheDir(cache), toolchain.WithSeed(seedOf(t, b, nil)),
		toolchain.WithTools(seeded), toolchain.WithoutBuild(), toolchain.WithOffline(true))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tc.Binary(seeded)
	if !strings.HasPrefix(got.Path, cache) || got.SHA256 != b.SHA256 {
		t.Fatalf("resolved %s (sha256 %s), want a copy in %s with sha256 %s", got.Path, got.SHA256, cache, b.SHA256)
	}
	// Without it, the same cache and no build: nothing to resolve from.
	if _, err := toolchain.Resolve(context.Background(), toolchain.WithCacheDir(t.TempDir()),
		toolchain.WithTools(seeded), toolchain.WithoutBuild(), toolchain.WithOffline(true)); err == nil {
		t.Error("an empty cache with no seed resolved without building")
	}
}
