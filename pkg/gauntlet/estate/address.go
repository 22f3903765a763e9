package estate

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Address is a managed resource instance address as the engines print it
// (show -json, state list, the apply's progress lines):
// module.a["k"].module.b.kubernetes_x.y[0].
type Address struct {
	// Calls are the module calls from the root, outermost first, each
	// with its instance key (Key.Set false when the call has none).
	Calls []Call
	Type  string
	Name  string
	Key   Key
}

// Call is one module call step of an address.
type Call struct {
	Name string
	Key  Key
}

// Key is an instance key: a count index or a for_each key.
type Key struct {
	Set bool
	// Int is true for a count index (Index), false for a for_each key
	// (String).
	Int    bool
	Index  int
	String string
}

// Text is the key as an address writes it: [0] or ["a"], "" when unset.
func (k Key) Text() string {
	switch {
	case !k.Set:
		return ""
	case k.Int:
		return fmt.Sprintf("[%d]", k.Index)
	}
	return "[" + string(hclwrite.TokensForValue(cty.StringVal(k.String)).Bytes()) + "]"
}

// ParseAddress reads a managed resource instance address. Data sources
// and other non-resource addresses are refused.
func ParseAddress(s string) (Address, error) {
	t, diags := hclsyntax.ParseTraversalAbs([]byte(s), "", hcl.InitialPos)
	if diags.HasErrors() {
		return Address{}, fmt.Errorf("%q is not a resource address: %s", s, diags.Error())
	}
	var steps []Call // a name with the key that follows it
	for i, st := range t {
		switch st := st.(type) {
		case hcl.TraverseRoot:
			steps = append(steps, Call{Name: st.Name})
		case hcl.TraverseAttr:
			steps = append(steps, Call{Name: st.Name})
		case hcl.TraverseIndex:
			if i == 0 || steps[len(steps)-1].Key.Set {
				return Address{}, fmt.Errorf("%q is not a resource address: a key with no name before it", s)
			}
			k, err := keyOf(st.Key)
			if err != nil {
				return Address{}, fmt.Errorf("%q: %w", s, err)
			}
			steps[len(steps)-1].Key = k
		default:
			return Address{}, fmt.Errorf("%q is not a resource address", s)
		}
	}
	var a Address
	for len(steps) >= 2 && steps[0].Name == "module" && !steps[0].Key.Set {
		a.Calls = append(a.Calls, steps[1])
		steps = steps[2:]
	}
	if len(steps) != 2 || steps[0].Key.Set || steps[0].Name == "module" || steps[0].Name == "data" {
		return Address{}, fmt.Errorf("%q is not a managed resource address [module.m.]type.name[key]", s)
	}
	a.Type, a.Name, a.Key = steps[0].Name, steps[1].Name, steps[1].Key
	return a, nil
}

func keyOf(v cty.Value) (Key, error) {
	switch {
	case v.IsNull() || !v.IsKnown():
	case v.Type() == cty.String:
		return Key{Set: true, String: v.AsString()}, nil
	case v.Type() == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact && i >= 0 {
			return Key{Set: true, Int: true, Index: int(i)}, nil
		}
	}
	return Key{}, fmt.Errorf("an instance key is a string or a whole number")
}

// Module is the module path without instance keys: "module.a.module.b",
// "" at the root.
func (a Address) Module() string {
	var b strings.Builder
	for i, c := range a.Calls {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString("module." + c.Name)
	}
	return b.String()
}

// Block is the address of the resource block every instance of a shares
// (through every instance of its module calls): module.a.type.name.
func (a Address) Block() string {
	if m := a.Module(); m != "" {
		return m + "." + a.Type + "." + a.Name
	}
	return a.Type + "." + a.Name
}

// Instanced reports whether the address or any module call on its path
// has an instance key.
func (a Address) Instanced() bool {
	if a.Key.Set {
		return true
	}
	for _, c := range a.Calls {
		if c.Key.Set {
			return true
		}
	}
	return false
}

// String writes the address back as the engines print it.
func (a Address) String() string {
	var b strings.Builder
	for _, c := range a.Calls {
		b.WriteString("module." + c.Name + c.Key.Text() + ".")
	}
	b.WriteString(a.Type + "." + a.Name + a.Key.Text())
	return b.String()
}

// BlockOf is the block address of an instance address, or the address
// itself when it does not parse.
func BlockOf(address string) string {
	a, err := ParseAddress(address)
	if err != nil {
		return address
	}
	return a.Block()
}
