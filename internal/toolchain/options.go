package toolchain

import (
	"os"
	"path/filepath"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// CacheEnv overrides the default cache directory.
const CacheEnv = "GAUNTLET_CACHE"

// OfflineEnv, when "1", keeps Resolve from trying any download.
const OfflineEnv = "GAUNTLET_OFFLINE"

// Option configures Resolve.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	cacheDir  string
	pins      *Pins
	logger    log.Logger
	overrides map[string]string
	tools     []string
	noBuild   bool
	offline   bool
	seed      string
}

// WithCacheDir sets where binaries, sources and the provider mirror live.
// Default: $GAUNTLET_CACHE, else gauntlet/ under os.UserCacheDir().
func WithCacheDir(dir string) Option { return optionFunc(func(o *options) { o.cacheDir = dir }) }

// WithPins replaces the embedded pins. Default: DefaultPins().
func WithPins(p *Pins) Option { return optionFunc(func(o *options) { o.pins = p }) }

// WithLogger receives per-tool progress. Default: log.Discard().
func WithLogger(l log.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithBinary uses the binary at path for tool name instead of resolving
// it. It must still report the pinned version. Default: none.
func WithBinary(name, path string) Option {
	return optionFunc(func(o *options) {
		if o.overrides == nil {
			o.overrides = map[string]string{}
		}
		o.overrides[name] = path
	})
}

// WithTools limits Resolve to the named tools (the providers' tools are
// added when any provider is wanted). Default: every pinned tool outside a
// group (tools of a group, e.g. "kind-node", are resolved only by name).
func WithTools(names ...string) Option {
	return optionFunc(func(o *options) { o.tools = append(o.tools, names...) })
}

// WithoutBuild makes Resolve fail, naming the toolchain command, instead of
// building a tool that is not cached. Default: build.
func WithoutBuild() Option { return optionFunc(func(o *options) { o.noBuild = true }) }

// WithSeed imports missing tools from dir, a toolchain/ directory resolved
// from the same pins (see SeedEnv), whatever the cache: each is verified
// like a fresh build. Default: $GAUNTLET_TOOLCHAIN_SEED, for the default
// cache only.
func WithSeed(dir string) Option { return optionFunc(func(o *options) { o.seed = dir }) }

// WithOffline keeps Resolve from trying HashiCorp's releases. Default:
// offline only when $GAUNTLET_OFFLINE is "1".
func WithOffline(offline bool) Option { return optionFunc(func(o *options) { o.offline = offline }) }

func defaultOptions() *options {
	return &options{logger: log.Discard(), offline: os.Getenv(OfflineEnv) == "1"}
}

// DefaultCacheDir is the cache directory used when none is given.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gauntlet"), nil
}
