package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	thirdparty "github.com/gauntlet-k8s/gauntlet/third_party"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func versionCommand() cli.Command {
	return cli.Command{
		Name:    "version",
		Summary: "the gauntlet commit, the pins' digest and the Go version",
		Doc: "Prints the commit gauntlet was built from (the binary's VCS stamp: vcs.revision, and whether the tree was modified; " +
			"a binary with no stamp - go run, Bazel, -buildvcs=false, a git worktree - says so and reads the checkout in the current " +
			"directory instead), the " +
			"sha256 of the third_party/pins.json compiled into it (and whether ./" + pinsFile + " on disk matches it), and the Go " +
			"version it was built with.",
		Examples: []cli.Example{{What: "what this binary is", Command: "gauntlet version"}},
		Setup: func(fs *cli.FlagSet) cli.Action {
			return func(ctx context.Context, _ []string) error {
				info, _ := debug.ReadBuildInfo()
				return writeVersion(ctx, os.Stdout, info, os.DirFS("."))
			}
		},
	}
}

// writeVersion says which gauntlet this is: its commit from the build's
// VCS stamp (else the checkout at cwd, said as such), the compiled-in
// pins' digest beside the one on disk in cwd, and the Go version.
func writeVersion(ctx context.Context, w io.Writer, info *debug.BuildInfo, cwd fs.FS) error {
	commit := stampedCommit(info)
	if commit == "" {
		commit = checkoutCommit(ctx)
	}
	compiled, err := fs.ReadFile(thirdparty.Files, "pins.json")
	if err != nil {
		return fmt.Errorf("the compiled-in pins: %w", err)
	}
	pins := "sha256:" + digest(compiled) + " (" + pinsFile + " compiled in)"
	switch disk, err := fs.ReadFile(cwd, pinsFile); {
	case errors.Is(err, fs.ErrNotExist):
		pins += "; no " + pinsFile + " in . to compare"
	case err != nil:
		return fmt.Errorf("read %s: %w", pinsFile, err)
	case bytes.Equal(disk, compiled):
		pins += "; ./" + pinsFile + " is the same"
	default:
		pins += "; ./" + pinsFile + " differs: sha256:" + digest(disk) + " (rebuild to use it)"
	}
	goVersion := runtime.Version()
	if info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	_, err = fmt.Fprintf(w, "gauntlet %s\npins     %s\ngo       %s %s/%s\n", commit, pins, goVersion, runtime.GOOS, runtime.GOARCH)
	return err
}

// checkoutCommit is the commit of the checkout in ., for a binary with
// no VCS stamp.
func checkoutCommit(ctx context.Context) string {
	g := conformance.Git{Dir: "."}
	head, err := g.Head(ctx)
	if err != nil {
		return "unknown (the binary has no VCS stamp and . is not a git checkout)"
	}
	if dirty, err := g.Dirty(ctx); err == nil && len(dirty) > 0 {
		head += " (modified)"
	}
	return head + " (read from the checkout in .: the binary carries no VCS stamp, as from go run, Bazel, -buildvcs=false or a git worktree)"
}

// stampedCommit is the build's vcs.revision, "(modified)" when
// vcs.modified says the tree had changes; empty without a stamp.
func stampedCommit(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	var rev, modified, at string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			at = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	if modified == "true" {
		rev += " (modified)"
	}
	if at != "" {
		rev += " committed " + at
	}
	return rev + " (stamped in the binary)"
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
