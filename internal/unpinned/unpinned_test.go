package unpinned

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeProxy serves the releases listed, each a module folder with the
// files given (".go-version", "go.mod").
func fakeProxy(t *testing.T, files map[string]map[string]string) Lookup {
	t.Helper()
	root := t.TempDir()
	return func(_ context.Context, mod, version string) (Module, error) {
		fs, ok := files[version]
		if !ok {
			return Module{}, fmt.Errorf("%s@%s: not found", mod, version)
		}
		dir := filepath.Join(root, version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Module{}, err
		}
		for name, body := range fs {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return Module{}, err
			}
		}
		v := version
		if !strings.HasPrefix(v, "v1.") { // a commit: the proxy answers with its pseudo-version
			v = "v1.11.0-0.20250601120000-" + version
		}
		return Module{Version: v, Sum: "h1:" + version + "=", Dir: dir}, nil
	}
}

const tofuMod = "module github.com/opentofu/opentofu\n\ngo 1.24\n"

func TestPlan(t *testing.T) {
	look := fakeProxy(t, map[string]map[string]string{
		"v1.10.7":      {".go-version": "1.24.4\n", "go.mod": tofuMod},
		"v1.12.0":      {"go.mod": "module github.com/opentofu/opentofu\n\ngo 1.25.3\n"},
		"abcdef123456": {".go-version": "1.24.6", "go.mod": tofuMod},
		"v1.13.0":      {"go.mod": "module github.com/opentofu/opentofu\n\ngo 1.25\n"},
		"v1.9.5": {".go-version": "1.22.5", "go.mod": "module github.com/hashicorp/terraform\n\ngo 1.22\n\n" +
			"replace github.com/hashicorp/terraform/internal/backend/remote-state/kubernetes => ./internal/backend/remote-state/kubernetes\n"},
	})
	b := Builder{Lookup: look}
	ctx := context.Background()
	pin, e, err := b.Plan(ctx, "tofu@1.10.7")
	if err != nil {
		t.Fatal(err)
	}
	if pin.Source.Go != "go1.24.4" || pin.Source.Version != "v1.10.7" || pin.Source.Package != "./cmd/tofu" || pin.Engine != "tofu" {
		t.Errorf("pin %+v %+v: want go1.24.4 from .go-version, v1.10.7, ./cmd/tofu", pin, *pin.Source)
	}
	if pin.VersionWant != `"terraform_version": "1.10.7"` || e.Sum != "h1:v1.10.7=" || e.Engine != "tofu" || e.Version != "1.10.7" {
		t.Errorf("want the exact version checked and the hash kept: %q %+v", pin.VersionWant, e)
	}
	if _, e, err := b.Plan(ctx, "tofu@v1.12.0"); err != nil || e.Go != "go1.25.3" {
		t.Errorf("no .go-version: go.mod's go line with a patch, got %+v %v", e, err)
	}
	if _, e, err := b.Plan(ctx, "tofu@abcdef123456"); err != nil || e.Version != "1.11.0-0.20250601120000-abcdef123456" {
		t.Errorf("a commit is built as its pseudo-version, got %+v %v", e, err)
	} else if pin, _, _ := b.Plan(ctx, "tofu@abcdef123456"); pin.VersionWant != `"terraform_version"` {
		t.Errorf("a commit's version is not known before it is built: want only a terraform-compatible CLI, got %q", pin.VersionWant)
	}
	for spec, want := range map[string]string{
		"tofu@1.13.0":      "names a Go release",
		"terraform@1.9.5":  "pin it in third_party/pins.json",
		"tofu@1.99.0":      "does not serve it",
		"pulumi@1.0.0":     "tofu or terraform",
		"tofu":             "ENGINE@VERSION",
		"terraform@1.10.0": "does not serve it",
	} {
		if _, _, err := b.Plan(ctx, spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Plan(%s): want an error saying %q, got %v", spec, want, err)
		}
	}
}

func TestReleases(t *testing.T) {
	served := map[string]map[string]string{}
	// v1.10.1 refused (as this machine's proxy does), v1.10.2 served
	// after it; v1.10.3-5 absent end the series.
	for _, v := range []string{"v1.9.0", "v1.9.1", "v1.9.2", "v1.9.3", "v1.9.4", "v1.10.0", "v1.10.2", "v1.10.6", "v1.11.0"} {
		served[v] = map[string]string{"go.mod": tofuMod}
	}
	b := Builder{Lookup: fakeProxy(t, served)}
	for _, c := range []struct {
		from, to string
		want     []string
	}{
		{"1.9.3", "1.10.2", []string{"1.9.3", "1.9.4", "1.10.0", "1.10.2"}},
		{"1.10.2", "1.9.3", []string{"1.9.3", "1.9.4", "1.10.0", "1.10.2"}},
		{"1.9.4", "1.11.0", []string{"1.9.4", "1.10.0", "1.10.2", "1.11.0"}},
	} {
		got, err := b.Releases(context.Background(), "tofu", c.from, c.to)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Releases(%s, %s) = %v, %v; want %v", c.from, c.to, got, err, c.want)
		}
	}
	if _, err := b.Releases(context.Background(), "tofu", "1.9.4", "abcdef"); err == nil {
		t.Error("a commit is not a release to list from")
	}
}
