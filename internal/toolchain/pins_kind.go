package toolchain

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"
)

// GroupKindNode is the tool group only the self-built kind node image
// needs; the default toolchain leaves it out.
const GroupKindNode = "kind-node"

var (
	k8sVersionRE = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	repoRE       = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)
	tagRE        = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	debPinRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+=[A-Za-z0-9.+~:-]+$`)
	debNameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
)

// nodeImagesNeeded are the images kubeadm and the node's containerd ask
// for; a node image without any of them cannot come up offline.
var nodeImagesNeeded = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd", "coredns", "pause"}

// nodeBinariesNeeded are what kind runs inside every node.
var nodeBinariesNeeded = []string{"kubelet", "kubeadm", "kubectl"}

// validateMainFile checks a wrapper's main_file: present in the tool
// module's directory and not a Go file of this module.
func (p *Pins) validateMainFile(t ToolPin) error {
	w := t.Wrapper
	if w.MainFile == "" {
		return nil
	}
	if w.Main != "" {
		return fmt.Errorf("wrapper has both main and main_file")
	}
	if strings.HasSuffix(w.MainFile, ".go") || strings.Contains(w.MainFile, "/") {
		return fmt.Errorf("main_file %q: want a plain file name not ending in .go (it would build as part of this module)", w.MainFile)
	}
	if _, err := fs.Stat(p.files, w.Dir+"/"+w.MainFile); err != nil {
		return fmt.Errorf("main_file: %w", err)
	}
	if w.Module == "" {
		if _, err := p.toolModulePath(t); err != nil {
			return err
		}
	}
	return nil
}

// validateMainGo checks a main_go wrapper: no other main, no upstream
// module, and Go files to build.
func (p *Pins) validateMainGo(t ToolPin) error {
	w := t.Wrapper
	if !w.MainGo {
		return nil
	}
	if w.Main != "" || w.MainFile != "" || w.Module != "" || w.Package != "." {
		return fmt.Errorf("main_go builds tools/%s itself as package \".\": no main, main_file or module with it", w.Dir)
	}
	names, err := p.mainGoFiles(t)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("main_go: tools/%s holds no Go file", w.Dir)
	}
	_, err = p.toolModulePath(t)
	return err
}

// mainGoFiles lists the Go files (tests aside) of a main_go tool module.
func (p *Pins) mainGoFiles(t ToolPin) ([]string, error) {
	entries, err := fs.ReadDir(p.files, t.Wrapper.Dir)
	if err != nil {
		return nil, fmt.Errorf("main_go: %w", err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	return names, nil
}

// validateNodeBuild checks kind.node_build against the node images and
// the tools: exactly one image is marked build, named after the build's
// repository and Kubernetes version, and every image and binary is a
// pinned tool whose version its tag carries.
func (p *Pins) validateNodeBuild() error {
	var built []NodeImage
	for _, img := range p.Kind.NodeImages {
		if img.Build {
			built = append(built, img)
		}
	}
	b := p.Kind.NodeBuild
	if b == nil {
		if len(built) > 0 {
			return fmt.Errorf("kind node image %s is marked build but kind.node_build is missing", built[0].Image)
		}
		return nil
	}
	if len(built) != 1 {
		return fmt.Errorf("kind.node_build: exactly one node image must be marked build, found %d", len(built))
	}
	if !repoRE.MatchString(b.Repository) || !repoRE.MatchString(b.ImageRepository) {
		return fmt.Errorf("kind.node_build: repository %q and image_repository %q must be image names without tag or digest", b.Repository, b.ImageRepository)
	}
	if !k8sVersionRE.MatchString(b.Kubernetes) {
		return fmt.Errorf("kind.node_build: kubernetes %q: want vX.Y.Z", b.Kubernetes)
	}
	if want := b.Repository + ":" + b.Kubernetes + "@sha256:"; !strings.HasPrefix(built[0].Image, want) || built[0].Kubernetes != b.Kubernetes {
		return fmt.Errorf("kind.node_build: the node image marked build is %s for %s, want %s<digest> for %s", built[0].Image, built[0].Kubernetes, want, b.Kubernetes)
	}
	if _, err := time.Parse(time.RFC3339, b.Epoch); err != nil {
		return fmt.Errorf("kind.node_build: epoch %q: want RFC 3339 (%v)", b.Epoch, err)
	}
	if err := b.Debian.validate(); err != nil {
		return fmt.Errorf("kind.node_build.debian: %w", err)
	}
	for _, name := range b.Binaries {
		if _, ok := p.Tool(name); !ok {
			return fmt.Errorf("kind.node_build: binary %s is not a pinned tool", name)
		}
	}
	for _, name := range nodeBinariesNeeded {
		if !slices.Contains(b.Binaries, name) {
			return fmt.Errorf("kind.node_build: binaries lack %s, which kind runs in every node", name)
		}
	}
	seen := map[string]bool{}
	for _, img := range b.Images {
		if seen[img.Name] {
			return fmt.Errorf("kind.node_build: image %s listed twice", img.Name)
		}
		seen[img.Name] = true
		t, ok := p.Tool(img.Tool)
		if !ok {
			return fmt.Errorf("kind.node_build: image %s: tool %q is not pinned", img.Name, img.Tool)
		}
		if !repoRE.MatchString(img.Name) || !tagRE.MatchString(img.Tag) {
			return fmt.Errorf("kind.node_build: image %q tag %q is not a valid image name and tag", img.Name, img.Tag)
		}
		if !strings.Contains(img.Tag, t.Version) {
			return fmt.Errorf("kind.node_build: image %s tag %s does not carry its tool's pinned version %s", img.Name, img.Tag, t.Version)
		}
	}
	for _, name := range nodeImagesNeeded {
		if !seen[name] {
			return fmt.Errorf("kind.node_build: images lack %s, which kubeadm needs offline", name)
		}
	}
	if tag := b.Image("kube-apiserver").Tag; tag != b.Kubernetes {
		return fmt.Errorf("kind.node_build: kube-apiserver image %s is not the node's Kubernetes %s", tag, b.Kubernetes)
	}
	return nil
}

func (d DebianPins) validate() error {
	if d.Suite == "" || d.Variant == "" || d.Debootstrap == "" || len(d.Packages) == 0 {
		return fmt.Errorf("suite, variant, debootstrap and packages are required")
	}
	for _, name := range d.Packages {
		if !debNameRE.MatchString(name) {
			return fmt.Errorf("package %q is not a Debian package name", name)
		}
	}
	for i, l := range d.Locked {
		if !debPinRE.MatchString(l) {
			return fmt.Errorf("locked %q: want name=version", l)
		}
		if i > 0 && d.Locked[i-1] >= l {
			return fmt.Errorf("locked: %q after %q: keep the list sorted, each package once", l, d.Locked[i-1])
		}
	}
	return nil
}

func (p *Pins) validateDocker() error {
	d := p.Docker
	if d == nil {
		return nil
	}
	if d.Suite == "" || len(d.Packages) == 0 {
		return fmt.Errorf("docker: suite and packages are required")
	}
	for _, pkg := range d.Packages {
		if !debPinRE.MatchString(pkg) {
			return fmt.Errorf("docker: package %q: want an exact name=version", pkg)
		}
	}
	return nil
}

// Image returns the node build's image pin named name (zero if absent).
func (b *NodeBuild) Image(name string) ImagePin {
	for _, img := range b.Images {
		if img.Name == name {
			return img
		}
	}
	return ImagePin{}
}

// Ref is the image reference inside the node, e.g.
// "<image_repository>/kube-apiserver:v1.37.2".
func (b *NodeBuild) Ref(img ImagePin) string {
	return b.ImageRepository + "/" + img.Name + ":" + img.Tag
}

// BuiltNodeImage returns the node image gauntlet builds itself, if pinned.
func (p *Pins) BuiltNodeImage() (NodeImage, bool) {
	for _, img := range p.Kind.NodeImages {
		if img.Build {
			return img, true
		}
	}
	return NodeImage{}, false
}

// IsBuiltNodeImage reports whether image is the self-built node image.
func (p *Pins) IsBuiltNodeImage(image string) bool {
	img, ok := p.BuiltNodeImage()
	return ok && img.Image == image
}

// DefaultToolNames lists the tools resolved when none are named: every
// pinned tool outside a group.
func (p *Pins) DefaultToolNames() []string {
	var names []string
	for _, t := range p.Tools {
		if t.Group == "" {
			names = append(names, t.Name)
		}
	}
	return names
}

// GroupToolNames lists the tools of a group, in pins order.
func (p *Pins) GroupToolNames(group string) []string {
	var names []string
	for _, t := range p.Tools {
		if t.Group == group {
			names = append(names, t.Name)
		}
	}
	return names
}
