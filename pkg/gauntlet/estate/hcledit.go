package estate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// The edits here rewrite the root's own files with an HCL writer
// (hclwrite), so a derived stage plan needs no text anchors: what they
// change is found by block type, address and attribute, whitespace and
// comments around it kept. They act on the .tf files of the folder that
// holds the addressed block - the root module's, or a local module's the
// address's module calls lead to - never on gauntlet's own (gauntlet_*.tf).

// rootFiles are a module folder's .tf files, sorted.
func rootFiles(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range m {
		if !strings.HasPrefix(filepath.Base(f), "gauntlet_") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// hclFile is one root file parsed for writing.
type hclFile struct {
	path string
	f    *hclwrite.File
}

func (r *Root) parseAll() ([]hclFile, error) { return parseDir(r.Dir) }

// parseDir parses a module folder's files for writing.
func parseDir(dir string) ([]hclFile, error) {
	paths, err := rootFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []hclFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, diags := hclwrite.ParseConfig(b, filepath.Base(p), hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", filepath.Base(p), diags.Error())
		}
		out = append(out, hclFile{p, f})
	}
	return out, nil
}

func (h hclFile) write() error { return os.WriteFile(h.path, h.f.Bytes(), 0o644) }

// splitAddress splits a root-module resource address "type.name".
func splitAddress(address string) (typ, name string, err error) {
	m := addrRE.FindStringSubmatch(address)
	if m == nil {
		return "", "", fmt.Errorf("%q is not a root-module resource address type.name", address)
	}
	return m[1], m[2], nil
}

// rootBlock finds the root-module block at address "type.name".
func rootBlock(files []hclFile, address string) (hclFile, *hclwrite.Block, error) {
	typ, name, err := splitAddress(address)
	if err != nil {
		return hclFile{}, nil, err
	}
	return resourceBlock(files, typ, name)
}

// resourceBlock finds the one resource block typ.name among files.
func resourceBlock(files []hclFile, typ, name string) (hclFile, *hclwrite.Block, error) {
	var found []hclFile
	var block *hclwrite.Block
	for _, f := range files {
		for _, b := range f.f.Body().Blocks() {
			if l := b.Labels(); b.Type() == "resource" && len(l) == 2 && l[0] == typ && l[1] == name {
				found = append(found, f)
				block = b
			}
		}
	}
	if len(found) != 1 {
		return hclFile{}, nil, fmt.Errorf("%d resource blocks %s.%s in the module, want 1", len(found), typ, name)
	}
	return found[0], block, nil
}

// ModuleDir follows module calls from the root's folder to the folder
// whose files hold their blocks. Each call's source must be a local path
// written as a literal ("./modules/x", "../x"); a call through a registry
// or a git source has no files here to edit.
func (r *Root) ModuleDir(calls []Call) (string, error) {
	dir := r.Dir
	for _, c := range calls {
		src, err := moduleSource(dir, c.Name)
		if err != nil {
			return "", err
		}
		dir = filepath.Join(dir, filepath.FromSlash(src))
	}
	return dir, nil
}

// moduleSource is the local source of module call name in folder dir.
func moduleSource(dir, name string) (string, error) {
	calls, err := moduleCalls(dir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, c := range calls {
		if c.name != name {
			continue
		}
		if !LocalSource(c.source) {
			return "", fmt.Errorf("module %q in %s: source %q is not a local path written as a literal", name, dir, c.source)
		}
		found = append(found, c.source)
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%d module calls %q in %s, want 1", len(found), name, dir)
	}
	return found[0], nil
}

// moduleCall is a module block of a folder: its name and its source
// when written as a literal string ("" otherwise).
type moduleCall struct{ name, source string }

// moduleCalls reads the module blocks of folder dir's own .tf files.
func moduleCalls(dir string) ([]moduleCall, error) {
	paths, err := rootFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []moduleCall
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, diags := hclsyntax.ParseConfig(b, filepath.Base(p), hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", p, diags.Error())
		}
		for _, blk := range f.Body.(*hclsyntax.Body).Blocks {
			if blk.Type != "module" || len(blk.Labels) != 1 {
				continue
			}
			c := moduleCall{name: blk.Labels[0]}
			if a, ok := blk.Body.Attributes["source"]; ok {
				if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && !v.IsNull() {
					c.source = v.AsString()
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// LocalSource reports whether a module source is a local path.
func LocalSource(src string) bool {
	return strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") || src == "." || src == ".."
}

// target is the resource block an address names, with every file of the
// module folder holding it.
type target struct {
	addr  Address
	files []hclFile
	file  hclFile
	block *hclwrite.Block
}

// find locates the block of a resource address (an instance's too: its
// keys are dropped), in the root or in the local module its calls lead to.
func (r *Root) find(address string) (*target, error) {
	a, err := ParseAddress(address)
	if err != nil {
		return nil, err
	}
	dir, err := r.ModuleDir(a.Calls)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", address, err)
	}
	files, err := parseDir(dir)
	if err != nil {
		return nil, err
	}
	f, b, err := resourceBlock(files, a.Type, a.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", address, err)
	}
	return &target{addr: a, files: files, file: f, block: b}, nil
}

// RenameResource renames the resource block at from ("type.name") to to
// (same type) and makes every reference to it in the root follow. It
// returns how many references it rewrote.
func (r *Root) RenameResource(from, to string) (int, error) {
	fa, err := ParseAddress(from)
	if err != nil {
		return 0, err
	}
	ta, err := ParseAddress(to)
	if err != nil {
		return 0, err
	}
	if fa.Instanced() || ta.Instanced() {
		return 0, fmt.Errorf("rename %s -> %s: a block is renamed by its address, with no instance key", from, to)
	}
	if fa.Type != ta.Type || fa.Module() != ta.Module() {
		return 0, fmt.Errorf("rename %s -> %s changes the resource type or the module", from, to)
	}
	t, err := r.find(from)
	if err != nil {
		return 0, err
	}
	if _, _, err := resourceBlock(t.files, ta.Type, ta.Name); err == nil {
		return 0, fmt.Errorf("rename %s -> %s: %s already exists", from, to, to)
	}
	t.block.SetLabels([]string{ta.Type, ta.Name})
	// References are module-local: the block's own folder's files.
	local := fa.Type + "." + fa.Name
	refs := 0
	for _, f := range t.files {
		eachExpr(f.f.Body(), func(e *hclwrite.Expression) {
			for _, tr := range e.Variables() {
				if refersTo(string(tr.BuildTokens(nil).Bytes()), local) {
					refs++
				}
			}
			e.RenameVariablePrefix([]string{fa.Type, fa.Name}, []string{ta.Type, ta.Name})
		})
		if err := f.write(); err != nil {
			return 0, err
		}
	}
	return refs, nil
}

// refersTo reports whether a traversal's text starts with address as a
// whole step ("kubernetes_x.a.metadata" refers to kubernetes_x.a; _x.ab
// does not).
func refersTo(traversal, address string) bool {
	t := strings.TrimSpace(traversal)
	if !strings.HasPrefix(t, address) {
		return false
	}
	rest := t[len(address):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// eachExpr calls f on every attribute expression of body and its nested
// blocks.
func eachExpr(body *hclwrite.Body, f func(*hclwrite.Expression)) {
	for _, a := range body.Attributes() {
		f(a.Expr())
	}
	for _, b := range body.Blocks() {
		eachExpr(b.Body(), f)
	}
}

// RemoveResource deletes the resource block at address from the root, or
// from the local module its module calls lead to. An address with an
// instance key is refused: RemoveInstance takes one instance out.
func (r *Root) RemoveResource(address string) error {
	t, err := r.find(address)
	if err != nil {
		return fmt.Errorf("remove block: %w", err)
	}
	if t.addr.Instanced() {
		return fmt.Errorf("remove block: %s names an instance, not a block", address)
	}
	t.file.f.Body().RemoveBlock(t.block)
	return t.file.write()
}

// SuffixName appends suffix to the metadata name of the block at address
// - a real identity change: the provider must replace the object. It works
// on a typed resource's metadata block and on a kubernetes_manifest's
// manifest.metadata.name, literal or not.
func (r *Root) SuffixName(address, suffix string) error {
	t, err := r.find(address)
	if err != nil {
		return err
	}
	f, block := t.file, t.block
	body, attr, path, err := objectAttr(block, "name")
	if err != nil {
		return fmt.Errorf("%s: %w", address, err)
	}
	toks := body.GetAttribute(attr).Expr().BuildTokens(nil)
	out, err := editObject(toks, path, func(val hclwrite.Tokens) (hclwrite.Tokens, error) { return appendSuffix(val, suffix), nil }, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", address, err)
	}
	body.SetAttributeRaw(attr, out)
	return f.write()
}

// SetLabel sets metadata label key=value on the object at address, adding
// the label (and the labels map) where the configuration has none. The
// edit is the block's: for an instance address every instance of the
// block (and of its module calls) takes the label.
func (r *Root) SetLabel(address, key, value string) error {
	t, err := r.find(address)
	if err != nil {
		return err
	}
	f, block := t.file, t.block
	body, attr, path, err := objectAttr(block, "labels", key)
	if err != nil {
		return fmt.Errorf("%s: %w", address, err)
	}
	quoted := hclwrite.TokensForValue(cty.StringVal(value))
	if body.GetAttribute(attr) == nil {
		// A typed resource's metadata block without labels.
		body.SetAttributeValue(attr, cty.ObjectVal(map[string]cty.Value{key: cty.StringVal(value)}))
		return f.write()
	}
	toks := body.GetAttribute(attr).Expr().BuildTokens(nil)
	out, err := editObject(toks, path, func(hclwrite.Tokens) (hclwrite.Tokens, error) { return quoted, nil }, quoted)
	if err != nil {
		// Labels written as an expression (var.labels, local.labels,
		// merge(...)): the label is merged into it.
		out, err = editObject(toks, path[:len(path)-1], func(v hclwrite.Tokens) (hclwrite.Tokens, error) {
			if o := firstSignificant(v); o < 0 || v[o].Type == hclsyntax.TokenOBrace {
				return nil, err
			}
			return mergeLabel(v, key, quoted), nil
		}, nil)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", address, err)
	}
	body.SetAttributeRaw(attr, out)
	return f.write()
}

// mergeLabel is merge(expr, { key = value }): the label on top of
// whatever the expression gives (merge ignores a null argument).
func mergeLabel(expr hclwrite.Tokens, key string, value hclwrite.Tokens) hclwrite.Tokens {
	expr = append(hclwrite.Tokens{}, expr...)
	if o := firstSignificant(expr); o >= 0 {
		expr = expr[o:]
		expr[0] = &hclwrite.Token{Type: expr[0].Type, Bytes: expr[0].Bytes}
	}
	k := keyTokens(key)
	k[0] = &hclwrite.Token{Type: k[0].Type, Bytes: k[0].Bytes, SpacesBefore: 1}
	out := hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte("merge"), SpacesBefore: 1},
		{Type: hclsyntax.TokenOParen, Bytes: []byte("(")}}
	out = append(out, expr...)
	out = append(out, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")},
		&hclwrite.Token{Type: hclsyntax.TokenOBrace, Bytes: []byte("{"), SpacesBefore: 1})
	out = append(out, k...)
	out = append(out, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("="), SpacesBefore: 1})
	v := append(hclwrite.Tokens{}, value...)
	v[0] = &hclwrite.Token{Type: v[0].Type, Bytes: v[0].Bytes, SpacesBefore: 1}
	out = append(out, v...)
	return append(out, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}"), SpacesBefore: 1},
		&hclwrite.Token{Type: hclsyntax.TokenCParen, Bytes: []byte(")")})
}

// SetAttribute makes a structured edit: the attribute h.Set names, in the
// nested blocks it goes through, of the resource block at h.Resource,
// written as h.Value (added where the block does not write it).
func (r *Root) SetAttribute(h HCLEdit) error {
	t, err := r.find(h.Resource)
	if err != nil {
		return err
	}
	val, err := hclValue(h.Value)
	if err != nil {
		return fmt.Errorf("%s: %w", h.Resource, err)
	}
	segs := strings.Split(h.Set, ".")
	body := t.block.Body()
	for i, typ := range segs[:len(segs)-1] {
		var found []*hclwrite.Block
		for _, b := range body.Blocks() {
			if b.Type() == typ {
				found = append(found, b)
			}
		}
		if len(found) != 1 {
			return fmt.Errorf("%s: %d %s blocks at %s, want 1 (set names nested blocks, then the attribute)", h.Resource, len(found), typ, orDot(strings.Join(segs[:i], ".")))
		}
		body = found[0].Body()
	}
	body.SetAttributeRaw(segs[len(segs)-1], val)
	return t.file.write()
}

// hclValue parses an HCL expression into the tokens that write it.
func hclValue(v string) (hclwrite.Tokens, error) {
	f, diags := hclwrite.ParseConfig([]byte("v = "+v+"\n"), "value", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("value %q is not one HCL expression: %s", v, diags.Error())
	}
	attr := f.Body().GetAttribute("v")
	if attr == nil || len(f.Body().Attributes()) != 1 || len(f.Body().Blocks()) != 0 {
		return nil, fmt.Errorf("value %q is not one HCL expression", v)
	}
	return attr.Expr().BuildTokens(nil), nil
}

func orDot(s string) string {
	if s == "" {
		return "the block"
	}
	return s
}

// objectAttr finds where a metadata field lives: for a typed resource the
// metadata block's attribute (path the rest below it), for
// kubernetes_manifest the manifest attribute with path
// metadata/<field>/... inside its object.
func objectAttr(block *hclwrite.Block, field string, below ...string) (*hclwrite.Body, string, []string, error) {
	if block.Labels()[0] == "kubernetes_manifest" {
		if block.Body().GetAttribute("manifest") == nil {
			return nil, "", nil, fmt.Errorf("no manifest attribute")
		}
		return block.Body(), "manifest", append([]string{"metadata", field}, below...), nil
	}
	md := block.Body().FirstMatchingBlock("metadata", nil)
	if md == nil {
		return nil, "", nil, fmt.Errorf("no metadata block")
	}
	if field == "name" && md.Body().GetAttribute("name") == nil {
		return nil, "", nil, fmt.Errorf("its metadata block sets no name")
	}
	return md.Body(), field, below, nil
}

// editObject edits the value at path inside an object constructor
// expression: with path empty, toks is the value itself. set rewrites an
// existing value; where the last key is missing and insert is not nil, the
// item is added with insert as its value (intermediate objects too).
func editObject(toks hclwrite.Tokens, path []string, set func(hclwrite.Tokens) (hclwrite.Tokens, error), insert hclwrite.Tokens) (hclwrite.Tokens, error) {
	if len(path) == 0 {
		return set(toks)
	}
	open := firstSignificant(toks)
	if open < 0 || toks[open].Type != hclsyntax.TokenOBrace {
		return nil, fmt.Errorf("%s is not an object written out in the configuration", path[0])
	}
	items, closeAt, err := objectItems(toks, open)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.key != path[0] {
			continue
		}
		val, err := editObject(toks[it.valStart:it.valEnd], path[1:], set, insert)
		if err != nil {
			return nil, err
		}
		return splice(toks, it.valStart, it.valEnd, val), nil
	}
	if insert == nil {
		return nil, fmt.Errorf("no %s in the object", path[0])
	}
	val := insert
	for i := len(path) - 1; i > 0; i-- {
		val = objectOf(path[i], val)
	}
	item := hclwrite.Tokens{{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}}
	item = append(item, keyTokens(path[0])...)
	item = append(item, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("="), SpacesBefore: 1})
	val[0].SpacesBefore = 1
	item = append(item, val...)
	if closeAt == open+1 || !isNewline(toks[closeAt-1]) {
		item = append(item, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
	}
	return splice(toks, open+1, open+1, item), nil
}

// objectOf is the tokens of { key = val }.
func objectOf(key string, val hclwrite.Tokens) hclwrite.Tokens {
	out := hclwrite.Tokens{{Type: hclsyntax.TokenOBrace, Bytes: []byte("{")}, {Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}}
	out = append(out, keyTokens(key)...)
	out = append(out, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("="), SpacesBefore: 1})
	val[0].SpacesBefore = 1
	out = append(out, val...)
	return append(out, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}")})
}

// keyTokens writes an object key: bare when it is an identifier, quoted
// otherwise ("app.kubernetes.io/name").
func keyTokens(key string) hclwrite.Tokens {
	if hclsyntax.ValidIdentifier(key) {
		return hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(key), SpacesBefore: 2}}
	}
	t := hclwrite.TokensForValue(cty.StringVal(key))
	t[0].SpacesBefore = 2
	return t
}

