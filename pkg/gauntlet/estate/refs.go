package estate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/slashpath"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Tree is where a root's files are read from: a folder on disk or one
// commit of a repository. Paths are slash paths relative to the tree.
type Tree interface {
	ReadFile(p string) ([]byte, error)
	// Files lists every file below dir ("" or "." for the whole tree),
	// recursively, as tree paths.
	Files(dir string) ([]string, error)
}

// DirTree is a folder on disk as a Tree.
type DirTree string

// ReadFile reads the file at slash path p below the folder.
func (d DirTree) ReadFile(p string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(p)))
}

// Files lists the files below dir, the engines' .terraform folders aside.
func (d DirTree) Files(dir string) ([]string, error) {
	var out []string
	base := filepath.Join(string(d), filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == base {
				return filepath.SkipAll
			}
			return err
		}
		if e.IsDir() && (e.Name() == ".terraform" || e.Name() == ".git") {
			return filepath.SkipDir
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(string(d), p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	return out, err
}

// Reference is one place a configuration names another file or folder:
// a module source or a file function's path argument.
type Reference struct {
	// Pos is the file (tree path) and line of the reference.
	Pos string
	// Call is "module source", or the function ("templatefile", "file",
	// "fileset", ...).
	Call string
	// Expr is the argument as written.
	Expr string
	// Path is the tree path it resolves to (empty when unresolved).
	Path string
	// Why says why it could not be resolved or taken.
	Why string
}

func (r Reference) String() string {
	s := fmt.Sprintf("%s: %s(%s)", r.Pos, r.Call, r.Expr)
	if r.Call == "module source" {
		s = fmt.Sprintf("%s: module source %s", r.Pos, r.Expr)
	}
	if r.Path != "" {
		s += " -> " + r.Path
	}
	if r.Why != "" {
		s += ": " + r.Why
	}
	return s
}

// ClusterSetting is a kubernetes provider or backend block that says
// itself which cluster to reach; a run points it at the side's cluster
// through an override file (ClusterOverride).
type ClusterSetting struct {
	// Module is the module folder (tree path) holding the block.
	Module string
	Pos    string
	// Block is `provider "kubernetes"` (with its alias) or
	// `backend "kubernetes"`.
	Block string
	Alias string
	// Attrs are the cluster attributes it sets; Exec that it has an exec
	// block.
	Attrs []string
	Exec  bool
	// backendAttrs are the backend's other attributes, as written (an
	// override backend block replaces the root's whole).
	backendAttrs map[string]string
}

// Backend reports whether the setting is a backend block.
func (c ClusterSetting) Backend() bool { return strings.HasPrefix(c.Block, "backend") }

func (c ClusterSetting) String() string {
	what := strings.Join(c.Attrs, ", ")
	if c.Exec {
		what = strings.TrimPrefix(what+", exec block", ", ")
	}
	return fmt.Sprintf("%s: %s sets %s", c.Pos, c.Block, what)
}

// ProviderUse is one place a module needs a provider: a
// required_providers entry (with its version constraint), a provider
// block, or a resource or data block of the provider's type.
type ProviderUse struct {
	Module string
	Pos    string
	// Name is the provider's local name; Source its address without the
	// registry host ("hashicorp/kubernetes").
	Name, Source string
	// Constraint is the version constraint as written ("" for none).
	Constraint string
	// By says what needs it: "required_providers", `provider "aws"`,
	// `resource "aws_s3_bucket" "b"`.
	By string
}

// Taken is what a root reads: its module folders and every file the
// configuration references, found by reading the configuration.
type Taken struct {
	// Root is the root's folder in the tree.
	Root string
	// Modules are the folders of the root and its local modules, the root
	// first.
	Modules []string
	// Files are every file to take (tree paths): each module's .tf files
	// and the files its expressions read, with why each is taken.
	Files map[string]string
	// Unresolved are references whose path is not a literal string or
	// built from path.module, path.root, path.cwd and such locals: gauntlet
	// cannot know statically what they read.
	Unresolved []Reference
	// Missing are references that resolve to a file or folder the tree
	// does not hold, or outside it.
	Missing []Reference
	// Remote are module sources that are not local paths (a registry or a
	// git address): the engines' init would need the network.
	Remote []Reference
	// Cluster are the blocks that name a cluster themselves.
	Cluster []ClusterSetting
	// Providers are every provider need of every module.
	Providers []ProviderUse
	// Required are the root module's variables with no default.
	Required []string

	srcs map[string][]byte
	only map[string]bool
}

// fileFuncs are the functions that read a file (or list files) at the
// path in their first argument.
var fileFuncs = map[string]bool{
	"file": true, "templatefile": true, "filebase64": true, "fileset": true, "fileexists": true,
	"filemd5": true, "filesha1": true, "filesha256": true, "filesha512": true,
	"filebase64sha256": true, "filebase64sha512": true,
}

// kubernetesClusterAttrs are the kubernetes provider's (and backend's)
// arguments that choose the cluster or the credentials.
var kubernetesClusterAttrs = []string{
	"host", "username", "password", "insecure", "tls_server_name", "client_certificate", "client_key",
	"cluster_ca_certificate", "config_path", "config_paths", "config_context", "config_context_auth_info",
	"config_context_cluster", "token", "proxy_url", "in_cluster_config", "load_config_file",
}

// Closure reads the root at folder root of t and every local module it
// calls (sources such as "./modules/x" or "../../", outside the root's
// folder too), and finds every file their expressions read. rootFiles,
// when given, are the only files of the root's own folder read (tree
// paths: a file cut out of a larger root).
func Closure(t Tree, root string, rootFiles ...string) (*Taken, error) {
	root = cleanTree(root)
	out := &Taken{Root: root, Files: map[string]string{}, srcs: map[string][]byte{}}
	if len(rootFiles) > 0 {
		out.only = map[string]bool{}
		for _, f := range rootFiles {
			out.only[cleanTree(f)] = true
		}
	}
	seen := map[string]bool{root: true}
	queue := []string{root}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		out.Modules = append(out.Modules, dir)
		next, err := out.module(t, root, dir)
		if err != nil {
			return nil, err
		}
		for _, m := range next {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	sortRefs := func(rs []Reference) {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Pos < rs[j].Pos })
	}
	sortRefs(out.Unresolved)
	sortRefs(out.Missing)
	sortRefs(out.Remote)
	sort.Strings(out.Required)
	return out, nil
}

// SortedFiles returns the taken files in order.
func (tk *Taken) SortedFiles() []string {
	out := make([]string, 0, len(tk.Files))
	for p := range tk.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// module reads one module folder and returns the local modules it calls.
func (tk *Taken) module(t Tree, root, dir string) ([]string, error) {
	all, err := t.Files(dir)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", dir, err)
	}
	var bodies []*hclsyntax.Body
	for _, p := range all {
		if path.Dir(p) != dir {
			continue
		}
		if !strings.HasSuffix(p, ".tf") || strings.HasPrefix(path.Base(p), "gauntlet_") {
			continue
		}
		if dir == root && tk.only != nil && !tk.only[p] {
			continue
		}
		src, err := t.ReadFile(p)
		if err != nil {
			return nil, err
		}
		tk.srcs[p] = src
		f, diags := hclsyntax.ParseConfig(src, p, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", p, diags.Error())
		}
		if _, ok := tk.Files[p]; !ok {
			tk.Files[p] = "module " + dir
			if dir == root {
				tk.Files[p] = "the root"
			}
		}
		bodies = append(bodies, f.Body.(*hclsyntax.Body))
	}
	if len(bodies) == 0 {
		tk.Missing = append(tk.Missing, Reference{Pos: dir, Call: "module source", Expr: dir, Why: "no .tf file in the folder"})
		return nil, nil
	}
	modRel := slashpath.Rel(root, dir)
	ctx := evalContext(modRel, bodies)
	var next []string
	for _, body := range bodies {
		for _, b := range body.Blocks {
			next = append(next, tk.block(t, root, dir, b, ctx)...)
		}
		tk.fileCalls(t, root, body, ctx)
	}
	return next, nil
}

// block reads one top-level block: module sources, providers, backends,
// variables.
func (tk *Taken) block(t Tree, root, dir string, b *hclsyntax.Block, ctx *hcl.EvalContext) []string {
	pos := fmt.Sprintf("%s:%d", b.DefRange().Filename, b.DefRange().Start.Line)
	switch {
	case b.Type == "module" && len(b.Labels) == 1:
		a, ok := b.Body.Attributes["source"]
		if !ok {
			return nil
		}
		ref := Reference{Pos: pos, Call: "module source", Expr: tk.text(a.Expr)}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() || !v.Type().Equals(cty.String) || v.IsNull() {
			ref.Why = "not a literal string"
			tk.Unresolved = append(tk.Unresolved, ref)
			return nil
		}
		src := v.AsString()
		ref.Expr = src
		if !strings.HasPrefix(src, "./") && !strings.HasPrefix(src, "../") && src != "." && src != ".." {
			ref.Why = "not a local path: the engines' init fetches it over the network"
			tk.Remote = append(tk.Remote, ref)
			return nil
		}
		m := cleanTree(path.Join(dir, src))
		if strings.HasPrefix(m, "..") {
			ref.Why = "outside the repository"
			tk.Missing = append(tk.Missing, ref)
			return nil
		}
		return []string{m}
	case b.Type == "variable" && len(b.Labels) == 1 && dir == root:
		if _, ok := b.Body.Attributes["default"]; !ok {
			tk.Required = append(tk.Required, b.Labels[0])
		}
	case b.Type == "provider" && len(b.Labels) == 1:
		tk.Providers = append(tk.Providers, ProviderUse{Module: dir, Pos: pos, Name: b.Labels[0],
			Constraint: literalString(b.Body.Attributes["version"]), By: fmt.Sprintf("provider %q", b.Labels[0])})
		if b.Labels[0] == "kubernetes" {
			cs := tk.clusterSetting(dir, pos, b)
			cs.Block = `provider "kubernetes"`
			if a, ok := b.Body.Attributes["alias"]; ok {
				cs.Alias = literalString(a)
				cs.Block += " (alias " + cs.Alias + ")"
			}
			if len(cs.Attrs) > 0 || cs.Exec {
				tk.Cluster = append(tk.Cluster, cs)
			}
		}
	case (b.Type == "resource" || b.Type == "data") && len(b.Labels) == 2:
		name := b.Labels[0]
		if i := strings.Index(name, "_"); i > 0 {
			name = name[:i]
		}
		if a, ok := b.Body.Attributes["provider"]; ok {
			if tr, diags := hcl.AbsTraversalForExpr(a.Expr); !diags.HasErrors() {
				name = tr.RootName()
			}
		}
		if name != "terraform" {
			tk.Providers = append(tk.Providers, ProviderUse{Module: dir, Pos: pos, Name: name, By: fmt.Sprintf("%s %q %q", b.Type, b.Labels[0], b.Labels[1])})
		}
	case b.Type == "terraform":
		for _, inner := range b.Body.Blocks {
			ipos := fmt.Sprintf("%s:%d", inner.DefRange().Filename, inner.DefRange().Start.Line)
			switch {
			case inner.Type == "required_providers":
				for name, a := range inner.Body.Attributes {
					u := ProviderUse{Module: dir, Pos: fmt.Sprintf("%s:%d", a.SrcRange.Filename, a.SrcRange.Start.Line), Name: name, By: "required_providers"}
					v, diags := a.Expr.Value(nil)
					switch {
					case diags.HasErrors() || v.IsNull():
					case v.Type().Equals(cty.String):
						u.Constraint = v.AsString() // the legacy shorthand: a constraint alone
					case v.Type().IsObjectType():
						u.Source, u.Constraint = stringAttr(v, "source"), stringAttr(v, "version")
					}
					tk.Providers = append(tk.Providers, u)
				}
			case inner.Type == "backend" && len(inner.Labels) == 1 && inner.Labels[0] == "kubernetes":
				cs := tk.clusterSetting(dir, ipos, inner)
				cs.Block = `backend "kubernetes"`
				if len(cs.Attrs) > 0 || cs.Exec {
					tk.Cluster = append(tk.Cluster, cs)
				}
			}
		}
	}
	return nil
}

func (tk *Taken) clusterSetting(dir, pos string, b *hclsyntax.Block) ClusterSetting {
	cs := ClusterSetting{Module: dir, Pos: pos, backendAttrs: map[string]string{}}
	cluster := map[string]bool{}
	for _, n := range kubernetesClusterAttrs {
		cluster[n] = true
	}
	for name, a := range b.Body.Attributes {
		if cluster[name] {
			cs.Attrs = append(cs.Attrs, name)
		} else {
			cs.backendAttrs[name] = tk.text(a.Expr)
		}
	}
	sort.Strings(cs.Attrs)
	for _, nb := range b.Body.Blocks {
		if nb.Type == "exec" {
			cs.Exec = true
		}
	}
	return cs
}

// fileCalls finds every file function in a body and takes what it reads.
func (tk *Taken) fileCalls(t Tree, root string, body *hclsyntax.Body, ctx *hcl.EvalContext) {
	hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || !fileFuncs[call.Name] || len(call.Args) == 0 {
			return nil
		}
		ref := Reference{Pos: fmt.Sprintf("%s:%d", call.Range().Filename, call.Range().Start.Line), Call: call.Name, Expr: tk.text(call.Args[0])}
		p, why := staticPath(call.Args[0], ctx)
		if why != "" {
			ref.Why = why
			tk.Unresolved = append(tk.Unresolved, ref)
			return nil
		}
		// Relative paths are relative to the working directory, the
		// root's folder (path.module is already made relative to it).
		full := cleanTree(path.Join(root, p))
		if strings.HasPrefix(full, "..") {
			ref.Why = "outside the repository"
			tk.Missing = append(tk.Missing, ref)
			return nil
		}
		ref.Path = full
		if call.Name == "fileset" {
			tk.fileset(t, ref, call, ctx)
			return nil
		}
		if _, err := t.ReadFile(full); err != nil {
			if call.Name != "fileexists" {
				ref.Why = "no such file"
				tk.Missing = append(tk.Missing, ref)
			}
			return nil
		}
		tk.Files[full] = call.Name + " at " + ref.Pos
		return nil
	})
}

