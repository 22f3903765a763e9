package toolchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
)

// versionTimeout bounds one version probe; a binary that hangs on
// --version is not the binary we pinned.
const versionTimeout = 30 * time.Second

// verify checks a binary against its pin: the exact bytes where the pin
// has a hash, the Go build info, and what its version command says.
func (r *resolver) verify(ctx context.Context, pin ToolPin, bin, sum string) error {
	if pin.SHA256 != "" && sum != pin.SHA256 {
		return fmt.Errorf("%s has sha256 %s but the pin says %s: not the pinned build", bin, sum, pin.SHA256)
	}
	if err := r.verifyBuildInfo(pin, bin); err != nil {
		return err
	}
	return r.verifyVersion(ctx, pin, bin)
}

func (r *resolver) verifyBuildInfo(pin ToolPin, bin string) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: no Go build info (not a Go binary built from the pin?): %w", bin, err)
	}
	switch {
	case pin.Source != nil:
		if bi.Main.Path != pin.Source.Module {
			return fmt.Errorf("%s: built from module %s, the pin says %s", bin, bi.Main.Path, pin.Source.Module)
		}
		if bi.GoVersion != pin.Source.Go {
			return fmt.Errorf("%s: built with %s, the pin says %s", bin, bi.GoVersion, pin.Source.Go)
		}
	case pin.Wrapper != nil && pin.Wrapper.Module == "":
		// A main of gauntlet's own (main_file, no upstream module): the
		// tool module itself is the main module.
		want, err := r.o.pins.toolModulePath(pin)
		if err != nil {
			return err
		}
		if bi.Main.Path != want {
			return fmt.Errorf("%s: built as module %s, the tool module is %s", bin, bi.Main.Path, want)
		}
	case pin.Wrapper != nil:
		mod := pin.Wrapper.Module
		ver, err := r.o.pins.wrapperRequire(pin)
		if err != nil {
			return err
		}
		// A main package built from a dependency records that module as
		// its main module; gauntlet's own mains (etcd) list it as a dep.
		for _, d := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if d.Path == mod {
				if d.Version != ver {
					return fmt.Errorf("%s: built from %s@%s, the pin says %s", bin, mod, d.Version, ver)
				}
				return nil
			}
		}
		return fmt.Errorf("%s: build info has no %s: not built from the pinned tool module", bin, mod)
	}
	return nil
}

func (r *resolver) verifyVersion(ctx context.Context, pin ToolPin, bin string) error {
	if len(pin.VersionArgs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, pin.VersionArgs...)
	cmd.Env = append(cleanEnv(os.Environ()), "TF_CLI_CONFIG_FILE="+r.probeConfig, "CHECKPOINT_DISABLE=1")
	cmd.Dir = os.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(pin.VersionArgs, " "), err, firstLine(out))
	}
	if !bytes.Contains(out, []byte(pin.VersionWant)) {
		return fmt.Errorf("%s reports %q, want %q: wrong version; run `go run ./tools/gauntlet toolchain` to resolve the pinned one",
			bin, firstLine(out), pin.VersionWant)
	}
	return nil
}

// cleanEnv drops variables that would make a probed or driven CLI read the
// machine's own configuration instead of gauntlet's.
func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TF_CLI_CONFIG_FILE" || k == "TERRAFORM_CONFIG" || k == "TF_PLUGIN_CACHE_DIR" || strings.HasPrefix(k, "TF_LOG") || k == "TF_CLI_ARGS" || strings.HasPrefix(k, "TF_CLI_ARGS_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeFileIfChanged writes b to path unless it already holds exactly b,
// so concurrent runs reading the file never see it half-written by a
// rewrite of the same content.
func writeFileIfChanged(path string, b []byte) (string, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return path, nil
	}
	// Two goroutines of one process (runs side by side) may write the
	// file at once.
	return path, atomicfile.Write(path, b, 0o644)
}
