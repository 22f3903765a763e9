package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/debian"
	"github.com/gauntlet-k8s/gauntlet/internal/mountinfo"
)

// baseRecord is written last into a finished base directory.
type baseRecord struct {
	Key      string   `json:"key"`
	Mirror   string   `json:"mirror"`
	Packages []string `json:"packages"`
}

// debianKeyring verifies the suite's Release file for debootstrap.
const debianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// base returns the node's base root file system: debootstrap of the
// pinned suite, kind's base files, the steps of kind's base Dockerfile and
// gauntlet's additions, cleaned of everything that differs between two
// builds. It is cached by key; a cached base is reused as is.
func (b *builder) base(ctx context.Context) (string, *baseRecord, error) {
	dir := filepath.Join(b.dir, "base-"+b.baseKey)
	rec, err := readBase(dir)
	if err == nil && rec.Key == b.baseKey {
		b.step("base root file system", "cached", dir)
		return filepath.Join(dir, "rootfs"), rec, nil
	}
	if os.Geteuid() != 0 {
		return "", nil, fmt.Errorf("building the node's root file system needs root (debootstrap, chroot); this process runs as uid %d", os.Geteuid())
	}
	if _, err := os.Stat(debianKeyring); err != nil {
		return "", nil, fmt.Errorf("debootstrap verifies the suite with %s: %w (apt-get install debian-archive-keyring)", debianKeyring, err)
	}
	tmp := dir + ".tmp"
	if err := removeBuildDir(tmp); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", nil, err
	}
	rootfs := filepath.Join(tmp, "rootfs")
	d := b.pins.Kind.NodeBuild.Debian
	dbs, err := b.debootstrap(ctx, d.Debootstrap)
	if err != nil {
		return "", nil, err
	}
	mirror, err := debian.MirrorURI(ctx, d.Suite)
	if err != nil {
		return "", nil, err
	}
	start := time.Now()
	b.logger.Infof("node image: debootstrap --variant=%s %s with %d packages (about a minute)", d.Variant, d.Suite, len(d.Packages))
	args := []string{"--variant=" + d.Variant, "--include=" + strings.Join(d.Packages, ","), "--keyring=" + debianKeyring, d.Suite, rootfs, mirror}
	if err := b.run(ctx, filepath.Join(tmp, "debootstrap.log"), b.chrootEnv("DEBOOTSTRAP_DIR="+filepath.Join(dbs, "usr", "share", "debootstrap")),
		filepath.Join(dbs, "usr", "sbin", "debootstrap"), args...); err != nil {
		return "", nil, err
	}
	b.step("debootstrap", time.Since(start).Round(100*time.Millisecond).String(), rootfs)
	start = time.Now()
	pkgs, err := installedPackages(ctx, rootfs)
	if err != nil {
		return "", nil, err
	}
	kindFiles, err := b.kindBaseFiles(ctx)
	if err != nil {
		return "", nil, err
	}
	if err := b.prepare(ctx, rootfs, kindFiles); err != nil {
		return "", nil, fmt.Errorf("prepare the root file system: %w", err)
	}
	rec = &baseRecord{Key: b.baseKey, Mirror: mirror, Packages: pkgs}
	raw, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "base.json"), raw, 0o644); err != nil {
		return "", nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", nil, err
	}
	b.step("kind base files and gauntlet's node set-up", time.Since(start).Round(100*time.Millisecond).String(), dir)
	return filepath.Join(dir, "rootfs"), rec, nil
}

func readBase(dir string) (*baseRecord, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "base.json"))
	if err != nil {
		return nil, err
	}
	var rec baseRecord
	return &rec, json.Unmarshal(raw, &rec)
}

// debootstrap fetches the pinned debootstrap package and extracts it.
func (b *builder) debootstrap(ctx context.Context, version string) (string, error) {
	dir := filepath.Join(b.dir, "debootstrap-"+version)
	if _, err := os.Stat(filepath.Join(dir, "usr", "sbin", "debootstrap")); err == nil {
		return dir, nil
	}
	debs, err := debian.Apt{Dir: filepath.Join(b.cache, "apt")}.Download(ctx, filepath.Join(b.dir, "debs"), []string{"debootstrap=" + version})
	if err != nil {
		return "", err
	}
	if err := debian.Extract(ctx, debs["debootstrap"], dir+".tmp"); err != nil {
		return "", err
	}
	return dir, os.Rename(dir+".tmp", dir)
}