// fileset takes every file a fileset(path, pattern) call matches.
func (tk *Taken) fileset(t Tree, ref Reference, call *hclsyntax.FunctionCallExpr, ctx *hcl.EvalContext) {
	if len(call.Args) < 2 {
		return
	}
	pattern, why := staticPath(call.Args[1], ctx)
	if why != "" {
		ref.Why = "pattern " + why
		tk.Unresolved = append(tk.Unresolved, ref)
		return
	}
	files, err := t.Files(ref.Path)
	if err != nil {
		ref.Why = err.Error()
		tk.Missing = append(tk.Missing, ref)
		return
	}
	for _, f := range files {
		rel := strings.TrimPrefix(f, strings.TrimSuffix(ref.Path, "/")+"/")
		if ref.Path == "." {
			rel = f
		}
		if globMatch(pattern, rel) {
			tk.Files[f] = "fileset at " + ref.Pos
		}
	}
}

// globMatch matches fileset's patterns: path.Match per segment, "**"
// matching any number of segments.
func globMatch(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(ps) {
			return j == len(ns)
		}
		if ps[i] == "**" {
			for k := j; k <= len(ns); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		}
		if j == len(ns) {
			return false
		}
		ok, err := path.Match(ps[i], ns[j])
		return err == nil && ok && match(i+1, j+1)
	}
	return match(0, 0)
}

