package toolchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	thirdparty "github.com/gauntlet-k8s/gauntlet/third_party"
	"golang.org/x/mod/modfile"
)

// Pins is the parsed third_party/pins.json: every version gauntlet runs with.
type Pins struct {
	Schema        int        `json:"schema"`
	Go            string     `json:"go"`
	Tools         []ToolPin  `json:"tools"`
	Providers     []Provider `json:"providers"`
	ProviderHosts []string   `json:"provider_hosts"`
	Kind          KindPins   `json:"kind"`
	// Docker is the engine gauntlet starts for kind when none answers.
	Docker *DockerPins `json:"docker,omitempty"`

	// files holds the tool modules' go.mod/go.sum, keyed "<dir>/tool.mod".
	files fs.FS
}

// ToolPin pins one binary and says how to obtain it.
type ToolPin struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Role is "oracle" or "subject" for the two CLIs, empty otherwise.
	Role string `json:"role,omitempty"`
	// Engine names the CLI ("tofu", "terraform") a pin of the "engines"
	// group builds: more versions of the two CLIs, resolved only when a
	// matrix or a run asks for them (see Pins.Engine).
	Engine string `json:"engine,omitempty"`
	// Group, when set, keeps the tool out of the default set: it is
	// resolved only when asked for by name ("kind-node": what only the
	// self-built kind node image carries).
	Group string `json:"group,omitempty"`
	// HCInstall lets hashicorp/hc-install look for the binary (PATH first,
	// then HashiCorp's releases when online) before building it.
	HCInstall bool `json:"hc_install,omitempty"`
	// Exactly one of Wrapper and Source says how to build the binary.
	Wrapper *WrapperBuild `json:"wrapper,omitempty"`
	Source  *SourceBuild  `json:"source,omitempty"`
	LDFlags string        `json:"ldflags"`
	// VersionArgs run the binary; VersionWant must appear in its output.
	// Providers have none: they are checked by build info and hash.
	VersionArgs []string `json:"version_args,omitempty"`
	VersionWant string   `json:"version_want,omitempty"`
	// SHA256, when set, is the exact binary: the build is reproducible.
	SHA256 string `json:"sha256,omitempty"`
}

// WrapperBuild builds Package inside the tool module third_party/tools/<Dir>.
type WrapperBuild struct {
	Dir string `json:"dir"`
	// Module is the module the tool comes from; tool.mod requires it at
	// the pinned version, and the binary's build info must say so.
	Module  string `json:"module,omitempty"`
	Package string `json:"package"`
	// Main names a main package gauntlet writes itself ("etcd"), for
	// modules that publish no buildable main.
	Main string `json:"main,omitempty"`
	// MainFile is a main package stored in the tool module's directory
	// (tools/<dir>/<main_file>, never named *.go so that it is not a
	// package of this module): CoreDNS with the plugins kubeadm's Corefile
	// uses, or a program with no upstream module at all (pause), whose
	// Module is then empty and whose build info must name the tool module.
	MainFile string `json:"main_file,omitempty"`
	// MainGo makes the Go files of tools/<dir> (tests aside) the main
	// package: a program of gauntlet's own that is also a package of this
	// module, so vet and its unit tests cover it (gauntlet-mutant). Like a
	// main_file program with no Module, its build info must name the tool
	// module.
	MainGo bool `json:"main_go,omitempty"`
	// Assets are files copied from AssetsModule (as the tool module
	// resolves it) next to the binary, e.g. kwok's stage configs.
	AssetsModule string   `json:"assets_module,omitempty"`
	Assets       []string `json:"assets,omitempty"`
}

// SourceBuild builds a module downloaded whole as the main module, so its
// own replace and godebug lines apply (go install refuses such modules).
type SourceBuild struct {
	Module  string `json:"module"`
	Version string `json:"version"`
	Package string `json:"package"`
	// Go is the toolchain the module's own release uses.
	Go string `json:"go"`
	// Nested maps a directory inside the module to the pseudo-version of
	// the nested module that lives there; module zips leave them out.
	Nested map[string]string `json:"nested,omitempty"`
}

// Provider is a Terraform provider laid out in the filesystem mirror.
type Provider struct {
	Namespace string `json:"namespace"`
	Type      string `json:"type"`
	Version   string `json:"version"`
	Tool      string `json:"tool"`
}

// KindPins pins kind and its node images by digest.
type KindPins struct {
	Version    string      `json:"version"`
	NodeImages []NodeImage `json:"node_images"`
	// NodeBuild is what the node image marked Build is built from.
	NodeBuild *NodeBuild `json:"node_build,omitempty"`
}

// NodeImage is one kind node image, always "name:tag@sha256:digest".
type NodeImage struct {
	Kubernetes string `json:"kubernetes"`
	Image      string `json:"image"`
	// Build marks the image gauntlet builds itself from Kind.NodeBuild
	// (go run ./tools/gauntlet kind node-image). Its digest is the sha256
	// of its image config, which Docker reports as the image ID.
	Build bool `json:"build,omitempty"`
}

