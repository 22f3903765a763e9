// Package nodeimage builds the kind node image gauntlet runs offline, from
// the pins alone (third_party/pins.json, kind.node_build): a Debian root
// file system made by debootstrap, kind's own base files from the pinned
// kind module, the pinned kubelet, kubeadm, kubectl and crictl, and
// single-layer images of the pinned control plane, etcd, CoreDNS, pause
// and metrics-server, imported into the node's containerd on first boot.
//
// The build is deterministic: files are written in path order with every
// time set to the pinned epoch and owners by number, and what differs
// between two debootstraps of the same packages (logs, caches, machine ID,
// the build host's names and mirror) is removed. The same pins therefore
// give the same image digest on any machine as long as Debian serves the
// locked package versions; the digest is the sha256 of the image config,
// which Docker reports as the image ID and the pins record. Every step is
// cached in gauntlet's cache directory, so a second build is a lookup.
//
// Building needs root (debootstrap, chroot) but no Docker engine; loading
// the result needs one.
package nodeimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/docker"
	"github.com/gauntlet-k8s/gauntlet/internal/flock"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	glog "github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// recipe versions how this package turns pins into an image; bump it with
// any change to what the image contains, so caches are not reused.
const recipe = "gauntlet-kind-node/1"

// Option configures Build and Ensure.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	cacheDir string
	pins     *toolchain.Pins
	logger   glog.Logger
	offline  bool
	unlocked bool
}

// WithCacheDir is where every step's output is kept. Default:
// toolchain.DefaultCacheDir().
func WithCacheDir(dir string) Option { return optionFunc(func(o *options) { o.cacheDir = dir }) }

// WithPins builds from these pins. Default: the embedded pins.
func WithPins(p *toolchain.Pins) Option { return optionFunc(func(o *options) { o.pins = p }) }

