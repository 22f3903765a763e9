package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A recorded run's inputs.json describes the tree; these checks make sure
// the process that ran is that tree's build, so a proof cannot come from
// other code than the one it names.

// buildFlags are the go command flags that change what is compiled, or
// how, without a trace in the tree: an overlay swaps files, a tag selects
// others, the rest change the code generated. inputs.json hashes the tree
// and CheckBinary rebuilds with the caller's flags, so a run built with one
// would prove code that inputs.json does not name.
var buildFlags = []string{"-overlay", "-tags", "-toolexec", "-gcflags", "-ldflags", "-asmflags", "-modfile", "-race", "-msan", "-asan", "-cover", "-covermode", "-coverpkg", "-pgo"}

// checkBuildFlags refuses GOFLAGS (from the environment or `go env -w`)
// that change the build, and a GOEXPERIMENT.
func checkBuildFlags(ctx context.Context, dir string) error {
	out, err := goCmd(ctx, dir, "env", "GOFLAGS", "GOEXPERIMENT")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	flags, exp := lines[0], ""
	if len(lines) > 1 {
		exp = strings.TrimSpace(lines[1])
	}
	for _, f := range strings.Fields(flags) {
		name, _, _ := strings.Cut(f, "=")
		name = "-" + strings.TrimLeft(name, "-")
		if slices.Contains(buildFlags, name) {
			return fmt.Errorf("GOFLAGS has %s, which changes what is compiled without a trace in the tree, so a proof would be about other code than its inputs name; record without it (GOFLAGS=%q, or `go env -u GOFLAGS`)", f, flags)
		}
	}
	if exp != "" {
		return fmt.Errorf("GOEXPERIMENT=%s changes what is compiled; record without it", exp)
	}
	return nil
}

// CheckModule refuses a build that takes code from outside the module: a
// go.work (its modules are not in the runner's closure, nor in go.sum) or
// a replace directive pointing at a directory outside the module. A
// replace by module version stays: go.mod and go.sum pin it and count as
// code.
func CheckModule(ctx context.Context, dir string) error {
	if err := checkBuildFlags(ctx, dir); err != nil {
		return err
	}
	work, err := goCmd(ctx, dir, "env", "GOWORK")
	if err != nil {
		return err
	}
	if work = strings.TrimSpace(work); work != "" && work != "off" {
		return fmt.Errorf("the build uses the workspace %s, whose modules the recorded inputs do not hash; record with GOWORK=off (or remove the go.work)", work)
	}
	out, err := goCmd(ctx, dir, "mod", "edit", "-json")
	if err != nil {
		return err
	}
	var mod struct {
		Replace []struct {
			Old struct{ Path string }
			New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal([]byte(out), &mod); err != nil {
		return fmt.Errorf("go mod edit -json: %w", err)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, r := range mod.Replace {
		if r.New.Version != "" {
			continue
		}
		target := r.New.Path
		if !filepath.IsAbs(target) {
			target = filepath.Join(root, target)
		}
		if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("go.mod replaces %s with %s, outside the module, which the recorded inputs do not hash; drop the replace (or vendor the code into the module) and commit", r.Old.Path, r.New.Path)
		}
	}
	return nil
}

// CheckBinary refuses an executable that is not the runner built from
// the tree at dir now (the caller has checked the tree is clean at HEAD):
// its sha256 must equal what `go run` or `go build` makes of RunnerPackage
// there. A binary built earlier, from another commit or from uncommitted
// changes, differs - and its proof would be about code the inputs do not
// name. Both builds are reproducible, and go run's is cached, so this
// costs a link at most.
//
// Not the binary's embedded VCS stamp (debug.ReadBuildInfo's vcs.revision
// and vcs.modified): `go run` never stamps one, nor does any build under
// -buildvcs=false (a GOFLAGS setting some machines carry), and a stamp names a
// commit without showing the binary was built from it alone - not with
// other flags, a go.work or an edited dependency. The hash shows all of it.
func CheckBinary(ctx context.Context, dir, exe string) error {
	have, err := fileSHA(exe)
	if err != nil {
		return fmt.Errorf("the running binary: %w", err)
	}
	// What `go run` builds: -exec hands the executable to sha256sum instead
	// of running it, while it exists (go run may build it in a temporary
	// directory it removes on exit).
	sum, err := exec.LookPath("sha256sum")
	if err != nil {
		return fmt.Errorf("find sha256sum: %w", err)
	}
	out, err := goCmd(ctx, dir, "run", "-exec", sum, RunnerPackage)
	if err != nil {
		return err
	}
	if f := strings.Fields(out); len(f) > 0 && f[0] == have {
		return nil
	}
	tmp, err := os.MkdirTemp("", "gauntlet-record-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "gauntlet")
	if _, err := goCmd(ctx, dir, "build", "-o", bin, RunnerPackage); err != nil {
		return err
	}
	if sha, err := fileSHA(bin); err == nil && sha == have {
		return nil
	}
	return fmt.Errorf("the running binary %s (sha256 %s) is not the runner built from this tree: it was built from another commit, uncommitted changes or other build flags; record with `go run %s run ... --record`, or rebuild it first (go build -o bin/gauntlet %s)",
		exe, shortHash(have), RunnerPackage, RunnerPackage)
}

func fileSHA(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goCmd runs the go command in dir, bounded: a cold build of the runner
// takes minutes on two busy cores.
func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
