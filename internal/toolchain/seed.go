package toolchain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SeedEnv names a read-only directory of tools already resolved from the
// same pins, laid out <tool>/<version-key>/<binary and assets> like the
// cache's toolchain/ directory. When it is set and Resolve uses the default
// cache (DefaultCacheDir), a tool missing from the cache is copied in from
// the seed and verified like a fresh build, instead of being built. Bazel
// tests get their toolchain this way (bazel/defs.bzl): the seed is a test
// input, the cache a per-test scratch directory. A relative path is taken
// from the working directory.
const SeedEnv = "GAUNTLET_TOOLCHAIN_SEED"

// seedDir is the seed for this resolution, or "" when there is none: the
// one WithSeed gives, else $GAUNTLET_TOOLCHAIN_SEED for the default cache.
func (r *resolver) seedDir() (string, error) {
	if r.o.seed != "" {
		return filepath.Abs(r.o.seed)
	}
	d := os.Getenv(SeedEnv)
	if d == "" {
		return "", nil
	}
	if def, err := DefaultCacheDir(); err != nil || def != r.dir {
		return "", nil
	}
	return filepath.Abs(d)
}

// fromSeed fills entry from the seed and stamps it after verifying it (pin
// sha256, build info, version), reporting whether it did. A seed without
// the entry (made from other pins) is not an error; a seed entry that fails
// verification is.
func (r *resolver) fromSeed(ctx context.Context, pin ToolPin, entry, bin string) (bool, error) {
	seed, err := r.seedDir()
	if err != nil || seed == "" {
		return false, err
	}
	src := filepath.Join(seed, pin.Name, filepath.Base(entry))
	files, err := os.ReadDir(src)
	if errors.Is(err, os.ErrNotExist) {
		r.o.logger.Infof("%s %s: not in the seed %s (made from other pins?)", pin.Name, pin.Version, seed)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("seed: %w", err)
	}
	var assets map[string]string
	for _, f := range files {
		if f.IsDir() || f.Name() == pin.Name {
			continue
		}
		dst := filepath.Join(entry, f.Name())
		if err := copyFile(filepath.Join(src, f.Name()), dst, 0o644); err != nil {
			return false, fmt.Errorf("seed asset: %w", err)
		}
		if assets == nil {
			assets = map[string]string{}
		}
		assets[f.Name()] = dst
	}
	tmp := bin + ".seed.tmp"
	if err := copyFile(filepath.Join(src, pin.Name), tmp, 0o755); err != nil {
		return false, fmt.Errorf("seed: %w", err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return false, err
	}
	if _, err := r.record(ctx, pin, entry, bin, "seed", assets); err != nil {
		return false, fmt.Errorf("seed %s: %w", src, err)
	}
	r.o.logger.Infof("%s %s: imported from the seed %s", pin.Name, pin.Version, seed)
	return true, nil
}