// WithLogger receives one line per step. Default: log.Discard().
func WithLogger(l glog.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithOffline keeps the toolchain from downloading. Default: false.
func WithOffline(offline bool) Option { return optionFunc(func(o *options) { o.offline = offline }) }

// WithUnlockedPackages builds even when Debian's packages differ from the
// locked set; the result then carries the new set for re-pinning.
// Default: a difference fails the build.
func WithUnlockedPackages() Option { return optionFunc(func(o *options) { o.unlocked = true }) }

// Result is a built node image.
type Result struct {
	// Image is the pin for it: repository:tag@sha256:<config digest>.
	Image string
	// ID is what Docker calls it: sha256:<config digest>.
	ID string
	// Packages is the root file system's package set (name=version).
	Packages []string
	// Dir holds the layer, the config and record.json.
	Dir string
	// LayerSize is the size of the image's single layer in bytes.
	LayerSize int64
	// Steps say what each step did and how long it took.
	Steps []Step

	archive *archive
	epoch   time.Time
}

// Step is one line of the build's progress.
type Step struct {
	Name   string `json:"name"`
	Took   string `json:"took"`
	Output string `json:"output,omitempty"`
}

// PackagesMoved is returned when Debian no longer serves the locked
// package set: the image would not be the pinned one.
type PackagesMoved struct {
	Added, Removed []string
}

func (e *PackagesMoved) Error() string {
	return fmt.Sprintf("Debian's packages differ from kind.node_build.debian.locked in third_party/pins.json (now: %s; locked: %s): "+
		"the image would not have the pinned digest; re-pin with `go run ./tools/gauntlet kind node-image --repin` and review the diff",
		strings.Join(e.Added, " "), strings.Join(e.Removed, " "))
}

type builder struct {
	pins    *toolchain.Pins
	cache   string
	dir     string
	epoch   time.Time
	logger  glog.Logger
	baseKey string
	steps   []Step
	tmp     []string
}

func newBuilder(o *options) (*builder, error) {
	if o.pins == nil {
		p, err := toolchain.DefaultPins()
		if err != nil {
			return nil, err
		}
		o.pins = p
	}
	nb := o.pins.Kind.NodeBuild
	if nb == nil {
		return nil, fmt.Errorf("no kind node image build is pinned (kind.node_build in third_party/pins.json)")
	}
	if o.cacheDir == "" {
		d, err := toolchain.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		o.cacheDir = d
	}
	epoch, err := time.Parse(time.RFC3339, nb.Epoch)
	if err != nil {
		return nil, err
	}
	b := &builder{pins: o.pins, cache: o.cacheDir, dir: filepath.Join(o.cacheDir, "kind-node"), epoch: epoch.UTC(), logger: o.logger}
	b.baseKey = digestOf(recipe, nb.Debian.Suite, nb.Debian.Variant, nb.Debian.Debootstrap, strings.Join(nb.Debian.Packages, ","),
		nb.Epoch, o.pins.Kind.Version, b.sandboxRef(), importImagesUnit, importImagesScript, oomScoreAdjDropIn, oomScoreAdjScript,
		cniConflist, defaultCNIManifest, serviceGuardUnit, serviceGuardScript, strings.Join(cniPlugins, ","))[:12]
	return b, os.MkdirAll(b.dir, 0o755)
}

func (b *builder) sandboxRef() string {
	nb := b.pins.Kind.NodeBuild
	return nb.Ref(nb.Image("pause"))
}

func (b *builder) step(name, took, output string) {
	b.steps = append(b.steps, Step{Name: name, Took: took, Output: output})
	b.logger.Infof("node image: %s: %s", name, took)
}

func (b *builder) tmpDir(name string) string {
	d, err := os.MkdirTemp("", "gauntlet-node-"+name+"-")
	if err != nil {
		d = os.TempDir()
	} else {
		b.tmp = append(b.tmp, d)
	}
	return d
}

func (b *builder) cleanup() {
	for _, d := range b.tmp {
		os.RemoveAll(d)
	}
}

// Build builds the node image the pins describe, or finds it built. It
// does not compare the result with the pinned digest: Ensure does.
func Build(ctx context.Context, opts ...Option) (*Result, error) {
	o := &options{logger: glog.Discard()}
	for _, opt := range opts {
		opt.apply(o)
	}
	b, err := newBuilder(o)
	if err != nil {
		return nil, err
	}
	defer b.cleanup()
	unlock, err := flock.Lock(ctx, filepath.Join(b.dir, "build.lock"), 500*time.Millisecond, func() {
		b.logger.Infof("node image: waiting for another process building it")
	})
	if err != nil {
		return nil, err
	}
	defer unlock()
	if rec, err := readBase(filepath.Join(b.dir, "base-"+b.baseKey)); (err != nil || rec.Key != b.baseKey) && os.Geteuid() != 0 {
		return nil, fmt.Errorf("building the node's root file system needs root (debootstrap, chroot); this process runs as uid %d", os.Geteuid())
	}
	start := time.Now()
	nb := b.pins.Kind.NodeBuild
	tools := append(append([]string(nil), nb.Binaries...), imageTools(nb)...)
	tc, err := toolchain.Resolve(ctx, toolchain.WithPins(b.pins), toolchain.WithCacheDir(b.cache), toolchain.WithTools(tools...),
		toolchain.WithLogger(b.logger), toolchain.WithOffline(o.offline))
	if err != nil {
		return nil, err
	}
	b.step("pinned binaries", time.Since(start).Round(100*time.Millisecond).String(), fmt.Sprintf("%d tools", len(tools)))
	rootfs, base, err := b.base(ctx)
	if err != nil {
		return nil, err
	}
	if moved := packageDiff(base.Packages, nb.Debian.Locked); moved != nil && !o.unlocked {
		return nil, moved
	}
	res, err := b.node(ctx, tc, rootfs)
	if err != nil {
		return nil, err
	}
	res.Packages = base.Packages
	b.prune(rootfs, res.Dir)
	b.logger.Infof("node image: %s built in %s (layer %d MB)", res.Image, time.Since(start).Round(100*time.Millisecond), res.LayerSize>>20)
	return res, nil
}

// prune removes the outputs of earlier pins (about 1.5 GB each): other
// base and node directories, and image archives the current node image
// does not carry.
func (b *builder) prune(rootfs, nodeDir string) {
	keep := map[string]bool{filepath.Dir(rootfs): true, nodeDir: true}
	old, _ := filepath.Glob(filepath.Join(b.dir, "base-*"))
	nodes, _ := filepath.Glob(filepath.Join(b.dir, "node-*"))
	for _, d := range append(old, nodes...) {
		if !keep[d] {
			b.logger.Infof("node image: removing %s, built from earlier pins", d)
			os.RemoveAll(d)
		}
	}
	raw, err := os.ReadFile(filepath.Join(nodeDir, "record.json"))
	var rec record
	if err != nil || json.Unmarshal(raw, &rec) != nil || len(rec.Archives) == 0 {
		return
	}
	files, _ := filepath.Glob(filepath.Join(b.dir, "images", "*.tar"))
	for _, f := range files {
		if !slices.Contains(rec.Archives, filepath.Base(f)) {
			os.Remove(f)
			os.Remove(f + ".id")
		}
	}
}

func imageTools(nb *toolchain.NodeBuild) []string {
	var out []string
	for _, img := range nb.Images {
		if !slices.Contains(out, img.Tool) {
			out = append(out, img.Tool)
		}
	}
	return out
}

// packageDiff compares the built package set with the locked one.
func packageDiff(got, locked []string) *PackagesMoved {
	var m PackagesMoved
	for _, p := range got {
		if !slices.Contains(locked, p) {
			m.Added = append(m.Added, p)
		}
	}
	for _, p := range locked {
		if !slices.Contains(got, p) {
			m.Removed = append(m.Removed, p)
		}
	}
	if len(m.Added) == 0 && len(m.Removed) == 0 {
		return nil
	}
	return &m
}

// record is written into a finished node directory.
type record struct {
	Image     string            `json:"image"`
	Ref       string            `json:"ref"`
	Config    string            `json:"config"`
	DiffID    string            `json:"diff_id"`
	LayerSize int64             `json:"layer_size"`
	Images    map[string]string `json:"images"`
	Archives  []string          `json:"archives"`
	Steps     []Step            `json:"steps"`
}

// node assembles the node image's layer: the base root file system plus
// the binaries, the preloaded images and /kind/version.
func (b *builder) node(ctx context.Context, tc *toolchain.Toolchain, rootfs string) (*Result, error) {
	nb := b.pins.Kind.NodeBuild
	start := time.Now()
	imgDir := filepath.Join(b.dir, "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return nil, err
	}
	type built struct {
		file, ref, id string
	}
	var imgs []built
	keyParts := []string{recipe, b.baseKey, nb.Repository, nb.Kubernetes}
	for _, img := range nb.Images {
		bin, err := tc.Binary(img.Tool)
		if err != nil {
			return nil, err
		}
		key := digestOf(recipe, nb.Ref(img), bin.SHA256, b.baseKey, nb.Epoch)[:12]
		file := filepath.Join(imgDir, img.Name+"-"+img.Tag+"-"+key+".tar")
		id, err := b.imageArchive(file, nb, img, bin, rootfs)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", nb.Ref(img), err)
		}
		imgs = append(imgs, built{file: file, ref: nb.Ref(img), id: id})
		keyParts = append(keyParts, nb.Ref(img), id)
	}
	for _, name := range nb.Binaries {
		bin, err := tc.Binary(name)
		if err != nil {
			return nil, err
		}
		keyParts = append(keyParts, name, bin.SHA256)
	}
	b.step("preloaded images", time.Since(start).Round(100*time.Millisecond).String(), fmt.Sprintf("%d single-layer images in %s", len(imgs), imgDir))

	dir := filepath.Join(b.dir, "node-"+digestOf(keyParts...)[:12])
	ref := nb.Repository + ":" + nb.Kubernetes
	if raw, err := os.ReadFile(filepath.Join(dir, "record.json")); err == nil {
		var rec record
		if json.Unmarshal(raw, &rec) == nil && rec.Ref == ref {
			if a, err := loadArchive(dir, rec); err == nil {
				b.step("node image layer", "cached", dir)
				return b.result(a, dir), nil
			}
		}
	}
	start = time.Now()
	t := newTree(b.epoch)
	if err := t.addDisk(rootfs, skipInLayer); err != nil {
		return nil, err
	}
	for _, name := range nb.Binaries {
		t.file("usr/bin/"+name, tc.Path(name), 0o755)
	}
	var list strings.Builder
	for _, img := range imgs {
		name := filepath.Base(img.file)
		t.file("kind/images/"+name, img.file, 0o644)
		fmt.Fprintf(&list, "%s %s\n", name, img.ref)
	}
	t.data("kind/images/images.txt", []byte(list.String()), 0o644)
	t.data("kind/version", []byte(nb.Kubernetes+"\n"), 0o644)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	a, err := newArchive(t, filepath.Join(dir, "layer.tar"), ref, "gauntlet kind node-image "+recipe, containerConfig{
		Env:        []string{"container=docker", defaultPath},
		Entrypoint: []string{"/usr/local/bin/entrypoint", "/sbin/init"},
		StopSignal: "SIGRTMIN+3",
	})
	if err != nil {
		return nil, err
	}
	b.step("node image layer", time.Since(start).Round(100*time.Millisecond).String(), fmt.Sprintf("%d files, %d MB", len(t.entries), a.layerSize>>20))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), a.config, 0o644); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	var files []string
	for _, img := range imgs {
		ids[img.ref] = img.id
		files = append(files, filepath.Base(img.file))
	}
	rec := record{Image: ref + "@sha256:" + a.ConfigDigest, Ref: ref, Config: a.ConfigDigest, DiffID: a.DiffID,
		LayerSize: a.layerSize, Images: ids, Archives: files, Steps: b.steps}
	raw, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "record.json"), raw, 0o644); err != nil {
		return nil, err
	}
	return b.result(a, dir), nil
}