func isNewline(t *hclwrite.Token) bool { return t.Type == hclsyntax.TokenNewline }

func splice(toks hclwrite.Tokens, from, to int, with hclwrite.Tokens) hclwrite.Tokens {
	out := make(hclwrite.Tokens, 0, len(toks)-(to-from)+len(with))
	out = append(out, toks[:from]...)
	out = append(out, with...)
	return append(out, toks[to:]...)
}

func firstSignificant(toks hclwrite.Tokens) int {
	for i, t := range toks {
		if t.Type != hclsyntax.TokenNewline && t.Type != hclsyntax.TokenComment {
			return i
		}
	}
	return -1
}

// item is one key = value of an object constructor, by token index.
type item struct {
	key                        string
	keyStart, valStart, valEnd int
}

// objectItems lists the items of the object whose "{" is toks[open] and
// returns the index of its "}".
func objectItems(toks hclwrite.Tokens, open int) ([]item, int, error) {
	var items []item
	i := open + 1
	for i < len(toks) {
		t := toks[i]
		switch t.Type {
		case hclsyntax.TokenNewline, hclsyntax.TokenComma, hclsyntax.TokenComment:
			i++
			continue
		case hclsyntax.TokenCBrace:
			return items, i, nil
		}
		key, next, err := readKey(toks, i)
		if err != nil {
			return nil, 0, err
		}
		if next >= len(toks) || (toks[next].Type != hclsyntax.TokenEqual && toks[next].Type != hclsyntax.TokenColon) {
			return nil, 0, fmt.Errorf("object item %q has no = after its key", key)
		}
		start := next + 1
		end := start
		depth := 0
	value:
		for ; end < len(toks); end++ {
			switch toks[end].Type {
			case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp,
				hclsyntax.TokenTemplateControl, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
				depth++
			case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd,
				hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
				if depth == 0 {
					break value // the object's own closing brace
				}
				depth--
			case hclsyntax.TokenNewline, hclsyntax.TokenComma:
				if depth == 0 {
					break value
				}
			case hclsyntax.TokenComment:
				// A line comment carries its line's newline.
				if depth == 0 && strings.HasSuffix(string(toks[end].Bytes), "\n") {
					break value
				}
			}
		}
		items = append(items, item{key: key, keyStart: i, valStart: start, valEnd: end})
		i = end
	}
	return nil, 0, fmt.Errorf("unterminated object")
}

