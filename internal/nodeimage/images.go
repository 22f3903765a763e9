package nodeimage

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// imageConfig is the part of the OCI/Docker image config gauntlet writes.
// Field order and content are fixed, so the config digest (the image ID)
// follows from the layer alone.
type imageConfig struct {
	Architecture string          `json:"architecture"`
	Config       containerConfig `json:"config"`
	Created      time.Time       `json:"created"`
	History      []history       `json:"history"`
	OS           string          `json:"os"`
	RootFS       rootFS          `json:"rootfs"`
}

type containerConfig struct {
	Env        []string `json:"Env"`
	Entrypoint []string `json:"Entrypoint"`
	StopSignal string   `json:"StopSignal,omitempty"`
}

type history struct {
	Created   time.Time `json:"created"`
	CreatedBy string    `json:"created_by"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// imageLayout says where an image's binary goes and how it starts.
// kubeadm's manifests name the control-plane binaries by command (and
// kube-proxy by /usr/local/bin/kube-proxy); CoreDNS, metrics-server and
// pause start from their entrypoint, as their upstream images do.
func imageLayout(name string) (binPath string, entrypoint []string) {
	switch name {
	case "coredns", "metrics-server", "pause":
		return "/" + name, []string{"/" + name}
	default:
		return "/usr/local/bin/" + name, []string{"/usr/local/bin/" + name}
	}
}

// archive is a single-layer image as Docker's save format: manifest.json,
// the config and the layer.
type archive struct {
	Ref          string // name:tag
	ConfigDigest string // hex sha256 of config: Docker's image ID
	DiffID       string // hex sha256 of the layer tar
	config       []byte
	layerPath    string
	layerSize    int64
}

// writeArchive streams the archive in Docker's save format to w.
func (a *archive) writeArchive(w io.Writer, epoch time.Time) error {
	manifest, err := json.Marshal([]map[string]any{{
		"Config":   a.ConfigDigest + ".json",
		"RepoTags": []string{a.Ref},
		"Layers":   []string{a.DiffID + "/layer.tar"},
	}})
	if err != nil {
		return err
	}
	t := newTree(epoch)
	t.data(a.ConfigDigest+".json", a.config, 0o644)
	t.file(a.DiffID+"/layer.tar", a.layerPath, 0o644)
	t.data("manifest.json", manifest, 0o644)
	_, _, err = t.write(w)
	return err
}

// newArchive writes layer t to layerPath and makes the config for it.
func newArchive(t *tree, layerPath, ref, createdBy string, cfg containerConfig) (*archive, error) {
	f, err := os.Create(layerPath + ".tmp")
	if err != nil {
		return nil, err
	}
	diff, size, err := t.write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(layerPath+".tmp", layerPath); err != nil {
		return nil, err
	}
	c := imageConfig{
		Architecture: "amd64", Config: cfg, Created: t.epoch.UTC(), OS: "linux",
		History: []history{{Created: t.epoch.UTC(), CreatedBy: createdBy}},
		RootFS:  rootFS{Type: "layers", DiffIDs: []string{"sha256:" + diff}},
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	return &archive{Ref: ref, ConfigDigest: hex.EncodeToString(sum[:]), DiffID: diff, config: raw, layerPath: layerPath, layerSize: size}, nil
}

// toolImage builds the single-layer image of one pinned tool. kube-proxy
// also gets the node's iptables, conntrack and the shared libraries they
// load (xtables extensions included), from rootfs.
func toolImage(dir string, b *toolchain.NodeBuild, img toolchain.ImagePin, bin toolchain.Binary, rootfs string, epoch time.Time) (*archive, error) {
	t := newTree(epoch)
	binPath, entry := imageLayout(img.Name)
	t.file(binPath, bin.Path, 0o755)
	t.dir("etc", 0o755)
	t.dir("tmp", 0o1777)
	if img.Name == "kube-proxy" {
		if err := addFirewallTools(t, rootfs); err != nil {
			return nil, fmt.Errorf("kube-proxy image: %w", err)
		}
	}
	ref := b.Ref(img)
	by := fmt.Sprintf("gauntlet kind node-image: %s %s (sha256 %s)", bin.Name, bin.Version, bin.SHA256)
	return newArchive(t, filepath.Join(dir, img.Name+".layer.tar"), ref, by, containerConfig{Env: []string{defaultPath}, Entrypoint: entry})
}

// firewallTools are what kube-proxy runs in iptables mode. The plain
// names use the nft backend, as the node does when its engine programs
// nft rules; the legacy binaries come along for a node that chose legacy.
var firewallTools = []string{
	"usr/sbin/xtables-nft-multi", "usr/sbin/xtables-legacy-multi", "usr/sbin/conntrack",
}

func addFirewallTools(t *tree, rootfs string) error {
	// Debian's merged /usr: /lib, /lib64, /bin and /sbin are links.
	for _, l := range []string{"lib", "lib64", "bin", "sbin"} {
		target, err := os.Readlink(filepath.Join(rootfs, l))
		if err != nil {
			return err
		}
		t.symlink(l, target)
	}
	var elfs []string
	for _, f := range firewallTools {
		t.file(f, filepath.Join(rootfs, f), 0o755)
		elfs = append(elfs, f)
	}
	for _, n := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		t.symlink("usr/sbin/"+n, "xtables-nft-multi")
		t.symlink("usr/sbin/"+strings.Replace(n, "tables", "tables-legacy", 1), "xtables-legacy-multi")
		t.symlink("usr/sbin/"+strings.Replace(n, "tables", "tables-nft", 1), "xtables-nft-multi")
	}
	exts, err := filepath.Glob(filepath.Join(rootfs, "usr/lib/x86_64-linux-gnu/xtables/*.so"))
	if err != nil {
		return err
	}
	for _, e := range exts {
		rel, _ := filepath.Rel(rootfs, e)
		t.file(rel, e, 0o644)
		elfs = append(elfs, rel)
	}
	libs, err := libClosure(rootfs, elfs)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if err := addResolved(t, rootfs, l); err != nil {
			return err
		}
	}
	return nil
}

// libDirs are where the dynamic loader of a Debian amd64 system looks.
var libDirs = []string{"usr/lib/x86_64-linux-gnu", "usr/lib", "usr/lib64"}

// libClosure returns the shared libraries (as paths inside rootfs) the
// given ELF files need, transitively, plus their program interpreter.
func libClosure(rootfs string, files []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	queue := append([]string(nil), files...)
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		ef, err := elf.Open(filepath.Join(rootfs, f))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		needed, err := ef.ImportedLibraries()
		interp := ""
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				b, _ := io.ReadAll(p.Open())
				interp = strings.TrimRight(string(b), "\x00")
			}
		}
		ef.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if interp != "" && !seen[interp] {
			seen[interp] = true
			out = append(out, strings.TrimPrefix(interp, "/"))
		}
		for _, n := range needed {
			lib, err := findLib(rootfs, n)
			if err != nil {
				return nil, fmt.Errorf("%s needs %s: %w", f, n, err)
			}
			if !seen[lib] {
				seen[lib] = true
				out = append(out, lib)
				queue = append(queue, lib)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func findLib(rootfs, name string) (string, error) {
	for _, d := range libDirs {
		p := path.Join(d, name)
		if _, err := os.Stat(filepath.Join(rootfs, p)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in %s", strings.Join(libDirs, ", "))
}

// addResolved adds a path of rootfs to t, following symbolic links inside
// rootfs and adding each link and its final file.
func addResolved(t *tree, rootfs, p string) error {
	for i := 0; i < 16; i++ {
		p = clean(p)
		// Resolve the directories on the way first (/lib is a link).
		dir, base := path.Split(p)
		if real, err := realDir(rootfs, strings.TrimSuffix(dir, "/")); err == nil && real != strings.TrimSuffix(dir, "/") {
			p = path.Join(real, base)
		}
		full := filepath.Join(rootfs, p)
		fi, err := os.Lstat(full)
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			t.file(p, full, int64(fi.Mode().Perm()))
			return nil
		}
		target, err := os.Readlink(full)
		if err != nil {
			return err
		}
		t.symlink(p, target)
		if !strings.HasPrefix(target, "/") {
			target = path.Join(path.Dir(p), target)
		}
		p = target
	}
	return fmt.Errorf("%s: too many links", p)
}

// realDir resolves the symbolic links among a directory path's components
// inside rootfs.
func realDir(rootfs, dir string) (string, error) {
	parts := strings.Split(clean(dir), "/")
	cur := ""
	for i := 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := path.Join(cur, parts[i])
		fi, err := os.Lstat(filepath.Join(rootfs, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(filepath.Join(rootfs, next))
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				next = clean(target)
			} else {
				next = path.Join(cur, target)
			}
		}
		cur = next
	}
	return cur, nil
}

// writeArchiveFile writes the archive to path (for the node's
// /kind/images), atomically.
func (a *archive) writeArchiveFile(path string, epoch time.Time) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	err = a.writeArchive(f, epoch)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
