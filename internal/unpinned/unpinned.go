// Package unpinned builds an engine version no pin names - any release
// of OpenTofu or Terraform the Go module proxy serves, or a commit as
// its pseudo-version - the way the pinned ones are built: the module
// downloaded whole (the go command checks it against the checksum
// database), compiled with the Go toolchain its source names, into the
// toolchain cache. What was built is said in full (module, version, the
// module's go.sum hash, the Go toolchain, the binary's sha256) so that a
// run of it can say exactly which engine it ran.
//
// It is the CLI's, not the run's: a run is given the built binary by path
// (gauntlet.WithEngine), so nothing here is in a recorded proof's code.
package unpinned

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// family is how one CLI is built from its module.
type family struct {
	Engine  string
	Module  string
	Package string
	// ldflags are the pinned builds' flags for a version.
	ldflags func(version string) string
}

// families are the two CLIs, by engine name.
var families = map[string]family{
	"tofu": {Engine: "tofu", Module: "github.com/opentofu/opentofu", Package: "./cmd/tofu",
		ldflags: func(string) string { return "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'" }},
	"terraform": {Engine: "terraform", Module: "github.com/hashicorp/terraform", Package: ".",
		ldflags: func(v string) string {
			return "-w -s -X 'github.com/hashicorp/terraform/version.Version=" + v + "' -X 'github.com/hashicorp/terraform/version.Prerelease='"
		}},
}

// familyOf returns the family of an engine name ("tofu", "terraform").
func familyOf(engine string) (family, error) {
	f, ok := families[engine]
	if !ok {
		return family{}, fmt.Errorf("engine %q: unpinned builds are of tofu or terraform", engine)
	}
	return f, nil
}

