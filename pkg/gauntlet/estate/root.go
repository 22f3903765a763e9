package estate

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/slashpath"
)

// Root is an estate's Terraform root materialised for one side of a run.
// Stages change it as the estate's life goes on (a moved block, a removed
// block, an added file); every text change asserts how often it matched,
// so a source that moved under a pin fails loudly instead of silently
// testing something else.
type Root struct {
	// Name is the root's name in the estate ("root" for one-root estates).
	Name string
	Dir  string
	// Base is the folder the root's tree lands in: Dir itself, or a folder
	// above it when the root calls modules from outside its own folder.
	Base string
	// Main is the estate's own file (the corpus file or the first of
	// Files) that edits apply to unless they name another.
	Main string
	// Applied are the deltas this root carries.
	Applied []Delta
}

// Materials is what a root is made from on one side of a run.
type Materials struct {
	// Fetched are the root's pinned files, verified (none for a root
	// written here).
	Fetched []Fetched
	// Substrate selects the deltas.
	Substrate string
	// Providers are the providers the providers file requires where the
	// root does not require them itself.
	Providers []ProviderPin
	// Supplied are every provider the toolchain supplies, for the checks
	// of what the root needs and for relax_providers (default:
	// Providers).
	Supplied []ProviderPin
	// Kubeconfig is the side's kubeconfig, for "${kubeconfig}" in
	// variables.
	Kubeconfig string
}

func (m Materials) supplied() []ProviderPin {
	if len(m.Supplied) > 0 {
		return m.Supplied
	}
	return m.Providers
}

// ProviderPin is a provider gauntlet pins, by local name.
type ProviderPin struct {
	Name, Source, Version string
}

// varsFile is the run-owned variables file gauntlet writes into a root.
const varsFile = "gauntlet.auto.tfvars.json"

// providersFile is the providers file gauntlet writes into a root.
const providersFile = "gauntlet_providers.tf"

