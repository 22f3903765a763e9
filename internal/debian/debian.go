// Package debian fetches pinned Debian packages with the host's apt
// sources into gauntlet's cache, without touching the host's package
// state: apt runs with its own lists and archive directories, and packages
// are extracted with dpkg-deb, never installed.
package debian

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Apt runs apt-get with state of its own under Dir.
type Apt struct {
	// Dir holds the lists and archives apt writes (the host's stay as they
	// are); the host's sources and keyrings are used as configured.
	Dir string
}

// args are the options that keep apt's state inside a.Dir.
func (a Apt) args() []string {
	return []string{
		"-q",
		"-o", "Dir::State::Lists=" + filepath.Join(a.Dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(a.Dir, "cache"),
		"-o", "Debug::NoLocking=1",
		// The downloads land in gauntlet's cache, which apt's sandbox
		// user may not be able to write.
		"-o", "APT::Sandbox::User=root",
	}
}

func (a Apt) prepare() error {
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.Dir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Update refreshes apt's own package lists from the host's sources.
func (a Apt) Update(ctx context.Context) error {
	if err := a.prepare(); err != nil {
		return err
	}
	_, err := run(ctx, "", "apt-get", append(a.args(), "update")...)
	return err
}

// Download fetches the exact packages ("name=version") into dst and
// returns their paths by package name. Packages already in dst are kept.
// apt checks every file against the signed index it came from.
func (a Apt) Download(ctx context.Context, dst string, pkgs []string) (map[string]string, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	have, err := debsIn(dst)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, p := range pkgs {
		if _, ok := have[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if err := a.Update(ctx); err != nil {
			return nil, err
		}
		if _, err := run(ctx, dst, "apt-get", append(append(a.args(), "download"), missing...)...); err != nil {
			return nil, fmt.Errorf("%w (the pinned versions must still be in the host's apt sources; bump them in third_party/pins.json if Debian moved)", err)
		}
		if have, err = debsIn(dst); err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	for _, p := range pkgs {
		path, ok := have[p]
		if !ok {
			return nil, fmt.Errorf("apt-get download %s left no matching .deb in %s", p, dst)
		}
		name, _, _ := strings.Cut(p, "=")
		out[name] = path
	}
	return out, nil
}

// debsIn maps "name=version" to the .deb files in dir, read from each
// package's own control data (file names escape epochs).
func debsIn(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.deb"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := exec.Command("dpkg-deb", "--show", "--showformat", "${Package}=${Version}", f).Output()
		if err != nil {
			continue // a partial download: apt fetches it again
		}
		out[strings.TrimSpace(string(b))] = f
	}
	return out, nil
}

// Extract unpacks a .deb's files into dir (dpkg-deb -x: no maintainer
// scripts, nothing registered with the host's dpkg).
func Extract(ctx context.Context, deb, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err := run(ctx, "", "dpkg-deb", "-x", deb, dir)
	return err
}

// MirrorURI is the URI the host's apt sources fetch suite's main
// component from, e.g. for debootstrap. apt itself reads the sources, in
// whichever format they are written.
func MirrorURI(ctx context.Context, suite string) (string, error) {
	out, err := run(ctx, "", "apt-get", "indextargets", "--no-release-info", "--format", "$(REPO_URI)|$(RELEASE)|$(COMPONENT)|$(TARGET_OF)")
	if err != nil {
		return "", err
	}
	return mirrorFrom(out, suite)
}

// mirrorFrom picks suite's main component out of apt-get indextargets
// lines "URI|RELEASE|COMPONENT|TARGET_OF".
func mirrorFrom(out, suite string) (string, error) {
	var uris []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) == 4 && f[1] == suite && f[2] == "main" && f[3] == "deb" {
			uris = append(uris, f[0])
		}
	}
	if len(uris) == 0 {
		return "", fmt.Errorf("the host's apt sources serve no %s/main (apt-get indextargets): add it to /etc/apt/sources.list.d", suite)
	}
	sort.Strings(uris)
	return uris[0], nil
}

// run runs a command, returning its stdout; the error carries the tail of
// its output.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail(stderr.String()+stdout.String(), 5))
	}
	return stdout.String(), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
