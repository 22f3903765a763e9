package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// toolFlags collects repeated --tool NAME=PATH overrides.
type toolFlags map[string]string

func (t toolFlags) String() string { return fmt.Sprint(map[string]string(t)) }
func (t toolFlags) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want NAME=PATH, got %q", v)
	}
	t[name] = path
	return nil
}

// toolchainFlags are shared by every command that needs the toolchain.
type toolchainFlags struct {
	cache   string
	offline bool
	tools   toolFlags
}

// register declares --cache and --offline, and --tool when the command
// hands the toolchain binaries it did not build (toolchain, cluster up);
// a command that would ignore --tool does not take it.
func (f *toolchainFlags) register(fs *cli.FlagSet, withTool bool) {
	registerCache(fs, &f.cache)
	fs.BoolVar(&f.offline, "offline", false, "never try a download: build from the module cache and import the corpus from disk, or fail saying what is missing")
	fs.Env("offline", toolchain.OfflineEnv)
	f.tools = toolFlags{}
	if withTool {
		fs.Var(f.tools, "tool", "use the binary at PATH for the pinned tool NAME instead of building it; it must still report the pinned version (`NAME=PATH`, repeatable)")
	}
}

// registerCache declares --cache.
func registerCache(fs *cli.FlagSet, cache *string) {
	fs.StringVar(cache, "cache", "", "the toolchain and corpus cache `DIR` (default: gauntlet/ in the user cache dir, e.g. ~/.cache/gauntlet)")
	fs.Env("cache", toolchain.CacheEnv)
}

// cacheOrDefault is the --cache flag's folder, or the default cache
// (toolchain.DefaultCacheDir) when it is empty.
func cacheOrDefault(cache string) (string, error) {
	if cache != "" {
		return cache, nil
	}
	return toolchain.DefaultCacheDir()
}

// runOptions are the options the flags give gauntlet.Run: the logger,
// --offline and --cache.
func (f *toolchainFlags) runOptions(l log.Logger) []gauntlet.Option {
	opts := []gauntlet.Option{gauntlet.WithLogger(l), gauntlet.WithOffline(f.offline)}
	if f.cache != "" {
		opts = append(opts, gauntlet.WithCacheDir(f.cache))
	}
	return opts
}

func (f *toolchainFlags) options(l log.Logger, extra ...toolchain.Option) []toolchain.Option {
	opts := []toolchain.Option{toolchain.WithLogger(l), toolchain.WithOffline(f.offline)}
	if f.cache != "" {
		opts = append(opts, toolchain.WithCacheDir(f.cache))
	}
	for name, path := range f.tools {
		opts = append(opts, toolchain.WithBinary(name, path))
	}
	return append(opts, extra...)
}

func toolchainCommand() cli.Command {
	return cli.Command{
		Name:    "toolchain",
		Summary: "resolve, build and verify every pinned tool into the cache",
		Doc: "Resolves every tool pinned in third_party/pins.json - control plane, etcd, kwok, terraform, tofu, providers - into the " +
			"cache: built from their Go modules (through the Go module proxy unless --offline), each verified by its build info, version output and, " +
			"where reproducible, sha256; providers go into a filesystem mirror with a generated CLI config, so no engine call touches " +
			"a network. Cold, it takes about 25 minutes on two cores (with progress every 30 s); seconds once cached. Every other " +
			"command resolves what it needs on its own; this one warms the cache, e.g. before `go test`.",
		Examples: []cli.Example{
			{What: "the pinned toolchain (today's two engines included)", Command: "gauntlet toolchain"},
			{What: "two more pinned engines, one at a time, for a matrix", Command: "gauntlet toolchain --engines tofu@1.9.4,terraform@1.5.7"},
			{What: "only etcd, offline", Command: "gauntlet toolchain --only etcd --offline"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var tf toolchainFlags
			tf.register(fs, true)
			only := fs.String("only", "", "resolve only these tools, comma-separated `NAMES` (default: all pinned)")
			seed := fs.String("seed", "", "import tools missing from the cache from `DIR`, a toolchain/ folder resolved from the same pins (such as ~/.cache/gauntlet/toolchain), each verified like a fresh build; a tool it lacks is built")
			engines := fs.String("engines", "", "also resolve these pinned engines, comma-separated `LIST` such as tofu@1.9.4,terraform@1.5.7, or all; built one at a time; "+
				toolchain.Unbuildable)
			return func(ctx context.Context, _ []string) error { return resolveToolchain(ctx, &tf, *only, *engines, *seed) }
		},
	}
}

func resolveToolchain(ctx context.Context, tf *toolchainFlags, only, engines, seed string) error {
	l := log.New(os.Stderr)
	var extra []toolchain.Option
	if seed != "" {
		extra = append(extra, toolchain.WithSeed(seed))
	}
	if only != "" {
		extra = append(extra, toolchain.WithTools(strings.Split(only, ",")...))
	}
	if engines != "" {
		pins, err := toolchain.DefaultPins()
		if err != nil {
			return err
		}
		refs, err := engineRefs(pins, engines)
		if err != nil {
			return err
		}
		// One at a time, in the order given, each timed: an engine build
		// is minutes of both cores, and a machine that is shared should
		// not get them all at once.
		l.Infof("engines: %s", joinRefs(refs))
		for i, e := range refs {
			start := time.Now()
			tc, err := toolchain.Resolve(ctx, tf.options(l, toolchain.WithTools(e.Tool))...)
			if err != nil {
				return fmt.Errorf("engine %s: %w", e, err)
			}
			b, _ := tc.Binary(e.Tool)
			fmt.Printf("engine %d/%d %-18s %s (%s) in %s\n", i+1, len(refs), e, b.Path, b.Origin, time.Since(start).Round(100*time.Millisecond))
		}
		if only == "" {
			return nil
		}
	}
	start := time.Now()
	l.Infof("resolving the pinned toolchain (cold builds take minutes; progress every 30 s)")
	tc, err := toolchain.Resolve(ctx, tf.options(l, extra...)...)
	if err != nil {
		return err
	}
	fmt.Printf("toolchain ready in %s: %d tools in %s\n", time.Since(start).Round(100*time.Millisecond), len(tc.Binaries()), tc.Dir)
	if tc.CLIConfig != "" {
		fmt.Printf("provider mirror: %s\nCLI config:      %s\n", tc.MirrorDir, tc.CLIConfig)
	}
	return nil
}

// engineRefs resolves a comma-separated engine list ("all": every pinned
// engine) to pins, refusing duplicates.
func engineRefs(pins *toolchain.Pins, list string) ([]toolchain.EngineRef, error) {
	if strings.TrimSpace(list) == "all" {
		return pins.Engines(), nil
	}
	var out []toolchain.EngineRef
	seen := map[string]bool{}
	for _, spec := range strings.Split(list, ",") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		e, err := pins.Engine(spec)
		if err != nil {
			return nil, err
		}
		if seen[e.Tool] {
			return nil, fmt.Errorf("engine %s is named twice", e)
		}
		seen[e.Tool] = true
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no engine named in %q", list)
	}
	return out, nil
}

func joinRefs(refs []toolchain.EngineRef) string {
	var s []string
	for _, e := range refs {
		s = append(s, e.String())
	}
	return strings.Join(s, ", ")
}