// Engine is what was built.
type Engine struct {
	Engine string `json:"engine"`
	// Version is the release ("1.10.7"), or the pseudo-version of a commit.
	Version string `json:"version"`
	Module  string `json:"module"`
	// ModuleVersion is the module's version as the proxy serves it
	// ("v1.10.7", "v1.11.0-0.20250101000000-abcdef123456").
	ModuleVersion string `json:"module_version"`
	// Sum is the module's hash as go.sum records it (h1:...).
	Sum    string `json:"sum"`
	Go     string `json:"go"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// String says what the binary is, for a page and a log.
func (e Engine) String() string {
	return fmt.Sprintf("%s %s, unpinned: built from the Go module proxy's %s %s (%s) with %s; binary sha256 %s",
		e.Engine, e.Version, e.Module, e.ModuleVersion, e.Sum, e.Go, e.SHA256)
}

// Lookup asks the go command what the proxy serves of module at version
// (a release, a tag or a commit): its canonical version, go.sum hash and
// unpacked directory. Swapped in tests.
type Lookup func(ctx context.Context, mod, version string) (Module, error)

// Module is one module version as the go command downloaded it.
type Module struct {
	Version, Sum, Dir string
}

// GoLookup is the real Lookup: `go mod download -json module@version`
// outside any module, with the machine's GOPROXY and checksum database.
func GoLookup(ctx context.Context, mod, version string) (Module, error) {
	out, err := goOutsideModule(ctx, "mod", "download", "-json", mod+"@"+version)
	var m struct{ Version, Sum, Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil && err == nil {
		return Module{}, fmt.Errorf("go mod download %s@%s: %w", mod, version, jerr)
	}
	if m.Error != "" {
		return Module{}, fmt.Errorf("%s@%s: %s", mod, version, m.Error)
	}
	if err != nil {
		return Module{}, err
	}
	return Module{Version: m.Version, Sum: m.Sum, Dir: m.Dir}, nil
}

// GoInfo is GoLookup without the download: `go list -m -json
// module@version`, the version's .info and .mod only (Dir and Sum are
// empty). Releases asks it.
func GoInfo(ctx context.Context, mod, version string) (Module, error) {
	out, err := goOutsideModule(ctx, "list", "-m", "-json", mod+"@"+version)
	if err != nil {
		return Module{}, err
	}
	var m struct{ Version string }
	if err := json.Unmarshal(out, &m); err != nil {
		return Module{}, fmt.Errorf("go list -m %s@%s: %w", mod, version, err)
	}
	return Module{Version: m.Version}, nil
}

// goOutsideModule runs the go command in an empty directory, so no
// module or workspace of the caller's applies; it returns stdout, and an
// error carrying stderr.
func goOutsideModule(ctx context.Context, args ...string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "gauntlet-unpinned-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GO111MODULE=on")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return out, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// Builder builds unpinned engines into a toolchain cache.
type Builder struct {
	Pins *toolchain.Pins
	// Lookup downloads a version (Plan, Build); Info only asks whether
	// it is served (Releases), Lookup when nil.
	Lookup, Info Lookup
	// Options are passed to toolchain.Resolve (cache directory, logger,
	// offline).
	Options []toolchain.Option
}

// Plan resolves spec ("tofu@1.10.7", "tofu@v1.10.7", "tofu@<commit>") to
// the pin an unpinned build uses, without building it: the version the
// proxy serves, its hash, and the Go toolchain its source names.
func (b Builder) Plan(ctx context.Context, spec string) (toolchain.ToolPin, Engine, error) {
	name, ver, ok := strings.Cut(strings.TrimSpace(spec), "@")
	if !ok || ver == "" {
		return toolchain.ToolPin{}, Engine{}, fmt.Errorf("engine %q: want ENGINE@VERSION, such as tofu@1.10.7 or tofu@<commit>", spec)
	}
	fam, err := familyOf(name)
	if err != nil {
		return toolchain.ToolPin{}, Engine{}, err
	}
	query := ver
	if isRelease(ver) {
		query = "v" + strings.TrimPrefix(ver, "v")
	}
	m, err := b.Lookup(ctx, fam.Module, query)
	if err != nil {
		return toolchain.ToolPin{}, Engine{}, fmt.Errorf("engine %s: the Go module proxy does not serve it: %w", spec, err)
	}
	goVer, err := sourceGo(m.Dir)
	if err != nil {
		return toolchain.ToolPin{}, Engine{}, fmt.Errorf("engine %s: %w", spec, err)
	}
	if nested, err := localReplaces(m.Dir); err != nil {
		return toolchain.ToolPin{}, Engine{}, fmt.Errorf("engine %s: %w", spec, err)
	} else if len(nested) > 0 {
		return toolchain.ToolPin{}, Engine{}, fmt.Errorf("engine %s: its go.mod replaces %d modules with its own folders (%s), which the proxy serves "+
			"only as separate modules at versions go.mod does not name; pin it in third_party/pins.json with their versions "+
			"(as terraform-1.9.5 is) instead", spec, len(nested), strings.Join(nested, ", "))
	}
	version := strings.TrimPrefix(m.Version, "v")
	want := `"terraform_version"`
	if !module.IsPseudoVersion(m.Version) {
		want = `"terraform_version": "` + version + `"`
	}
	pin := toolchain.ToolPin{
		Name: name + "-unpinned-" + version, Version: version, Engine: name, Group: toolchain.EnginesGroup,
		Source:  &toolchain.SourceBuild{Module: fam.Module, Version: m.Version, Package: fam.Package, Go: goVer},
		LDFlags: fam.ldflags(version), VersionArgs: []string{"version", "-json"}, VersionWant: want,
	}
	return pin, Engine{Engine: name, Version: version, Module: fam.Module, ModuleVersion: m.Version, Sum: m.Sum, Go: goVer}, nil
}

// Build builds spec (see Plan) into the toolchain cache, or finds it
// there, and says what it is.
func (b Builder) Build(ctx context.Context, spec string) (Engine, error) {
	pin, e, err := b.Plan(ctx, spec)
	if err != nil {
		return Engine{}, err
	}
	pins := *b.Pins
	pins.Tools = append(slices.Clone(b.Pins.Tools), pin)
	tc, err := toolchain.Resolve(ctx, append(slices.Clone(b.Options), toolchain.WithPins(&pins), toolchain.WithTools(pin.Name))...)
	if err != nil {
		return Engine{}, fmt.Errorf("engine %s: %w", spec, err)
	}
	// The toolchain hashed the binary as it built or verified it.
	bin, err := tc.Binary(pin.Name)
	if err != nil {
		return Engine{}, err
	}
	e.Path, e.SHA256 = bin.Path, bin.SHA256
	return e, nil
}

// missesEnd is how many patch releases in a row the proxy must not serve
// before Releases takes a minor version as ended: a proxy may refuse one
// version of a series (this machine's refuses tofu 1.10.1) and serve the
// next.
const missesEnd = 3

// Releases lists the releases of engine's family from..to (both
// included, either order) that the proxy serves, found by asking for
// each patch of each minor version in turn until missesEnd in a row are
// not served. Prereleases are left out. A lookup per release (Info,
// a second or so each).
func (b Builder) Releases(ctx context.Context, engine, from, to string) ([]string, error) {
	fam, err := familyOf(engine)
	if err != nil {
		return nil, err
	}
	lo, hi := "v"+strings.TrimPrefix(from, "v"), "v"+strings.TrimPrefix(to, "v")
	if !isRelease(from) || !isRelease(to) {
		return nil, fmt.Errorf("releases between %s and %s: both must be releases like 1.9.4", from, to)
	}
	if semver.Compare(lo, hi) > 0 {
		lo, hi = hi, lo
	}
	var out []string
	for minor := minorOf(lo); semver.Compare(minor+".0", hi) <= 0; minor = nextMinor(minor) {
		for patch, misses := 0, 0; misses < missesEnd; patch++ {
			v := fmt.Sprintf("%s.%d", minor, patch)
			if semver.Compare(v, hi) > 0 {
				break
			}
			if semver.Compare(v, lo) < 0 {
				continue
			}
			if _, err := b.info()(ctx, fam.Module, v); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				misses++
				continue
			}
			misses = 0
			out = append(out, strings.TrimPrefix(v, "v"))
		}
	}
	return out, nil
}

