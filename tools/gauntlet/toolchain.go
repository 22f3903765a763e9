package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
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

func (f *toolchainFlags) register(fs *flag.FlagSet) {
	f.tools = toolFlags{}
	fs.StringVar(&f.cache, "cache", "", "cache directory (default $"+toolchain.CacheEnv+", else gauntlet/ in the user cache dir)")
	fs.BoolVar(&f.offline, "offline", os.Getenv(toolchain.OfflineEnv) == "1", "never try a download (default from $"+toolchain.OfflineEnv+")")
	fs.Var(f.tools, "tool", "use this binary for a pinned tool, NAME=PATH (repeatable)")
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

func runToolchain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("toolchain", flag.ContinueOnError)
	var tf toolchainFlags
	tf.register(fs)
	only := fs.String("only", "", "comma-separated tools to resolve (default: all pinned)")
	engines := fs.String("engines", "", "comma-separated engines to resolve, e.g. tofu@1.9.4,terraform@1.5.7 (built one at a time; `all` for every pinned engine); "+
		toolchain.Unbuildable)
	if err := fs.Parse(args); err != nil {
		return err
	}
	l := log.New(os.Stderr)
	var extra []toolchain.Option
	if *only != "" {
		extra = append(extra, toolchain.WithTools(strings.Split(*only, ",")...))
	}
	if *engines != "" {
		pins, err := toolchain.DefaultPins()
		if err != nil {
			return err
		}
		refs, err := engineRefs(pins, *engines)
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
		if *only == "" {
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
