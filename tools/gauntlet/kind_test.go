package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/nodeimage"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// TestRepinRewritesOnlyTheNodeImagePins re-pins a copy of the pins file
// and reads it back: the digest and the locked packages change, nothing
// else does.
func TestRepinRewritesOnlyTheNodeImagePins(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "..", pinsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "tools"), os.DirFS(filepath.Join("..", "..", "third_party", "tools"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pins.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	tools := os.DirFS(filepath.Join(dir, "tools"))
	before, err := toolchain.ParsePins(raw, tools)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := before.BuiltNodeImage()
	res := &nodeimage.Result{
		Image:    before.Kind.NodeBuild.Repository + ":" + before.Kind.NodeBuild.Kubernetes + "@sha256:" + strings.Repeat("ab", 32),
		Packages: []string{"bash=5.2.15-2+b9", "libc6=2.36-9+deb12u99"},
	}
	if err := repinFile(path, old.Image, res); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(path)
	after, err := toolchain.ParsePins(out, tools)
	if err != nil {
		t.Fatal(err)
	}
	if img, _ := after.BuiltNodeImage(); img.Image != res.Image {
		t.Errorf("node image %s, want %s", img.Image, res.Image)
	}
	if got := strings.Join(after.Kind.NodeBuild.Debian.Locked, " "); got != "bash=5.2.15-2+b9 libc6=2.36-9+deb12u99" {
		t.Errorf("locked %s", got)
	}
	after.Kind.NodeImages, before.Kind.NodeImages = nil, nil
	after.Kind.NodeBuild.Debian.Locked, before.Kind.NodeBuild.Debian.Locked = nil, nil
	a, _ := marshalPins(after)
	b, _ := marshalPins(before)
	if string(a) != string(b) {
		t.Error("re-pinning changed more than the node image's digest and locked packages")
	}
	if err := repinFile(path, "gauntlet.invalid/kind-node:v0@sha256:"+strings.Repeat("0", 64), res); err == nil {
		t.Error("re-pinning an image the file does not pin was accepted")
	}
}