func (b *builder) result(a *archive, dir string) *Result {
	return &Result{Image: a.Ref + "@sha256:" + a.ConfigDigest, ID: "sha256:" + a.ConfigDigest, Dir: dir,
		LayerSize: a.layerSize, Steps: b.steps, archive: a, epoch: b.epoch}
}

// loadArchive reopens a finished node directory, checking the config's
// digest (the layer is checked by Docker when it is loaded).
func loadArchive(dir string, rec record) (*archive, error) {
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	if digestBytes(cfg) != rec.Config {
		return nil, fmt.Errorf("%s/config.json does not match its record", dir)
	}
	fi, err := os.Stat(filepath.Join(dir, "layer.tar"))
	if err != nil || fi.Size() != rec.LayerSize {
		return nil, fmt.Errorf("%s/layer.tar is missing or not the recorded size", dir)
	}
	return &archive{Ref: rec.Ref, ConfigDigest: rec.Config, DiffID: rec.DiffID, config: cfg, layerPath: filepath.Join(dir, "layer.tar"), layerSize: rec.LayerSize}, nil
}

// imageArchive writes one preloaded image's archive unless it exists, and
// returns its config digest.
func (b *builder) imageArchive(file string, nb *toolchain.NodeBuild, img toolchain.ImagePin, bin toolchain.Binary, rootfs string) (string, error) {
	if raw, err := os.ReadFile(file + ".id"); err == nil {
		if _, err := os.Stat(file); err == nil {
			return strings.TrimSpace(string(raw)), nil
		}
	}
	a, err := toolImage(filepath.Dir(file), nb, img, bin, rootfs, b.epoch)
	if err != nil {
		return "", err
	}
	defer os.Remove(a.layerPath)
	if err := a.writeArchiveFile(file, b.epoch); err != nil {
		return "", err
	}
	return a.ConfigDigest, os.WriteFile(file+".id", []byte(a.ConfigDigest+"\n"), 0o644)
}