func (b Builder) info() Lookup {
	if b.Info != nil {
		return b.Info
	}
	return b.Lookup
}

var (
	releaseRE   = regexp.MustCompile(`^v?\d+\.\d+\.\d+$`)
	goVersionRE = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
)

func isRelease(v string) bool { return releaseRE.MatchString(v) }

func minorOf(v string) string { return semver.MajorMinor(v) }

func nextMinor(mm string) string {
	var maj, min int
	fmt.Sscanf(mm, "v%d.%d", &maj, &min)
	return fmt.Sprintf("v%d.%d", maj, min+1)
}

// sourceGo is the Go toolchain a source tree names: its .go-version
// (what the project's own release builds use), else go.mod's toolchain
// line, else its go line when that names a patch release.
func sourceGo(dir string) (string, error) {
	if b, err := os.ReadFile(filepath.Join(dir, ".go-version")); err == nil {
		v := strings.TrimSpace(string(b))
		if goVersionRE.MatchString(v) {
			return "go" + v, nil
		}
		return "", fmt.Errorf(".go-version says %q: want a release like 1.24.13", v)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax("go.mod", raw, nil)
	if err != nil {
		return "", fmt.Errorf("go.mod: %w", err)
	}
	if f.Toolchain != nil {
		return f.Toolchain.Name, nil
	}
	if f.Go != nil && strings.Count(f.Go.Version, ".") == 2 {
		return "go" + f.Go.Version, nil
	}
	return "", fmt.Errorf("neither .go-version nor go.mod names a Go release to build it with")
}

// localReplaces lists the modules go.mod replaces with folders of its own
// tree.
func localReplaces(dir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse("go.mod", raw, nil)
	if err != nil {
		return nil, fmt.Errorf("go.mod: %w", err)
	}
	var out []string
	for _, r := range f.Replace {
		if r.New.Version == "" && strings.HasPrefix(r.New.Path, ".") {
			out = append(out, r.Old.Path)
		}
	}
	return out, nil
}
