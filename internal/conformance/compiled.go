package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// RunPackage is what a recorded run executes: gauntlet.Run and everything
// it imports (runner, stages, clusters, engine, toolchain, result model).
// The CLI around it only parses flags into options a run records in its
// inputs and run.json, and renders the result (evidence, status, matrix,
// mutants): a change there alters no measurement, so no proof depends on
// it. TestRunClosure checks the boundary.
const RunPackage = "./pkg/gauntlet"

// compiledBuildTimeout bounds `go list -export`, which compiles the run's
// closure (minutes on a cold build cache, seconds warm).
const compiledBuildTimeout = 15 * time.Minute

// listedPackage is what `go list -export -deps -json` says of a package.
type listedPackage struct {
	Dir, ImportPath, Export, BuildID string
	Standard                         bool
	Module                           *struct {
		Path, Version string
		Main          bool
	}
	GoFiles, CgoFiles, CFiles, HFiles, SFiles, EmbedFiles []string
}

// closure is a run's code by compiled content, with the source files
// behind it for naming what changed.
type closure struct {
	// compiled maps each main-module package (by directory, "pkg/gauntlet/stage"),
	// each dependency module ("sigs.k8s.io/yaml@v1.4.0") and the standard
	// library ("std") to a hash of its compiled content.
	compiled map[string]string
	// code maps each main-module source file of the closure to its sha256.
	code map[string]string
}

// compiledClosure compiles the run's closure the way a run is built (for
// Linux, -trimpath so that the checkout's path is not part of it) and
// keys each package by its content ID: the hash cmd/go takes of the
// compiled archive (export data and object code) with its action ID
// blanked, so an edit that compiles to the same bytes - a comment or a
// reformatting on the same lines - keeps it, and anything the compiler
// sees differently (code, a type, an embedded file, a line number in the
// tables a stack trace reads, a dependency's version, the compiler)
// changes it. Source text is never compared.
func compiledClosure(ctx context.Context, dir, pkg string) (*closure, error) {
	ctx, cancel := context.WithTimeout(ctx, compiledBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-export", "-deps",
		"-json=Dir,ImportPath,Export,BuildID,Standard,Module,GoFiles,CgoFiles,CFiles,HFiles,SFiles,EmbedFiles", pkg)
	cmd.Dir = dir
	// GOFLAGS is replaced, not added to: a developer's -race or -gcflags
	// would compile other code than a run's.
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOFLAGS=-trimpath")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export -deps %s (compiling the run's closure): %w: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	root, err := realAbs(dir)
	if err != nil {
		return nil, err
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return buildClosure(root, pkgs)
}

func buildClosure(root string, pkgs []listedPackage) (*closure, error) {
	c := &closure{compiled: map[string]string{}, code: map[string]string{}}
	groups := map[string][]string{} // std and dependency modules: their packages' content IDs
	for _, p := range pkgs {
		content, ok := contentID(p.BuildID)
		if p.ImportPath == "unsafe" && p.BuildID == "" {
			content, ok = "builtin", true // the compiler's own: nothing is built
		}
		if !ok {
			return nil, fmt.Errorf("package %s has no build ID %q to key its compiled content by", p.ImportPath, p.BuildID)
		}
		switch {
		case p.Standard:
			groups["std"] = append(groups["std"], p.ImportPath+" "+content)
		case p.Module == nil:
			return nil, fmt.Errorf("package %s belongs to no module", p.ImportPath)
		case !p.Module.Main:
			mod := p.Module.Path + "@" + p.Module.Version
			groups[mod] = append(groups[mod], p.ImportPath+" "+content)
		default:
			rel, files, pinned, err := mainFiles(root, p)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				h, err := hashFile(filepath.Join(root, f))
				if err != nil {
					return nil, err
				}
				c.code[f] = h
			}
			if pinned {
				// Its compiled content carries the pins it embeds, which
				// count per pin (a kind image bump must leave local proofs
				// alone): the package is its Go source instead.
				c.compiled[rel] = "source " + hashOfFiles(files, c.code)
			} else {
				c.compiled[rel] = content
			}
		}
	}
	for k, ids := range groups {
		sort.Strings(ids)
		c.compiled[k] = hashBytes([]byte(strings.Join(ids, "\n")))
	}
	return c, nil
}

// contentID is the second half of a package's build ID ("action/content").
func contentID(buildID string) (string, bool) {
	action, content, ok := strings.Cut(buildID, "/")
	return content, ok && action != "" && content != "" && !strings.Contains(content, "/")
}

// mainFiles names a main-module package's directory and source files
// relative to root, leaving out files it embeds from third_party/ (pins);
// pinned reports whether it embeds any.
func mainFiles(root string, p listedPackage) (rel string, files []string, pinned bool, err error) {
	rel, err = filepath.Rel(root, p.Dir)
	if err != nil {
		return "", nil, false, err
	}
	rel = filepath.ToSlash(rel)
	for _, l := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.SFiles} {
		for _, f := range l {
			files = append(files, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	for _, f := range p.EmbedFiles {
		path := filepath.ToSlash(filepath.Join(rel, f))
		if strings.HasPrefix(path, "third_party/") {
			pinned = true
			continue
		}
		files = append(files, path)
	}
	sort.Strings(files)
	return rel, files, pinned, nil
}

func hashOfFiles(files []string, code map[string]string) string {
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f + " " + code[f] + "\n")
	}
	return hashBytes([]byte(b.String()))
}

// changedCompiled names what a run's compiled closure and the tree's now
// differ in: for a main-module package, the files of it that changed (or
// that only what it imports did); for a dependency, the module.
func changedCompiled(then, now *Inputs) []string {
	var out []string
	for _, k := range unionKeys(then.Compiled, now.Compiled) {
		a, okA := then.Compiled[k]
		b, okB := now.Compiled[k]
		switch {
		case !okA:
			out = append(out, "compiled "+k+" (added to the run's closure)")
		case !okB:
			out = append(out, "compiled "+k+" (no longer in the run's closure)")
		case a != b:
			out = append(out, describeCompiled(k, then.Code, now.Code))
		}
	}
	return out
}

func describeCompiled(pkg string, then, now map[string]string) string {
	if pkg == "std" || strings.Contains(pkg, "@") {
		return "compiled " + pkg
	}
	var files []string
	for _, f := range unionKeys(then, now) {
		if path.Dir(f) == pkg && then[f] != now[f] {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return "compiled " + pkg + " (none of its files changed: what it imports did, or the compiler)"
	}
	return strings.Join(files, ", ") + " (compiled " + pkg + " differs)"
}

func realAbs(dir string) (string, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root, nil
}
