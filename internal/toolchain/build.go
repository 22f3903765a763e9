package toolchain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// build compiles a tool from its pin and leaves it at bin. It returns the
// assets placed beside it.
func (r *resolver) build(ctx context.Context, pin ToolPin, entry, bin string) (map[string]string, error) {
	logPath := filepath.Join(entry, "build.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	tmp := bin + ".tmp"
	var assets map[string]string
	if pin.Wrapper != nil {
		assets, err = r.buildWrapper(ctx, pin, entry, tmp, logf)
	} else {
		err = r.buildSource(ctx, pin, tmp, logf)
	}
	if err != nil {
		return nil, fmt.Errorf("build failed (log: %s): %w", logPath, err)
	}
	return assets, os.Rename(tmp, bin)
}

func (r *resolver) buildWrapper(ctx context.Context, pin ToolPin, entry, out string, logw io.Writer) (map[string]string, error) {
	w := pin.Wrapper
	dir := filepath.Join(r.dir, "build", pin.Name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for src, dst := range map[string]string{"tool.mod": "go.mod", "tool.sum": "go.sum"} {
		b, err := fs.ReadFile(r.o.pins.files, w.Dir+"/"+src)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			return nil, err
		}
	}
	pkg := w.Package
	if w.Main != "" {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(mainSources[w.Main]), 0o644); err != nil {
			return nil, err
		}
		pkg = "."
	}
	if w.MainFile != "" {
		b, err := fs.ReadFile(r.o.pins.files, w.Dir+"/"+w.MainFile)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), b, 0o644); err != nil {
			return nil, err
		}
		pkg = "."
	}
	if w.MainGo {
		names, err := r.o.pins.mainGoFiles(pin)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			b, err := fs.ReadFile(r.o.pins.files, w.Dir+"/"+n)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
				return nil, err
			}
		}
	}
	r.o.logger.Infof("%s %s: building %s from the tool module %s with %s", pin.Name, pin.Version, w.Package, w.Dir, r.o.pins.Go)
	if err := r.goCmd(ctx, pin.Name, dir, r.o.pins.Go, logw, "build", "-trimpath", "-ldflags="+pin.LDFlags, "-o", out, pkg); err != nil {
		return nil, err
	}
	if len(w.Assets) == 0 {
		return nil, nil
	}
	modDir, err := r.downloadDir(ctx, pin.Name, dir, r.o.pins.Go, w.AssetsModule, logw)
	if err != nil {
		return nil, err
	}
	assets := map[string]string{}
	for _, a := range w.Assets {
		dst := filepath.Join(entry, filepath.Base(a))
		if err := copyFile(filepath.Join(modDir, a), dst, 0o644); err != nil {
			return nil, fmt.Errorf("asset %s: %w", a, err)
		}
		assets[filepath.Base(a)] = dst
	}
	return assets, nil
}

func (r *resolver) buildSource(ctx context.Context, pin ToolPin, out string, logw io.Writer) error {
	s := pin.Source
	src := filepath.Join(r.dir, "src", pin.Name+"-"+pin.Version)
	dl := filepath.Join(r.dir, "build", "download")
	for _, d := range []string{src, dl} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	r.o.logger.Infof("%s %s: fetching %s@%s from the Go module proxy", pin.Name, pin.Version, s.Module, s.Version)
	modDir, err := r.downloadDir(ctx, pin.Name, dl, r.o.pins.Go, s.Module+"@"+s.Version, logw)
	if err != nil {
		return err
	}
	if err := copyTree(modDir, src); err != nil {
		return err
	}
	for path, ver := range s.Nested {
		nd, err := r.downloadDir(ctx, pin.Name, dl, r.o.pins.Go, s.Module+"/"+path+"@"+ver, logw)
		if err != nil {
			return fmt.Errorf("nested module %s: %w", path, err)
		}
		if err := copyTree(nd, filepath.Join(src, path)); err != nil {
			return err
		}
	}
	r.o.logger.Infof("%s %s: building %s with %s (minutes when cold)", pin.Name, pin.Version, s.Package, s.Go)
	return r.goCmd(ctx, pin.Name, src, s.Go, logw, "build", "-trimpath", "-ldflags="+pin.LDFlags, "-o", out, s.Package)
}

// downloadDir runs `go mod download -json` in dir and returns the module's
// directory in the module cache (verified against go.sum or the checksum
// database by the go command itself).
func (r *resolver) downloadDir(ctx context.Context, tool, dir, goVersion, mod string, logw io.Writer) (string, error) {
	var out strings.Builder
	if err := r.goCmd(ctx, tool, dir, goVersion, io.MultiWriter(logw, &out), "mod", "download", "-json", mod); err != nil {
		return "", err
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out.String()), &info); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", mod, info.Error)
	}
	return info.Dir, nil
}

// goCmd runs the go command with a pinned toolchain and an environment that
// the user's GOFLAGS, workspace or cgo setting cannot change, reporting
// progress every 30 s so a long cold build never looks hung.
func (r *resolver) goCmd(ctx context.Context, tool, dir, goVersion string, out io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(goEnv(os.Environ()),
		"GOTOOLCHAIN="+goVersion, "GOFLAGS=-mod=readonly -buildvcs=false", "GOWORK=off", "CGO_ENABLED=0",
		"GOOS="+r.goos, "GOARCH="+r.goarch)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("go %s: %w (is Go installed and on PATH?)", args[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
			}
			return nil
		case <-tick.C:
			r.o.logger.Infof("%s: go %s still running (%s)", tool, args[0], time.Since(start).Round(time.Second))
		}
	}
}

func goEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOTOOLCHAIN", "GOFLAGS", "GOWORK", "CGO_ENABLED", "GOOS", "GOARCH", "GO111MODULE", "GOEXPERIMENT", "GOAMD64":
			continue
		}
		out = append(out, kv)
	}
	return out
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, target, info.Mode().Perm()|0o200)
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