// staticPath evaluates a path argument with path.module, path.root,
// path.cwd and the locals built from them; why says why it cannot.
func staticPath(e hclsyntax.Expression, ctx *hcl.EvalContext) (string, string) {
	v, diags := e.Value(ctx)
	switch {
	case diags.HasErrors():
		var uses []string
		for _, tr := range e.Variables() {
			if n := tr.RootName(); n != "path" && n != "local" {
				uses = append(uses, n)
			}
		}
		if len(uses) > 0 {
			return "", "built from " + strings.Join(uniq(uses), ", ") + ", known only at plan time"
		}
		return "", "not a literal path"
	case !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.String):
		return "", "not a string known before plan"
	}
	p := v.AsString()
	if path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return "", "an absolute path, outside the root"
	}
	return p, ""
}

// evalContext gives path.* (the module's folder relative to the root's,
// where relative paths resolve) and every local that is built only from
// them and literals.
func evalContext(modRel string, bodies []*hclsyntax.Body) *hcl.EvalContext {
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"path": cty.ObjectVal(map[string]cty.Value{
				"module": cty.StringVal(modRel), "root": cty.StringVal("."), "cwd": cty.StringVal("."),
			}),
		},
		Functions: map[string]function.Function{
			"format": stdlib.FormatFunc, "join": stdlib.JoinFunc, "lower": stdlib.LowerFunc,
			"trimsuffix": stdlib.TrimSuffixFunc, "replace": stdlib.ReplaceFunc,
		},
	}
	pending := map[string]hclsyntax.Expression{}
	for _, body := range bodies {
		for _, b := range body.Blocks {
			if b.Type == "locals" {
				for n, a := range b.Body.Attributes {
					pending[n] = a.Expr
				}
			}
		}
	}
	locals := map[string]cty.Value{}
	for progress := true; progress; {
		progress = false
		for n, e := range pending {
			ctx.Variables["local"] = cty.ObjectVal(locals)
			v, diags := e.Value(ctx)
			if diags.HasErrors() || !v.IsWhollyKnown() {
				continue
			}
			locals[n] = v
			delete(pending, n)
			progress = true
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx
}

// stringAttr is object v's attribute name when it is a known string, else
// "" (a null string is a string too, and reading it panics).
func stringAttr(v cty.Value, name string) string {
	if !v.Type().HasAttribute(name) {
		return ""
	}
	a := v.GetAttr(name)
	if !a.Type().Equals(cty.String) || !a.IsKnown() || a.IsNull() {
		return ""
	}
	return a.AsString()
}

func literalString(a *hclsyntax.Attribute) string {
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.Type().Equals(cty.String) {
		return ""
	}
	return v.AsString()
}

// text is an expression's source as written.
func (tk *Taken) text(e hclsyntax.Expression) string {
	r := e.Range()
	src := tk.srcs[r.Filename]
	if r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
	}
	return string(src[r.Start.Byte:r.End.Byte])
}

func cleanTree(p string) string {
	p = path.Clean(p)
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

func uniq(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
