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
	if err := fs.Parse(args); err != nil {
		return err
	}
	l := log.New(os.Stderr)
	var extra []toolchain.Option
	if *only != "" {
		extra = append(extra, toolchain.WithTools(strings.Split(*only, ",")...))
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
