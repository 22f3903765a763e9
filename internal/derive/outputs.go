package derive

import (
	"maps"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// A block that only outputs read can still be removed: module authors
// publish every resource's name as an output, so in a module-heavy root
// almost no block is a leaf. The removal then edits each output that
// reads it to read it as a count of 0 would give it - an empty list in
// place of each splat of it - provided nothing but outputs reads those
// outputs, up to the root's, which nothing in the configuration reads.

// output is one output block of a module folder.
type output struct {
	path string // its file
	src  []byte // the file's text, for the value's exact text
	expr hclsyntax.Expression
	// reads are the module outputs its value reads: "call.name", or
	// "call.*" for a whole call (or an instance of a counted one).
	reads map[string]bool
}

// moduleReads adds the module outputs body's expressions read to into.
func moduleReads(body *hclsyntax.Body, into map[string]bool) {
	for _, a := range body.Attributes {
		exprModuleReads(a.Expr, into)
	}
	for _, b := range body.Blocks {
		moduleReads(b.Body, into)
	}
}

func exprModuleReads(e hclsyntax.Expression, into map[string]bool) {
	for _, t := range e.Variables() {
		if t.RootName() != "module" || len(t) < 2 {
			continue
		}
		call, ok := t[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		name := "*"
		if len(t) > 2 {
			if at, ok := t[2].(hcl.TraverseAttr); ok {
				name = at.Name
			}
		}
		into[call.Name+"."+name] = true
	}
}

// modInst is one module call path's folder as the analysis walked it; the
// root's prefix is "".
type modInst struct {
	m      *module
	parent string // the caller's prefix
	call   string // the call's name in the caller
}

// unread reports whether nothing but outputs reads output name of the
// module at prefix, following the outputs that pass it on up to the root.
func unread(mods map[string]*modInst, prefix, name string, depth int) bool {
	in := mods[prefix]
	if in == nil || depth > maxDepth {
		return false
	}
	if prefix == "" {
		return true
	}
	caller := mods[in.parent]
	if caller == nil {
		return false
	}
	key, whole := in.call+"."+name, in.call+".*"
	if caller.m.uses[key] || caller.m.uses[whole] {
		return false
	}
	for n, o := range caller.m.outputs {
		if (o.reads[key] || o.reads[whole]) && !unread(mods, in.parent, n, depth+1) {
			return false
		}
	}
	return true
}

// splatEdits are the edits that make o read the block local ("type.name"
// in o's module) as a count of 0 would give it: each splat of it becomes
// []. ok is false when o reads it any other way (an index, the whole
// object) or an edit's text is not o's file's alone.
func splatEdits(o *output, local string) (edits []estate.Edit, ok bool) {
	reads := readsOf(o.expr, local)
	hclsyntax.VisitAll(o.expr, func(n hclsyntax.Node) hcl.Diagnostics {
		sp, ok := n.(*hclsyntax.SplatExpr)
		if !ok {
			return nil
		}
		if src, ok := sp.Source.(*hclsyntax.ScopeTraversalExpr); ok && len(src.Traversal) == 2 && traverses(src.Traversal, local) {
			edits = append(edits, estate.Edit{File: o.path, Old: string(sp.Range().SliceBytes(o.src)), New: "[]"})
		}
		return nil
	})
	if reads == 0 || len(edits) != reads {
		return nil, false
	}
	for _, e := range edits {
		if strings.Count(string(o.src), e.Old) != 1 {
			return nil, false
		}
	}
	return edits, true
}

// outputReaders sets, on every block of in that only outputs read, the
// edits its removal needs (outEdits) and the outputs (outNames), when
// every one of them reads it through splats and nothing but outputs reads
// them in turn. rel makes a file's path relative to the root.
func outputReaders(mods map[string]*modInst, prefix string, blocks []block, rel func(string) string) {
	in := mods[prefix]
	names := slices.Sorted(maps.Keys(in.m.outputs))
	for i := range blocks {
		b := &blocks[i]
		if b.outRefs == 0 || b.outRefs != b.refs {
			continue
		}
		local := strings.TrimPrefix(b.address, prefixOf(prefix))
		var edits []estate.Edit
		var readers []string
		for _, n := range names {
			o := in.m.outputs[n]
			if readsOf(o.expr, local) == 0 {
				continue
			}
			e, splat := splatEdits(o, local)
			if !splat || !unread(mods, prefix, n, 0) {
				edits = nil
				break
			}
			for j := range e {
				e[j].File = rel(e[j].File)
			}
			edits, readers = append(edits, e...), append(readers, n)
		}
		// Every output reference is one of the edits (none in a
		// depends_on or a condition, say).
		if len(edits) == b.outRefs {
			b.outEdits, b.outNames = edits, readers
		}
	}
}

func prefixOf(module string) string {
	if module == "" {
		return ""
	}
	return module + "."
}

// readsOf counts e's references to the block local ("type.name").
func readsOf(e hclsyntax.Expression, local string) int {
	n := 0
	for _, t := range e.Variables() {
		if traverses(t, local) {
			n++
		}
	}
	return n
}

// traverses reports whether t starts with the block local ("type.name").
func traverses(t hcl.Traversal, local string) bool {
	typ, name, _ := strings.Cut(local, ".")
	if len(t) < 2 || t.RootName() != typ {
		return false
	}
	at, ok := t[1].(hcl.TraverseAttr)
	return ok && at.Name == name
}