// readKey reads an object key (bare or quoted) at toks[i].
func readKey(toks hclwrite.Tokens, i int) (string, int, error) {
	t := toks[i]
	if t.Type == hclsyntax.TokenIdent {
		return string(t.Bytes), i + 1, nil
	}
	if t.Type == hclsyntax.TokenOQuote && i+2 < len(toks) && toks[i+1].Type == hclsyntax.TokenQuotedLit && toks[i+2].Type == hclsyntax.TokenCQuote {
		return string(toks[i+1].Bytes), i + 3, nil
	}
	if t.Type == hclsyntax.TokenOQuote && i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenCQuote {
		return "", i + 2, nil
	}
	return "", 0, fmt.Errorf("object key at %q is not a plain name or string", t.Bytes)
}

// appendSuffix makes an expression's string value end in suffix: a quoted
// string gets it inside its quotes, anything else is wrapped in a template
// "${expr}suffix".
func appendSuffix(val hclwrite.Tokens, suffix string) hclwrite.Tokens {
	first := firstSignificant(val)
	last := len(val) - 1
	for last > first && (val[last].Type == hclsyntax.TokenNewline || val[last].Type == hclsyntax.TokenComment) {
		last--
	}
	lit := &hclwrite.Token{Type: hclsyntax.TokenQuotedLit, Bytes: []byte(suffix)}
	if first >= 0 && val[first].Type == hclsyntax.TokenOQuote && val[last].Type == hclsyntax.TokenCQuote {
		return splice(val, last, last, hclwrite.Tokens{lit})
	}
	inner := make(hclwrite.Tokens, 0, last-first+1)
	for _, t := range val[first : last+1] {
		c := *t
		inner = append(inner, &c)
	}
	inner[0].SpacesBefore = 0
	out := hclwrite.Tokens{{Type: hclsyntax.TokenOQuote, Bytes: []byte(`"`), SpacesBefore: val[first].SpacesBefore},
		{Type: hclsyntax.TokenTemplateInterp, Bytes: []byte("${")}}
	out = append(out, inner...)
	out = append(out, &hclwrite.Token{Type: hclsyntax.TokenTemplateSeqEnd, Bytes: []byte("}")}, lit,
		&hclwrite.Token{Type: hclsyntax.TokenCQuote, Bytes: []byte(`"`)})
	return append(out, val[last+1:]...)
}

