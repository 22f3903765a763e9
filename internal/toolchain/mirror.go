package toolchain

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
)

// mirror lays every resolved provider out as an unpacked filesystem mirror
// under each registry host (tofu and terraform expand "hashicorp/x" to
// different hosts, and the host directories must be real directories), and
// writes the CLI config that names only that mirror: with no direct
// installation method, nothing is ever fetched and a missing provider
// fails fast.
func (r *resolver) mirror(tc *Toolchain) error {
	var have []Provider
	for _, p := range r.o.pins.Providers {
		if _, ok := tc.bins[p.Tool]; ok {
			have = append(have, p)
		}
	}
	if len(have) == 0 {
		return nil
	}
	root := filepath.Join(r.dir, "toolchain", "mirror")
	platform := r.goos + "_" + r.goarch
	for _, p := range have {
		b := tc.bins[p.Tool]
		for _, host := range r.o.pins.ProviderHosts {
			dir := filepath.Join(root, host, p.Namespace, p.Type, p.Version, platform)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			dst := filepath.Join(dir, fmt.Sprintf("terraform-provider-%s_v%s_x5", p.Type, p.Version))
			if err := placeLink(b.Path, dst); err != nil {
				return fmt.Errorf("%s/%s on %s: %w", p.Namespace, p.Type, host, err)
			}
		}
	}
	cfg := "# Written by gauntlet's toolchain: providers come from this mirror only.\n" +
		"provider_installation {\n  filesystem_mirror {\n    path = " + strconv.Quote(root) + "\n  }\n}\n" +
		"disable_checkpoint = true\n"
	path, err := writeFileIfChanged(filepath.Join(r.dir, "toolchain", "cli.tfrc"), []byte(cfg))
	if err != nil {
		return err
	}
	tc.MirrorDir, tc.CLIConfig = root, path
	return nil
}

// placeLink makes dst the same file as src: a hard link where it can,
// else a copy. An existing dst that already is src is left alone, so
// working directories symlinked into the mirror stay valid.
func placeLink(src, dst string) error {
	si, err := os.Stat(src)
	if err != nil {
		return err
	}
	if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
		return nil
	}
	// Two processes, or two runs of one process, may lay the mirror out
	// at once.
	return atomicfile.Place(dst, func(tmp string) error {
		if err := os.Link(src, tmp); err != nil {
			return copyFile(src, tmp, 0o755)
		}
		return nil
	})
}