// NodeBuild pins everything a self-built kind node image is made of.
type NodeBuild struct {
	// Repository names the node image, tagged with Kubernetes.
	Repository string `json:"repository"`
	Kubernetes string `json:"kubernetes"`
	// ImageRepository names the images preloaded in the node (kubeadm's
	// imageRepository). Both names use a reserved domain no registry
	// serves, so a missing image fails instead of being pulled.
	ImageRepository string `json:"image_repository"`
	// Epoch (RFC 3339) is SOURCE_DATE_EPOCH: every timestamp in the image.
	Epoch  string     `json:"epoch"`
	Debian DebianPins `json:"debian"`
	// Binaries are tools installed into the node's /usr/bin.
	Binaries []string `json:"binaries"`
	// Images are single-layer images of pinned tools, preloaded into the
	// node's containerd.
	Images []ImagePin `json:"images"`
}

// DebianPins is the node's root filesystem: debootstrap of a suite.
type DebianPins struct {
	Suite   string `json:"suite"`
	Variant string `json:"variant"`
	// Debootstrap is the version of Debian's debootstrap package used.
	Debootstrap string `json:"debootstrap"`
	// Packages are what debootstrap includes beyond the variant.
	Packages []string `json:"packages"`
	// Locked is the exact package set ("name=version", sorted) a build
	// must find; a suite that moved fails the build instead of silently
	// producing another image.
	Locked []string `json:"locked"`
}

// ImagePin is one image preloaded into the node: a pinned tool's binary.
type ImagePin struct {
	Name string `json:"name"`
	Tag  string `json:"tag"`
	Tool string `json:"tool"`
}

// DockerPins are the Debian packages of the Docker engine gauntlet
// starts when no engine answers: downloaded and extracted into the cache,
// never installed.
type DockerPins struct {
	Suite string `json:"suite"`
	// Packages are exact, "name=version".
	Packages []string `json:"packages"`
}

// DefaultPins returns the pins embedded from third_party/pins.json.
func DefaultPins() (*Pins, error) {
	b, err := fs.ReadFile(thirdparty.Files, "pins.json")
	if err != nil {
		return nil, fmt.Errorf("read embedded pins: %w", err)
	}
	sub, err := fs.Sub(thirdparty.Files, "tools")
	if err != nil {
		return nil, fmt.Errorf("embedded tool modules: %w", err)
	}
	return ParsePins(b, sub)
}

// ParsePins parses and validates a pins file. tools holds the tool modules
// (<dir>/tool.mod and <dir>/tool.sum) the wrapper builds refer to.
func ParsePins(b []byte, tools fs.FS) (*Pins, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Pins
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("pins: %w (the format is documented in third_party/README.md)", err)
	}
	p.files = tools
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("pins: %w (the format is documented in third_party/README.md)", err)
	}
	return &p, nil
}