// Saved is the content of every root file at one moment, to put back
// after a temporary change (a BREAK) wherever in the root it was made.
type Saved map[string][]byte

// Save reads every .tf file of the root, its local modules' and
// gauntlet's own included (not .terraform's).
func (r *Root) Save() (Saved, error) {
	s := Saved{}
	err := r.eachTF(func(p string) error {
		b, err := os.ReadFile(p)
		s[p] = b
		return err
	})
	return s, err
}

// Put writes saved files back and removes .tf files made since.
func (r *Root) Put(s Saved) error {
	if err := r.eachTF(func(p string) error {
		if _, ok := s[p]; !ok {
			return os.Remove(p)
		}
		return nil
	}); err != nil {
		return err
	}
	for p, b := range s {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// eachTF calls f with every .tf file the root's configuration is made
// of: those below its folder, and those of every local module folder it
// calls outside it ("../..", the usual shape of a module's examples/),
// followed call by call - a stage edits a module's block there, and Put
// must undo that edit like one in the root's own files.
func (r *Root) eachTF(f func(path string) error) error {
	if err := filepath.WalkDir(r.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(p) != ".tf" {
			return nil
		}
		return f(p)
	}); err != nil {
		return err
	}
	for _, dir := range outsideModuleDirs(r.Dir) {
		m, err := filepath.Glob(filepath.Join(dir, "*.tf"))
		if err != nil {
			return err
		}
		for _, p := range m {
			if err := f(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// outsideModuleDirs are the folders of the local modules root calls,
// directly or through other local modules, that lie outside root (each
// once, sorted). A folder it cannot read (a file that does not parse) is
// not followed, nor a source that is no literal local path.
func outsideModuleDirs(root string) []string {
	seen := map[string]bool{filepath.Clean(root): true}
	var out []string
	var visit func(dir string)
	visit = func(dir string) {
		calls, err := moduleCalls(dir)
		if err != nil {
			return
		}
		for _, c := range calls {
			if !LocalSource(c.source) {
				continue
			}
			next := filepath.Clean(filepath.Join(dir, filepath.FromSlash(c.source)))
			if seen[next] {
				continue
			}
			seen[next] = true
			if rel, err := filepath.Rel(root, next); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				out = append(out, next)
			}
			visit(next)
		}
	}
	visit(root)
	sort.Strings(out)
	return out
}
