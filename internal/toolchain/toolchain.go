// Package toolchain resolves every pinned binary gauntlet runs (control
// plane, kwok, the oracle and subject CLIs, the providers) into a cache
// directory, verifies each one, and lays the providers out as a filesystem
// mirror with a CLI config that needs no network.
//
// Sources, in order: a path the caller gives (WithBinary); the cached copy;
// for tools pinned with hc_install, hashicorp/hc-install (PATH, then
// HashiCorp's releases unless offline); a build from the pinned module
// source with the pinned Go toolchain and flags. A second Resolve with a
// warm cache builds nothing.
package toolchain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Toolchain is the set of resolved binaries.
type Toolchain struct {
	// Dir is the cache directory everything lives in.
	Dir string
	// Pins are the pins the binaries were resolved against.
	Pins *Pins
	// MirrorDir is the provider filesystem mirror (empty if no provider
	// was resolved).
	MirrorDir string
	// CLIConfig is a CLI config file holding only the mirror; engines are
	// run with TF_CLI_CONFIG_FILE pointing at it.
	CLIConfig string

	bins map[string]Binary
}

// Binary is one resolved, verified binary.
type Binary struct {
	Name    string
	Version string
	Path    string
	SHA256  string
	// Origin says where it came from: "path", "cache", "hc-install", "build".
	Origin string
	// Assets are files resolved with it, by base name (kwok's stages).
	Assets map[string]string
}

// Binary returns the resolved binary for a tool, or an error that names
// the command which resolves it.
func (t *Toolchain) Binary(name string) (Binary, error) {
	b, ok := t.bins[name]
	if !ok {
		return Binary{}, fmt.Errorf("tool %s is not resolved: run `go run ./tools/gauntlet toolchain` (or toolchain.Resolve with it)", name)
	}
	return b, nil
}

// Path is Binary(name).Path, or "" when it is not resolved.
func (t *Toolchain) Path(name string) string { return t.bins[name].Path }

// Binaries lists the resolved binaries sorted by name.
func (t *Toolchain) Binaries() []Binary {
	out := make([]Binary, 0, len(t.bins))
	for _, b := range t.bins {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Resolve makes every wanted pinned tool available and verified. It is
// safe to call from several processes at once: each tool is built under a
// file lock.
func Resolve(ctx context.Context, opts ...Option) (*Toolchain, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt.apply(o)
	}
	if o.pins == nil {
		p, err := DefaultPins()
		if err != nil {
			return nil, err
		}
		o.pins = p
	}
	if o.cacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return nil, fmt.Errorf("toolchain: no cache directory (set %s): %w", CacheEnv, err)
		}
		o.cacheDir = d
	}
	dir, err := filepath.Abs(o.cacheDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "toolchain"), 0o755); err != nil {
		return nil, fmt.Errorf("toolchain: cache directory: %w", err)
	}
	names, err := wanted(o)
	if err != nil {
		return nil, err
	}
	r := &resolver{o: o, dir: dir, goos: runtime.GOOS, goarch: runtime.GOARCH}
	// The version probes of tofu read a CLI config; an empty one keeps the
	// machine's own (possibly missing) TF_CLI_CONFIG_FILE out of them.
	if r.probeConfig, err = writeFileIfChanged(filepath.Join(dir, "toolchain", "probe.tfrc"), []byte("disable_checkpoint = true\n")); err != nil {
		return nil, err
	}
	tc := &Toolchain{Dir: dir, Pins: o.pins, bins: map[string]Binary{}}
	for _, name := range names {
		start := time.Now()
		b, err := r.resolve(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("toolchain: %s: %w", name, err)
		}
		o.logger.Infof("%-30s %-8s %s (%s, %.1fs)", b.Name, b.Version, b.Path, b.Origin, time.Since(start).Seconds())
		tc.bins[name] = b
	}
	if err := r.mirror(tc); err != nil {
		return nil, fmt.Errorf("toolchain: provider mirror: %w", err)
	}
	return tc, nil
}

func wanted(o *options) ([]string, error) {
	if len(o.tools) == 0 {
		return o.pins.DefaultToolNames(), nil
	}
	want := map[string]bool{}
	for _, n := range o.tools {
		if _, ok := o.pins.Tool(n); !ok {
			return nil, fmt.Errorf("toolchain: no tool %q is pinned (pinned: %s)", n, strings.Join(o.pins.ToolNames(), ", "))
		}
		want[n] = true
	}
	var out []string
	for _, n := range o.pins.ToolNames() {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}