// Materialise writes the named root of the estate into dir for one side:
// its files (whole, local modules included), the deltas for the
// substrate, the variables file and a providers file that adds only what
// the root does not bring itself.
func (s *Spec) Materialise(dir, name string, m Materials) (*Root, error) {
	var rs *RootSpec
	for _, r := range s.RootSpecs() {
		if r.Name == name {
			rs = &r
		}
	}
	if rs == nil {
		return nil, fmt.Errorf("estate %s: no root %q", s.Name, name)
	}
	base := dir
	// Files from "../../" land above the root's folder, which keeps the
	// folders' names for as many levels as they climb.
	rootDir, up := "", 0
	if rs.Source != nil {
		rootDir, up = rs.Source.Dir, rs.Source.Up()
	} else {
		rootDir, up = writtenRoot(rs.Files)
	}
	if up > 0 {
		segs := strings.Split(rootDir, "/")
		dir = filepath.Join(append([]string{base}, segs[len(segs)-up:]...)...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &Root{Name: name, Dir: dir, Base: base}
	write := func(rel string, b []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	}
	if rs.Source != nil {
		pinned := rs.Source.Pinned()
		if len(m.Fetched) != len(pinned) {
			return nil, fmt.Errorf("estate %s: root %s: %d verified files for %d pinned", s.Name, name, len(m.Fetched), len(pinned))
		}
		for i, f := range m.Fetched {
			if f.RootPath != pinned[i].RootPath {
				return nil, fmt.Errorf("estate %s: root %s: verified file %s where %s is pinned", s.Name, name, f.RootPath, pinned[i].RootPath)
			}
			b, err := os.ReadFile(f.File)
			if err != nil {
				return nil, fmt.Errorf("estate %s: %w", s.Name, err)
			}
			if err := write(f.RootPath, b); err != nil {
				return nil, err
			}
		}
		r.Main = pinned[0].RootPath
	} else {
		for i, f := range rs.Files {
			b, err := os.ReadFile(filepath.Join(s.Dir, f))
			if err != nil {
				return nil, fmt.Errorf("estate %s: %w", s.Name, err)
			}
			rel := path.Clean(f)
			if rootDir != "." {
				rel = slashpath.Rel(rootDir, rel)
			}
			if err := write(rel, b); err != nil {
				return nil, err
			}
			if i == 0 {
				r.Main = rel
			}
		}
	}
	last := s.ActedRoot("")
	for _, d := range s.Deltas {
		if len(d.Substrates) > 0 && !slices.Contains(d.Substrates, m.Substrate) {
			continue
		}
		if target := d.Root; target != name && !(target == "" && name == last) {
			continue
		}
		if err := r.Edit(d.Edit); err != nil {
			return nil, fmt.Errorf("estate %s: delta %s (%s): %w", s.Name, d.Name, d.Why, err)
		}
		r.Applied = append(r.Applied, d)
	}
	if len(rs.Variables) > 0 {
		vars, err := expandVars(rs.Variables, m.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("estate %s: root %s: variables: %s", s.Name, name, s.Redact(err.Error()))
		}
		if err := r.WriteFile(varsFile, string(vars)); err != nil {
			return nil, err
		}
	}
	brought, err := declared(dir)
	if err != nil {
		return nil, fmt.Errorf("estate %s: root %s: %w", s.Name, name, err)
	}
	taken, err := r.Taken()
	if err != nil {
		return nil, fmt.Errorf("estate %s: root %s: %w", s.Name, name, err)
	}
	overridden, err := r.writeClusterOverrides(taken, m.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("estate %s: root %s: %w", s.Name, name, err)
	}
	if err := r.writeRelaxOverrides(taken, s.relaxFor(name), m.supplied()); err != nil {
		return nil, fmt.Errorf("estate %s: root %s: %w", s.Name, name, err)
	}
	if err := r.WriteFile(providersFile, providersTF(m.Providers, brought, overridden)); err != nil {
		return nil, err
	}
	return r, nil
}

// expandVars renders variables as tfvars JSON, "${kubeconfig}" in any
// string replaced by the side's kubeconfig path.
func expandVars(vars map[string]any, kubeconfig string) ([]byte, error) {
	var expand func(v any) any
	expand = func(v any) any {
		switch t := v.(type) {
		case string:
			return strings.ReplaceAll(t, "${kubeconfig}", kubeconfig)
		case map[string]any:
			out := map[string]any{}
			for k, e := range t {
				out[k] = expand(e)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				out[i] = expand(e)
			}
			return out
		}
		return v
	}
	b, err := json.MarshalIndent(expand(vars), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Edit replaces e.Old with e.New in e.File (default the main file),
// exactly e.Count times (default 1); an e.HCL edit sets its attribute.
func (r *Root) Edit(e Edit) error {
	if e.HCL != nil {
		return r.SetAttribute(*e.HCL)
	}
	file := r.Main
	if e.File != "" {
		file = e.File
	}
	path := filepath.Join(r.Dir, filepath.FromSlash(file))
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	want := e.Count
	if want == 0 {
		want = 1
	}
	if got := strings.Count(string(b), e.Old); got != want {
		return fmt.Errorf("expected %d occurrence(s) of %q in %s, found %d: the pinned source moved", want, clip(e.Old), file, got)
	}
	return os.WriteFile(path, []byte(strings.ReplaceAll(string(b), e.Old, e.New)), 0o644)
}

// Snapshot is the content of every Terraform file of a root, to Restore
// after a temporary change (a BREAK).
type Snapshot map[string]string

// Snapshot takes the content of every .tf file in the root (modules
// included, the engines' .terraform folder aside).
func (r *Root) Snapshot() (Snapshot, error) {
	snap := Snapshot{}
	err := filepath.WalkDir(r.base(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".tf") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(r.base(), p)
		snap[rel] = string(b)
		return err
	})
	return snap, err
}

// base is the folder the root's tree lands in.
func (r *Root) base() string {
	if r.Base == "" {
		return r.Dir
	}
	return r.Base
}

// Taken reads what the materialised root reads: its modules, the files
// they reference, its cluster settings, provider needs and required
// variables (gauntlet's own files aside).
func (r *Root) Taken() (*Taken, error) {
	rel, err := filepath.Rel(r.base(), r.Dir)
	if err != nil {
		return nil, err
	}
	return Closure(DirTree(r.base()), filepath.ToSlash(rel))
}

// Restore puts back the files taken by Snapshot.
func (r *Root) Restore(snap Snapshot) error {
	for rel, content := range snap {
		if err := os.WriteFile(filepath.Join(r.base(), rel), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes a gauntlet-owned file (a stage addition) in the root.
func (r *Root) WriteFile(name, content string) error {
	return os.WriteFile(filepath.Join(r.Dir, name), []byte(content), 0o644)
}

// RemoveFile removes a gauntlet-owned file; a missing file is fine.
func (r *Root) RemoveFile(name string) error {
	if err := os.Remove(filepath.Join(r.Dir, name)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

var addrRE = regexp.MustCompile(`^([a-z0-9_]+)\.([A-Za-z0-9_-]+)$`)

// RemoveBlock deletes the resource block at address ("type.name") from
// the main file; it must be there exactly once.
func (r *Root) RemoveBlock(address string) error { return r.RemoveBlockIn("", address) }

// RemoveBlockIn deletes the resource block "type.name" from file (default
// the main file, else a path in the root such as a local module's); it
// must be there exactly once.
func (r *Root) RemoveBlockIn(file, address string) error {
	m := addrRE.FindStringSubmatch(address)
	if m == nil {
		return fmt.Errorf("remove block: %q is not a resource address type.name", address)
	}
	if file == "" {
		file = r.Main
	}
	path := filepath.Join(r.Dir, filepath.FromSlash(file))
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	src := string(b)
	head := regexp.MustCompile(`(?m)^resource\s+"` + regexp.QuoteMeta(m[1]) + `"\s+"` + regexp.QuoteMeta(m[2]) + `"\s*\{`)
	locs := head.FindAllStringIndex(src, -1)
	if len(locs) != 1 {
		return fmt.Errorf("remove block: %d blocks for %s in %s, want 1", len(locs), address, file)
	}
	end, err := closingBrace(src, locs[0][1]-1)
	if err != nil {
		return fmt.Errorf("remove block %s: %w", address, err)
	}
	out := src[:locs[0][0]] + strings.TrimLeft(src[end+1:], "\n")
	return os.WriteFile(path, []byte(out), 0o644)
}

// closingBrace finds the brace closing the one at open, skipping quoted
// strings and comments (HCL interpolations inside strings are balanced).
func closingBrace(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case c == '#' || (c == '/' && i+1 < len(s) && s[i+1] == '/'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return 0, fmt.Errorf("unterminated comment")
			}
			i += j + 3
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced braces")
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// writtenRoot is the folder of a written root (files beside estate.yaml):
// the first file's, the others keeping their paths from it, and how many
// folders they climb above it (a local module called as "../modules/x").
func writtenRoot(files []string) (dir string, up int) {
	if len(files) == 0 {
		return ".", 0
	}
	dir = path.Dir(path.Clean(files[0]))
	for _, f := range files {
		n, _ := slashpath.Climb(slashpath.Rel(dir, path.Clean(f)))
		up = max(up, n)
	}
	return dir, up
}
