package nodeimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var epoch = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func layerOf(t *testing.T, tr *tree) (string, []*tar.Header) {
	t.Helper()
	var buf bytes.Buffer
	sum, n, err := tr.write(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("reported size %d, wrote %d", n, buf.Len())
	}
	if h := sha256.Sum256(buf.Bytes()); hex.EncodeToString(h[:]) != sum {
		t.Errorf("reported digest %s is not the stream's", sum)
	}
	var hdrs []*tar.Header
	r := tar.NewReader(&buf)
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, h)
	}
	return sum, hdrs
}

// TestLayerBytesDependOnContentOnly writes the same files twice, with
// different times on disk, and expects the same layer: sorted entries,
// the epoch as every time, hard links as links, no device nodes.
func TestLayerBytesDependOnContentOnly(t *testing.T) {
	mk := func(when time.Time) string {
		d := t.TempDir()
		for _, p := range []string{"usr/bin", "etc", "dev"} {
			os.MkdirAll(filepath.Join(d, p), 0o755)
		}
		os.WriteFile(filepath.Join(d, "usr/bin/tool"), []byte("#!/bin/sh\n"), 0o755)
		os.Link(filepath.Join(d, "usr/bin/tool"), filepath.Join(d, "usr/bin/alias"))
		os.WriteFile(filepath.Join(d, "etc/conf"), []byte("x=1\n"), 0o644)
		os.WriteFile(filepath.Join(d, "dev/null-ish"), nil, 0o644)
		os.Symlink("usr/bin", filepath.Join(d, "bin"))
		filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error {
			os.Chtimes(p, when, when)
			return nil
		})
		return d
	}
	var sums []string
	var hdrs []*tar.Header
	for _, when := range []time.Time{time.Now(), time.Now().Add(-48 * time.Hour)} {
		tr := newTree(epoch)
		if err := tr.addDisk(mk(when), skipInLayer); err != nil {
			t.Fatal(err)
		}
		tr.data("kind/version", []byte("v1.37.2\n"), 0o644)
		sum, h := layerOf(t, tr)
		sums, hdrs = append(sums, sum), h
	}
	if sums[0] != sums[1] {
		t.Fatalf("the same files gave two layers: %s and %s", sums[0], sums[1])
	}
	var names []string
	for _, h := range hdrs {
		names = append(names, h.Name)
		if !h.ModTime.Equal(epoch) {
			t.Errorf("%s has time %s, want the epoch", h.Name, h.ModTime)
		}
		if h.Name == "usr/bin/tool" && h.Typeflag != tar.TypeLink {
			t.Errorf("the second name of a hard link is type %c, want a link to usr/bin/alias", h.Typeflag)
		}
	}
	want := "bin dev/ etc/ etc/conf kind/ kind/version usr/ usr/bin/ usr/bin/alias usr/bin/tool"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries %q, want %q (sorted, /dev emptied)", got, want)
	}
}

func TestConfigDigestIsTheImageID(t *testing.T) {
	tr := newTree(epoch)
	tr.data("pause", []byte("binary"), 0o755)
	a, err := newArchive(tr, filepath.Join(t.TempDir(), "layer.tar"), "gauntlet.invalid/pause:3.10.2", "test", containerConfig{Env: []string{defaultPath}, Entrypoint: []string{"/pause"}})
	if err != nil {
		t.Fatal(err)
	}
	if h := sha256.Sum256(a.config); hex.EncodeToString(h[:]) != a.ConfigDigest {
		t.Error("config digest is not the sha256 of the config")
	}
	var cfg imageConfig
	if err := json.Unmarshal(a.config, &cfg); err != nil || cfg.RootFS.DiffIDs[0] != "sha256:"+a.DiffID || !cfg.Created.Equal(epoch) {
		t.Errorf("config %s does not name its layer %s at the epoch (%v)", a.config, a.DiffID, err)
	}
	var buf bytes.Buffer
	if err := a.writeArchive(&buf, epoch); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	r := tar.NewReader(&buf)
	for h, err := r.Next(); err == nil; h, err = r.Next() {
		files[h.Name], _ = io.ReadAll(r)
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json: %s (%v)", files["manifest.json"], err)
	}
	m := manifest[0]
	if m.Config != a.ConfigDigest+".json" || m.RepoTags[0] != "gauntlet.invalid/pause:3.10.2" || files[m.Layers[0]] == nil || !bytes.Equal(files[m.Config], a.config) {
		t.Errorf("archive does not hold what its manifest names: %+v", m)
	}
}

