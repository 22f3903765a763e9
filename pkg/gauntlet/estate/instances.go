package estate

import (
	"fmt"
	"math/big"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// RemoveInstance takes one instance out of its block and leaves the
// others: a count written as a literal number loses one (the instance must
// be the last index), a for_each written as a literal - an object, or
// toset of a list of strings, in the block or in a local of the same
// module - loses the instance's key. Anything else (a count or a
// collection computed from variables) is refused: the edit would not say
// which instance goes.
func (r *Root) RemoveInstance(address string) error {
	t, err := r.find(address)
	if err != nil {
		return fmt.Errorf("remove instance: %w", err)
	}
	a := t.addr
	if !a.Key.Set {
		return fmt.Errorf("remove instance: %s has no instance key", address)
	}
	for _, c := range a.Calls {
		if c.Key.Set {
			// The module's block is every module instance's.
			return fmt.Errorf("remove instance: %s is inside a module call with count or for_each", address)
		}
	}
	body := t.block.Body()
	if ca := body.GetAttribute("count"); ca != nil {
		n, ok := literalCount(ca.Expr().BuildTokens(nil))
		if !ok {
			return fmt.Errorf("remove instance %s: its count is not a literal number", address)
		}
		if !a.Key.Int || a.Key.Index != n-1 {
			return fmt.Errorf("remove instance %s: lowering count %d removes index %d only", address, n, n-1)
		}
		body.SetAttributeValue("count", cty.NumberIntVal(int64(n-1)))
		return t.file.write()
	}
	fe := body.GetAttribute("for_each")
	if fe == nil || a.Key.Int {
		return fmt.Errorf("remove instance %s: its block has no for_each with string keys", address)
	}
	toks := fe.Expr().BuildTokens(nil)
	if name, ok := localName(toks); ok {
		for _, f := range t.files {
			for _, lb := range f.f.Body().Blocks() {
				la := lb.Body().GetAttribute(name)
				if lb.Type() != "locals" || la == nil {
					continue
				}
				out, err := dropKey(la.Expr().BuildTokens(nil), a.Key.String)
				if err != nil {
					return fmt.Errorf("remove instance %s: local.%s: %w", address, name, err)
				}
				lb.Body().SetAttributeRaw(name, out)
				return f.write()
			}
		}
		return fmt.Errorf("remove instance %s: no local %s in its module", address, name)
	}
	out, err := dropKey(toks, a.Key.String)
	if err != nil {
		return fmt.Errorf("remove instance %s: for_each: %w", address, err)
	}
	body.SetAttributeRaw("for_each", out)
	return t.file.write()
}

// literalCount is a count expression's value when it is a literal whole
// number.
func literalCount(toks hclwrite.Tokens) (int, bool) {
	e, diags := hclsyntax.ParseExpression(toks.Bytes(), "", hcl.InitialPos)
	if diags.HasErrors() || len(e.Variables()) > 0 {
		return 0, false
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0, false
	}
	i, acc := v.AsBigFloat().Int64()
	return int(i), acc == big.Exact && i > 0
}

// localName is NAME when the expression is exactly local.NAME.
func localName(toks hclwrite.Tokens) (string, bool) {
	e, diags := hclsyntax.ParseExpression(toks.Bytes(), "", hcl.InitialPos)
	if diags.HasErrors() {
		return "", false
	}
	st, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(st.Traversal) != 2 || st.Traversal.RootName() != "local" {
		return "", false
	}
	at, ok := st.Traversal[1].(hcl.TraverseAttr)
	return at.Name, ok
}

// dropKey takes key out of a collection written as a literal: an object
// constructor's item, or an element of toset([...]).
func dropKey(toks hclwrite.Tokens, key string) (hclwrite.Tokens, error) {
	open := firstSignificant(toks)
	if open < 0 {
		return nil, fmt.Errorf("empty expression")
	}
	if toks[open].Type == hclsyntax.TokenOBrace {
		items, _, err := objectItems(toks, open)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if it.key == key {
				return dropRange(toks, it.keyStart, it.valEnd), nil
			}
		}
		return nil, fmt.Errorf("no key %q in the object", key)
	}
	if toks[open].Type != hclsyntax.TokenIdent || string(toks[open].Bytes) != "toset" {
		return nil, fmt.Errorf("not an object or toset([...]) written out")
	}
	brack := -1
	for i := open + 1; i < len(toks); i++ {
		if toks[i].Type == hclsyntax.TokenOBrack {
			brack = i
			break
		}
		if toks[i].Type != hclsyntax.TokenOParen && toks[i].Type != hclsyntax.TokenNewline {
			break
		}
	}
	if brack < 0 {
		return nil, fmt.Errorf("toset's argument is not a list written out")
	}
	for _, el := range listItems(toks, brack) {
		e, diags := hclsyntax.ParseExpression(toks[el[0]:el[1]].Bytes(), "", hcl.InitialPos)
		if diags.HasErrors() || len(e.Variables()) > 0 {
			continue
		}
		if v, diags := e.Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == key {
			return dropRange(toks, el[0], el[1]), nil
		}
	}
	return nil, fmt.Errorf("no element %q in the list", key)
}

// dropRange removes the collection item toks[start:end] with its
// separator: the comma and newline after it, or, for the last item on a
// line, the comma before it.
func dropRange(toks hclwrite.Tokens, start, end int) hclwrite.Tokens {
	if e := separatorEnd(toks, end); e > end {
		return splice(toks, start, e, nil)
	}
	if start > 0 && toks[start-1].Type == hclsyntax.TokenComma {
		start--
	}
	return splice(toks, start, end, nil)
}

// separatorEnd extends an item ending at end over the comma after it and
// the newline that ends its line.
func separatorEnd(toks hclwrite.Tokens, end int) int {
	if end < len(toks) && toks[end].Type == hclsyntax.TokenComma {
		end++
	}
	if end < len(toks) && toks[end].Type == hclsyntax.TokenComment {
		end++ // a comment token carries its line's newline
	} else if end < len(toks) && toks[end].Type == hclsyntax.TokenNewline {
		end++
	}
	return end
}

// listItems lists the token ranges of a tuple constructor's elements,
// its "[" at toks[open].
func listItems(toks hclwrite.Tokens, open int) [][2]int {
	var out [][2]int
	start, depth := -1, 0
	for i := open + 1; i < len(toks); i++ {
		switch toks[i].Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp,
			hclsyntax.TokenTemplateControl, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			if start < 0 {
				start = i
			}
			depth++
			continue
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if depth == 0 {
				if start >= 0 {
					out = append(out, [2]int{start, i})
				}
				return out
			}
			depth--
			continue
		case hclsyntax.TokenComma, hclsyntax.TokenNewline, hclsyntax.TokenComment:
			if depth == 0 {
				if start >= 0 {
					out = append(out, [2]int{start, i})
				}
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}
