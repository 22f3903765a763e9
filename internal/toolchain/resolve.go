package toolchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/flock"
)

type resolver struct {
	o           *options
	dir         string
	goos        string
	goarch      string
	probeConfig string
}

// stamp records what a cache entry holds, next to the binary.
type stamp struct {
	Tool    string            `json:"tool"`
	Version string            `json:"version"`
	SHA256  string            `json:"sha256"`
	Size    int64             `json:"size"`
	Origin  string            `json:"origin"`
	Assets  map[string]string `json:"assets,omitempty"`
}

func (r *resolver) resolve(ctx context.Context, name string) (Binary, error) {
	pin, _ := r.o.pins.Tool(name)
	if path, ok := r.o.overrides[name]; ok {
		return r.verifyGiven(ctx, pin, path)
	}
	entry := filepath.Join(r.dir, "toolchain", pin.Name, pin.Version+"-"+r.o.pins.key(pin, r.goos, r.goarch))
	if err := os.MkdirAll(entry, 0o755); err != nil {
		return Binary{}, err
	}
	unlock, err := flock.Lock(ctx, entry+".lock", 250*time.Millisecond, func() {
		r.o.logger.Infof("%s: waiting for another process resolving it", pin.Name)
	})
	if err != nil {
		return Binary{}, err
	}
	defer unlock()

	bin := filepath.Join(entry, pin.Name)
	if b, err := r.fromCache(ctx, pin, entry, bin); err == nil {
		return b, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		r.o.logger.Warnf("%s: cached copy rejected, resolving again: %v", pin.Name, err)
	}
	if seeded, err := r.fromSeed(ctx, pin, entry, bin); err != nil {
		return Binary{}, err
	} else if seeded {
		return r.fromCache(ctx, pin, entry, bin)
	}
	if pin.HCInstall {
		b, err := r.fromHCInstall(ctx, pin, entry, bin)
		if err == nil {
			return b, nil
		}
		r.o.logger.Infof("%s: hc-install found no pinned copy: %v", pin.Name, err)
	}
	if r.o.noBuild {
		return Binary{}, fmt.Errorf("%s %s is not in the cache %s: run `go run ./tools/gauntlet toolchain` to build it", pin.Name, pin.Version, r.dir)
	}
	assets, err := r.build(ctx, pin, entry, bin)
	if err != nil {
		return Binary{}, err
	}
	return r.record(ctx, pin, entry, bin, "build", assets)
}

// fromCache accepts a cache entry only if its stamp, hash and version
// still hold; anything else is a miss (os.ErrNotExist) or a rejection.
func (r *resolver) fromCache(ctx context.Context, pin ToolPin, entry, bin string) (Binary, error) {
	raw, err := os.ReadFile(filepath.Join(entry, "stamp.json"))
	if err != nil {
		return Binary{}, err
	}
	var st stamp
	if err := json.Unmarshal(raw, &st); err != nil {
		return Binary{}, fmt.Errorf("stamp: %w", err)
	}
	sum, size, err := fileSHA256(bin)
	if err != nil {
		return Binary{}, err
	}
	if sum != st.SHA256 || size != st.Size {
		return Binary{}, fmt.Errorf("%s changed since it was stamped (sha256 %s, stamp says %s)", bin, sum, st.SHA256)
	}
	if err := r.verify(ctx, pin, bin, sum); err != nil {
		return Binary{}, err
	}
	for _, a := range st.Assets {
		if _, err := os.Stat(a); err != nil {
			return Binary{}, fmt.Errorf("asset: %w", err)
		}
	}
	return Binary{Name: pin.Name, Version: pin.Version, Path: bin, SHA256: sum, Origin: "cache", Assets: st.Assets}, nil
}

func (r *resolver) verifyGiven(ctx context.Context, pin ToolPin, path string) (Binary, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Binary{}, err
	}
	sum, _, err := fileSHA256(abs)
	if err != nil {
		return Binary{}, fmt.Errorf("given binary: %w", err)
	}
	if err := r.verifyVersion(ctx, pin, abs); err != nil {
		return Binary{}, err
	}
	if pin.SHA256 != "" && sum != pin.SHA256 {
		r.o.logger.Warnf("%s: given binary %s reports %s but is not the pinned build (sha256 %s, pin %s)", pin.Name, abs, pin.Version, sum, pin.SHA256)
	}
	return Binary{Name: pin.Name, Version: pin.Version, Path: abs, SHA256: sum, Origin: "path"}, nil
}

// record verifies a freshly placed binary and stamps the entry.
func (r *resolver) record(ctx context.Context, pin ToolPin, entry, bin, origin string, assets map[string]string) (Binary, error) {
	sum, size, err := fileSHA256(bin)
	if err != nil {
		return Binary{}, err
	}
	if err := r.verify(ctx, pin, bin, sum); err != nil {
		return Binary{}, err
	}
	st := stamp{Tool: pin.Name, Version: pin.Version, SHA256: sum, Size: size, Origin: origin, Assets: assets}
	raw, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(filepath.Join(entry, "stamp.json"), raw, 0o644); err != nil {
		return Binary{}, err
	}
	return Binary{Name: pin.Name, Version: pin.Version, Path: bin, SHA256: sum, Origin: origin, Assets: assets}, nil
}