func TestSandboxImageIsSetExactlyOnce(t *testing.T) {
	cfg := "[plugins.\"io.containerd.grpc.v1.cri\"]\n  # use fixed sandbox image\n  sandbox_image = \"somewhere/pause:3.10\"\n"
	out, err := setSandboxImage(cfg, "gauntlet.invalid/pause:3.10.2")
	if err != nil || !strings.Contains(out, `  sandbox_image = "gauntlet.invalid/pause:3.10.2"`) || strings.Contains(out, "somewhere") {
		t.Errorf("got %q, %v", out, err)
	}
	for _, bad := range []string{"version = 2\n", cfg + cfg} {
		if _, err := setSandboxImage(bad, "x"); err == nil {
			t.Errorf("a config setting sandbox_image %d times was accepted", strings.Count(bad, "sandbox_image"))
		}
	}
}

func TestPackageDiffNamesWhatMoved(t *testing.T) {
	if d := packageDiff([]string{"a=1", "b=2"}, []string{"a=1", "b=2"}); d != nil {
		t.Errorf("equal sets differ: %+v", d)
	}
	d := packageDiff([]string{"a=1", "b=3", "c=1"}, []string{"a=1", "b=2"})
	if d == nil || strings.Join(d.Added, " ") != "b=3 c=1" || strings.Join(d.Removed, " ") != "b=2" {
		t.Fatalf("diff %+v", d)
	}
	if !strings.Contains(d.Error(), "--repin") {
		t.Errorf("error %q does not say how to re-pin", d.Error())
	}
}

// TestLibrariesAreFollowedThroughMergedUsr resolves a library path
// through /lib -> usr/lib and a versioned symlink, as on Debian 12.
func TestLibrariesAreFollowedThroughMergedUsr(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "usr/lib/x86_64-linux-gnu"), 0o755)
	os.Symlink("usr/lib", filepath.Join(root, "lib"))
	os.WriteFile(filepath.Join(root, "usr/lib/x86_64-linux-gnu/libm.so.6.0"), []byte("elf"), 0o644)
	os.Symlink("libm.so.6.0", filepath.Join(root, "usr/lib/x86_64-linux-gnu/libm.so.6"))
	tr := newTree(epoch)
	if err := addResolved(tr, root, "lib/x86_64-linux-gnu/libm.so.6"); err != nil {
		t.Fatal(err)
	}
	if e := tr.entries["usr/lib/x86_64-linux-gnu/libm.so.6"]; e == nil || e.link != "libm.so.6.0" {
		t.Errorf("the library's link is missing: %+v", e)
	}
	if e := tr.entries["usr/lib/x86_64-linux-gnu/libm.so.6.0"]; e == nil || e.typ != tar.TypeReg {
		t.Errorf("the library itself is missing: %+v", e)
	}
}

// TestNodeScriptsParse checks the scripts the node runs at boot with
// bash -n, and the CNI configuration as JSON.
func TestNodeScriptsParse(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipped, not passed: no bash here to check the node's scripts with")
	}
	for name, s := range map[string]string{"import": importImagesScript, "oom": oomScoreAdjScript, "guard": serviceGuardScript} {
		cmd := exec.Command(bash, "-n")
		cmd.Stdin = strings.NewReader(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s script: %v: %s", name, err, out)
		}
	}
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(cniConflist), &conf); err != nil || len(conf.Plugins) != 2 || !strings.Contains(cniConflist, podSubnet) {
		t.Errorf("conflist: %v\n%s", err, cniConflist)
	}
}

// TestUnfinishedBuildIsUnmountedBeforeRemoval mounts a tmpfs where an
// interrupted debootstrap leaves /proc mounted and removes the directory.
func TestUnfinishedBuildIsUnmountedBeforeRemoval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "base-x.tmp")
	proc := filepath.Join(dir, "rootfs", "proc")
	if err := os.MkdirAll(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", proc, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("skipped, not passed: cannot mount here (%v)", err)
	}
	os.WriteFile(filepath.Join(proc, "keep"), []byte("x"), 0o644)
	if err := removeBuildDir(dir); err != nil {
		syscall.Unmount(proc, syscall.MNT_DETACH)
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
	raw, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(raw), proc) {
		syscall.Unmount(proc, syscall.MNT_DETACH)
		t.Errorf("%s is still mounted", proc)
	}
}