var (
	goVersionRE = regexp.MustCompile(`^go1\.\d+\.\d+$`)
	digestRE    = regexp.MustCompile(`^[^@\s]+:[^@\s]+@sha256:[0-9a-f]{64}$`)
	sha256RE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func (p *Pins) validate() error {
	if p.Schema != 1 {
		return fmt.Errorf("schema %d: this gauntlet reads schema 1", p.Schema)
	}
	if !goVersionRE.MatchString(p.Go) {
		return fmt.Errorf("go %q: want a toolchain name like go1.26.8", p.Go)
	}
	seen := map[string]bool{}
	for i, t := range p.Tools {
		if t.Name == "" || t.Version == "" {
			return fmt.Errorf("tools[%d]: name and version are required", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %s: pinned twice", t.Name)
		}
		seen[t.Name] = true
		if (t.Wrapper == nil) == (t.Source == nil) {
			return fmt.Errorf("tool %s: exactly one of wrapper and source is required", t.Name)
		}
		if t.SHA256 != "" && !sha256RE.MatchString(t.SHA256) {
			return fmt.Errorf("tool %s: sha256 %q is not 64 lowercase hex digits", t.Name, t.SHA256)
		}
		if (len(t.VersionArgs) == 0) != (t.VersionWant == "") {
			return fmt.Errorf("tool %s: version_args and version_want go together", t.Name)
		}
		if len(t.VersionArgs) == 0 && !isProvider(p, t.Name) {
			return fmt.Errorf("tool %s: only providers may omit version_args", t.Name)
		}
		if w := t.Wrapper; w != nil {
			if w.Dir == "" || w.Package == "" || (w.Module == "" && w.MainFile == "" && !w.MainGo) {
				return fmt.Errorf("tool %s: wrapper needs dir, module and package (module may be left out only with main_file or main_go)", t.Name)
			}
			for _, f := range []string{"tool.mod", "tool.sum"} {
				if _, err := fs.Stat(p.files, w.Dir+"/"+f); err != nil {
					return fmt.Errorf("tool %s: tool module %s/%s: %w", t.Name, w.Dir, f, err)
				}
			}
			if err := p.validateMainGo(t); err != nil {
				return fmt.Errorf("tool %s: %w", t.Name, err)
			}
			if w.Module != "" {
				if _, err := p.wrapperRequire(t); err != nil {
					return fmt.Errorf("tool %s: %w", t.Name, err)
				}
			}
			if w.Main != "" && mainSources[w.Main] == "" {
				return fmt.Errorf("tool %s: unknown built-in main %q", t.Name, w.Main)
			}
			if err := p.validateMainFile(t); err != nil {
				return fmt.Errorf("tool %s: %w", t.Name, err)
			}

		}
		if (t.Group == EnginesGroup) != (t.Engine != "") {
			return fmt.Errorf("tool %s: engine and group %q go together", t.Name, EnginesGroup)
		}
		if s := t.Source; s != nil {
			if s.Module == "" || s.Version == "" || s.Package == "" || !goVersionRE.MatchString(s.Go) {
				return fmt.Errorf("tool %s: source needs module, version, package and a go toolchain like go1.23.3", t.Name)
			}
		}
	}
	for _, pr := range p.Providers {
		if !seen[pr.Tool] {
			return fmt.Errorf("provider %s/%s: tool %q is not pinned", pr.Namespace, pr.Type, pr.Tool)
		}
	}
	if len(p.Providers) > 0 && len(p.ProviderHosts) == 0 {
		return fmt.Errorf("provider_hosts: at least one registry host is needed for the mirror")
	}
	for _, img := range p.Kind.NodeImages {
		if !digestRE.MatchString(img.Image) {
			return fmt.Errorf("kind node image %q: must be pinned as name:tag@sha256:<digest>", img.Image)
		}
	}
	if err := p.validateNodeBuild(); err != nil {
		return err
	}
	return p.validateDocker()
}

func isProvider(p *Pins, tool string) bool {
	for _, pr := range p.Providers {
		if pr.Tool == tool {
			return true
		}
	}
	return false
}

// Tool returns the pin named name.
func (p *Pins) Tool(name string) (ToolPin, bool) {
	for _, t := range p.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolPin{}, false
}

// ToolNames lists every pinned tool in pins order.
func (p *Pins) ToolNames() []string {
	names := make([]string, 0, len(p.Tools))
	for _, t := range p.Tools {
		names = append(names, t.Name)
	}
	return names
}

// NodeImage returns the pinned kind node image for a Kubernetes version
// ("v1.37.0"), or the first pinned image when version is empty.
func (p *Pins) NodeImage(version string) (string, error) {
	for _, img := range p.Kind.NodeImages {
		if version == "" || img.Kubernetes == version {
			return img.Image, nil
		}
	}
	var have []string
	for _, img := range p.Kind.NodeImages {
		have = append(have, img.Kubernetes)
	}
	return "", fmt.Errorf("no kind node image pinned for Kubernetes %q (pinned: %s)", version, strings.Join(have, ", "))
}

// key is a short digest of everything that decides a tool's bytes: its pin,
// its tool module and the Go toolchain. A change to any of them means a new
// cache entry, so a pin bump can never be served a stale binary.
func (p *Pins) key(t ToolPin, goos, goarch string) string {
	h := sha256.New()
	j, _ := json.Marshal(t)
	h.Write(j)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s", p.Go, goos, goarch)
	if w := t.Wrapper; w != nil {
		for _, f := range []string{"tool.mod", "tool.sum"} {
			b, _ := fs.ReadFile(p.files, w.Dir+"/"+f)
			h.Write(b)
		}
		h.Write([]byte(mainSources[w.Main]))
		if w.MainFile != "" {
			b, _ := fs.ReadFile(p.files, w.Dir+"/"+w.MainFile)
			h.Write(b)
		}
		if w.MainGo {
			names, _ := p.mainGoFiles(t)
			for _, n := range names {
				b, _ := fs.ReadFile(p.files, w.Dir+"/"+n)
				fmt.Fprintf(h, "\x00%s\x00", n)
				h.Write(b)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// mainSources are the main packages gauntlet writes for wrapper modules
// whose upstream publishes no buildable main package.
var mainSources = map[string]string{
	"etcd": `// Code written by gauntlet's toolchain: etcd's own main lives in a module
// with local replace directives, so the server is started from etcdmain.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
`,
}

// wrapperRequire returns the version at which a tool module requires the
// module its tool is built from.
func (p *Pins) wrapperRequire(t ToolPin) (string, error) {
	path := t.Wrapper.Dir + "/tool.mod"
	raw, err := fs.ReadFile(p.files, path)
	if err != nil {
		return "", err
	}
	mf, err := modfile.ParseLax(path, raw, nil)
	if err != nil {
		return "", err
	}
	for _, r := range mf.Require {
		if r.Mod.Path == t.Wrapper.Module {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", path, t.Wrapper.Module)
}

// toolModulePath is the module path a tool module declares.
func (p *Pins) toolModulePath(t ToolPin) (string, error) {
	path := t.Wrapper.Dir + "/tool.mod"
	raw, err := fs.ReadFile(p.files, path)
	if err != nil {
		return "", err
	}
	if mp := modfile.ModulePath(raw); mp != "" {
		return mp, nil
	}
	return "", fmt.Errorf("%s declares no module", path)
}