// installedPackages lists the root file system's packages as name=version.
func installedPackages(ctx context.Context, rootfs string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "dpkg-query", "--admindir="+filepath.Join(rootfs, "var", "lib", "dpkg"),
		"-W", "-f", "${Package}=${Version}\n").Output()
	if err != nil {
		return nil, fmt.Errorf("dpkg-query: %w", err)
	}
	pkgs := strings.Fields(string(out))
	sort.Strings(pkgs)
	return pkgs, nil
}

// kindBaseFiles is the images/base/files directory of the pinned kind
// module, downloaded (and verified) by the go command.
func (b *builder) kindBaseFiles(ctx context.Context) (string, error) {
	dir := b.tmpDir("gomod")
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kind@"+b.pins.Kind.Version)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s: %w", b.pins.Kind.Version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s: %v %s", b.pins.Kind.Version, err, info.Error)
	}
	return filepath.Join(info.Dir, "images", "base", "files"), nil
}

// prepare does on the root file system what kind's base image Dockerfile
// does (minus kind's own containerd, runc, crictl and CNI builds, which
// come from Debian and the pins here), adds gauntlet's files, and removes
// what would differ between two builds of the same pins.
func (b *builder) prepare(ctx context.Context, rootfs, kindFiles string) error {
	if err := copyKindFiles(kindFiles, rootfs); err != nil {
		return err
	}
	// kind's clean-install and unit pruning.
	for _, pat := range []string{
		"var/cache/apt/*", "var/lib/apt/lists/*", "var/cache/debconf/*", "var/log/*", "tmp/*", "var/tmp/*",
		"usr/share/doc/*", "usr/share/doc-base/*", "usr/share/man/*", "usr/share/info/*",
		"usr/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"usr/lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*",
		"usr/lib/systemd/system/local-fs.target.wants/*", "usr/lib/systemd/system/sockets.target.wants/*udev*",
		"usr/lib/systemd/system/sockets.target.wants/*initctl*", "usr/lib/systemd/system/basic.target.wants/*",
		// What differs between builds: the build host's names and mirror,
		// the machine ID (kind makes one per node), caches and logs.
		"var/cache/ldconfig/aux-cache", "run/*",
	} {
		if err := removeGlob(rootfs, pat); err != nil {
			return err
		}
	}
	if err := appendFile(filepath.Join(rootfs, "etc/systemd/journald.conf"), "ReadKMsg=no\n"); err != nil {
		return err
	}
	for p, content := range map[string]string{
		"etc/machine-id":       "",
		"etc/hostname":         "localhost\n",
		"etc/resolv.conf":      "",
		"etc/apt/sources.list": "# gauntlet's kind node: no package sources; the image is built from pinned packages\n",
	} {
		if err := os.WriteFile(filepath.Join(rootfs, p), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := os.Symlink("/usr/lib/systemd/systemd", filepath.Join(rootfs, "sbin/init")); err != nil && !os.IsExist(err) {
		return err
	}
	// kind's unit starts /usr/local/bin/containerd; Debian installs it in /usr/bin.
	if err := os.Symlink("/usr/bin/containerd", filepath.Join(rootfs, "usr/local/bin/containerd")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(rootfs, "opt/cni/bin"), 0o755); err != nil {
		return err
	}
	for _, p := range cniPlugins {
		if err := os.Symlink("/usr/lib/cni/"+p, filepath.Join(rootfs, "opt/cni/bin", p)); err != nil {
			return err
		}
	}
	if err := b.gauntletFiles(rootfs); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service", "gauntlet-import-images.service", "gauntlet-service-guard.service"},
		{"systemctl", "mask", "systemd-binfmt.service"},
	} {
		if err := b.chroot(ctx, rootfs, nil, args...); err != nil {
			return err
		}
	}
	if err := b.criBaseSpec(ctx, rootfs); err != nil {
		return err
	}
	for _, d := range []string{"etc/kubernetes/manifests", "kind/images"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// gauntletFiles writes gauntlet's units, scripts, CNI configuration and
// the containerd edits.
func (b *builder) gauntletFiles(rootfs string) error {
	for p, f := range map[string]struct {
		content string
		mode    fs.FileMode
	}{
		"etc/systemd/system/gauntlet-import-images.service":        {importImagesUnit, 0o644},
		"kind/bin/gauntlet-import-images.sh":                       {importImagesScript, 0o755},
		"etc/systemd/system/containerd.service.d/10-gauntlet.conf": {oomScoreAdjDropIn, 0o644},
		"kind/bin/gauntlet-oom-score-adj.sh":                       {oomScoreAdjScript, 0o755},
		"etc/cni/net.d/10-gauntlet-ptp.conflist":                   {cniConflist, 0o644},
		"kind/manifests/default-cni.yaml":                          {defaultCNIManifest, 0o644},
		"etc/systemd/system/gauntlet-service-guard.service":        {serviceGuardUnit, 0o644},
		"kind/bin/gauntlet-service-guard.sh":                       {serviceGuardScript, 0o755},
	} {
		full := filepath.Join(rootfs, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(f.content), f.mode); err != nil {
			return err
		}
		if err := os.Chmod(full, f.mode); err != nil {
			return err
		}
	}
	cfg := filepath.Join(rootfs, "etc/containerd/config.toml")
	raw, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	out, err := setSandboxImage(string(raw), b.sandboxRef())
	if err != nil {
		return err
	}
	return os.WriteFile(cfg, []byte(out), 0o644)
}

var sandboxRE = regexp.MustCompile(`(?m)^(\s*sandbox_image\s*=\s*)"[^"]*"`)

// setSandboxImage points containerd's pod sandbox at the preloaded pause.
func setSandboxImage(cfg, ref string) (string, error) {
	if n := len(sandboxRE.FindAllStringIndex(cfg, -1)); n != 1 {
		return "", fmt.Errorf("kind's containerd config.toml sets sandbox_image %d times, want exactly once: kind's base files moved", n)
	}
	return sandboxRE.ReplaceAllString(cfg, `${1}"`+ref+`"`), nil
}

// criBaseSpec writes /etc/containerd/cri-base.json as kind's Dockerfile
// does: containerd's default OCI spec with kind's createContainer hook and
// without rlimits.
func (b *builder) criBaseSpec(ctx context.Context, rootfs string) error {
	var out strings.Builder
	if err := b.chroot(ctx, rootfs, &out, "ctr", "oci", "spec"); err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal([]byte(out.String()), &spec); err != nil {
		return fmt.Errorf("ctr oci spec: %w", err)
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	cc, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(cc, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	spec["hooks"] = hooks
	if proc, ok := spec["process"].(map[string]any); ok {
		delete(proc, "rlimits")
	}
	raw, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rootfs, "etc/containerd/cri-base.json"), append(raw, '\n'), 0o644)
}

// copyKindFiles installs kind's base files with the modes kind's
// Dockerfile gives them: scripts 0755, everything else 0644.
func copyKindFiles(src, rootfs string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(rootfs, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		mode := fs.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, mode); err != nil {
			return err
		}
		return os.Chmod(dst, mode)
	})
}

func removeGlob(root, pat string) error {
	matches, err := filepath.Glob(filepath.Join(root, pat))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if err := os.RemoveAll(m); err != nil {
			return err
		}
	}
	return nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// chrootEnv is the environment of everything run in or on the root file
// system: a fixed PATH and locale, and the build's epoch.
func (b *builder) chrootEnv(extra ...string) []string {
	return append([]string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", "HOME=/root",
		"SOURCE_DATE_EPOCH=" + strconv.FormatInt(b.epoch.Unix(), 10),
	}, extra...)
}

func (b *builder) chroot(ctx context.Context, rootfs string, stdout *strings.Builder, args ...string) error {
	cmd := exec.CommandContext(ctx, "chroot", append([]string{rootfs}, args...)...)
	cmd.Env = b.chrootEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("chroot %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// run runs a long command with its output in logPath, reporting progress
// every 30 s.
func (b *builder) run(ctx context.Context, logPath string, env []string, name string, args ...string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.WaitDelay = 10 * time.Second
	// debootstrap runs dpkg in a chroot: stop the whole group, and with
	// this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s: %w (log: %s)", filepath.Base(name), err, logPath)
			}
			return nil
		case <-tick.C:
			b.logger.Infof("node image: %s still running (%s)", filepath.Base(name), time.Since(start).Round(time.Second))
		}
	}
}

// removeBuildDir removes an unfinished build directory. An interrupted
// debootstrap can leave /proc and /sys (or a bound /dev) mounted inside
// it: those are unmounted first, and nothing is removed while any stays.
func removeBuildDir(dir string) error {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	if _, err := mountinfo.Unmount(mountinfo.Self, dir); err != nil {
		return fmt.Errorf("%w: unmount what is left inside the unfinished build, then build again", err)
	}
	return os.RemoveAll(dir)
}
