package toolchain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-version"
	install "github.com/hashicorp/hc-install"
	hcfs "github.com/hashicorp/hc-install/fs"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
	"github.com/hashicorp/hc-install/src"
)

// releasesTimeout bounds the online attempt so an offline machine falls
// through to the source build quickly.
const releasesTimeout = 2 * time.Minute

// fromHCInstall asks hc-install for the exact pinned terraform: first on
// PATH, then (unless offline) from HashiCorp's releases. A copy is only
// accepted if it passes the same verification as a build, and is then
// copied into the cache so later runs do not depend on PATH.
func (r *resolver) fromHCInstall(ctx context.Context, pin ToolPin, entry, bin string) (Binary, error) {
	if pin.Name != product.Terraform.Name {
		return Binary{}, fmt.Errorf("hc-install only knows terraform, not %s", pin.Name)
	}
	v, err := version.NewVersion(pin.Version)
	if err != nil {
		return Binary{}, err
	}
	found, err := install.NewInstaller().Ensure(ctx, []src.Source{&hcfs.ExactVersion{Product: product.Terraform, Version: v}})
	if err == nil {
		if b, err := r.adopt(ctx, pin, entry, bin, found, "hc-install (PATH)"); err == nil {
			return b, nil
		} else {
			r.o.logger.Infof("%s: %s on PATH is not the pinned build: %v", pin.Name, found, err)
		}
	}
	if r.o.offline {
		return Binary{}, fmt.Errorf("not on PATH as the pinned build, and offline (%s=1)", OfflineEnv)
	}
	r.o.logger.Infof("%s %s: trying HashiCorp's releases (network, at most %s)", pin.Name, pin.Version, releasesTimeout)
	dl := filepath.Join(entry, "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return Binary{}, err
	}
	defer os.RemoveAll(dl)
	rctx, cancel := context.WithTimeout(ctx, releasesTimeout)
	defer cancel()
	got, err := install.NewInstaller().Ensure(rctx, []src.Source{&releases.ExactVersion{Product: product.Terraform, Version: v, InstallDir: dl, Timeout: releasesTimeout}})
	if err != nil {
		return Binary{}, fmt.Errorf("releases: %w", err)
	}
	return r.adopt(ctx, pin, entry, bin, got, "hc-install (releases)")
}

func (r *resolver) adopt(ctx context.Context, pin ToolPin, entry, bin, found, origin string) (Binary, error) {
	sum, _, err := fileSHA256(found)
	if err != nil {
		return Binary{}, err
	}
	if err := r.verify(ctx, pin, found, sum); err != nil {
		return Binary{}, err
	}
	if err := copyFile(found, bin+".tmp", 0o755); err != nil {
		return Binary{}, err
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return Binary{}, err
	}
	return r.record(ctx, pin, entry, bin, origin, nil)
}