// skipInLayer leaves the contents of the kernel's and the runtime's file
// systems out of the layer (the directories themselves stay).
func skipInLayer(rel string) bool {
	for _, d := range []string{"dev/", "proc/", "sys/"} {
		if strings.HasPrefix(rel, d) {
			return true
		}
	}
	return false
}

// Ensure makes the pinned self-built node image present in the engine and
// returns the reference to run it by (its image ID). An image already
// there is used as is; otherwise it is built (or found built in the cache),
// checked against the pinned digest, and loaded.
func Ensure(ctx context.Context, e *docker.Engine, opts ...Option) (string, error) {
	o := &options{logger: glog.Discard()}
	for _, opt := range opts {
		opt.apply(o)
	}
	if o.pins == nil {
		p, err := toolchain.DefaultPins()
		if err != nil {
			return "", err
		}
		o.pins = p
	}
	pin, ok := o.pins.BuiltNodeImage()
	if !ok {
		return "", fmt.Errorf("no self-built kind node image is pinned")
	}
	_, digest, _ := strings.Cut(pin.Image, "@")
	if present(ctx, e, digest) {
		return digest, nil
	}
	o.logger.Infof("node image: %s is not in the engine; building it from the pins (minutes when cold)", pin.Image)
	res, err := Build(ctx, append(opts, WithPins(o.pins))...)
	if err != nil {
		return "", err
	}
	if res.Image != pin.Image {
		return "", fmt.Errorf("the node image built from the pins is %s, but third_party/pins.json pins %s: "+
			"the build is not the pinned one here (record: %s); if the pins changed on purpose, re-pin with `go run ./tools/gauntlet kind node-image --repin`",
			res.Image, pin.Image, filepath.Join(res.Dir, "record.json"))
	}
	if err := Load(ctx, e, res, o.logger); err != nil {
		return "", err
	}
	if e.Host != "" {
		// gauntlet's own engine: its data root keeps every image loaded
		// into it, 1 GB per node image of earlier pins.
		removeOthers(ctx, e, o.pins.Kind.NodeBuild.Repository, digest, o.logger)
	}
	return digest, nil
}

// removeOthers removes the engine's other images of repository, and
// untagged ones, that no container uses.
func removeOthers(ctx context.Context, e *docker.Engine, repository, keep string, l glog.Logger) {
	out, err := e.Output(ctx, "images", "--no-trunc", "--format", "{{.ID}}", repository)
	if err != nil {
		return
	}
	for _, id := range strings.Fields(out) {
		if id == keep {
			continue
		}
		if _, err := e.Output(ctx, "rmi", id); err == nil {
			l.Infof("node image: removed %s (earlier pins) from the engine", id)
		}
	}
	// A load that moved the tag leaves the earlier image untagged.
	if out, err := e.Output(ctx, "image", "prune", "--force"); err == nil && !strings.Contains(out, "reclaimed space: 0B") {
		l.Infof("node image: %s", strings.ReplaceAll(out, "\n", "; "))
	}
}

func present(ctx context.Context, e *docker.Engine, id string) bool {
	got, err := e.Output(ctx, "image", "inspect", "--format", "{{.Id}}", id)
	return err == nil && got == id
}

// Load streams the built image into the engine (docker load) and checks
// that the engine knows it by the built digest.
func Load(ctx context.Context, e *docker.Engine, res *Result, l glog.Logger) error {
	if present(ctx, e, res.ID) {
		return nil
	}
	start := time.Now()
	cmd := e.Command(ctx, "load")
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdin = pr
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("docker load: %w", err)
	}
	pr.Close()
	werr := res.archive.writeArchive(pw, res.epoch)
	pw.Close()
	if err := errors.Join(cmd.Wait(), werr); err != nil {
		return fmt.Errorf("docker load of %s: %w: %s", res.Image, err, strings.TrimSpace(out.String()))
	}
	if !present(ctx, e, res.ID) {
		return fmt.Errorf("docker load of %s finished but the engine does not know %s (%s)", res.Image, res.ID, strings.TrimSpace(out.String()))
	}
	l.Infof("node image: loaded %s into %s (%.1fs)", res.Image, e.Describe(), time.Since(start).Seconds())
	return nil
}

func digestOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func digestBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
