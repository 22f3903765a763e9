// Package hclblock writes the configuration blocks stages and capability
// probes add to a root - moved, removed, import - with the HCL writer, so
// an address is written as a traversal, never pasted into text.
package hclblock

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Moved is `moved { from = from  to = to }`.
func Moved(from, to string) (string, error) {
	f := hclwrite.NewEmptyFile()
	b := f.Body().AppendNewBlock("moved", nil)
	for _, kv := range [][2]string{{"from", from}, {"to", to}} {
		t, diags := hclsyntax.ParseTraversalAbs([]byte(kv[1]), "", hcl.InitialPos)
		if diags.HasErrors() {
			return "", fmt.Errorf("moved %s: %s", kv[0], diags.Error())
		}
		b.Body().SetAttributeTraversal(kv[0], t)
	}
	return string(hclwrite.Format(f.Bytes())), nil
}

// Removed is `removed { from = address  lifecycle { destroy = false } }`:
// the engine forgets the object and leaves it live.
func Removed(address string) (string, error) {
	f := hclwrite.NewEmptyFile()
	b := f.Body().AppendNewBlock("removed", nil)
	t, diags := hclsyntax.ParseTraversalAbs([]byte(address), "", hcl.InitialPos)
	if diags.HasErrors() {
		return "", fmt.Errorf("removed from: %s", diags.Error())
	}
	b.Body().SetAttributeTraversal("from", t)
	b.Body().AppendNewBlock("lifecycle", nil).Body().SetAttributeValue("destroy", cty.False)
	return string(hclwrite.Format(f.Bytes())), nil
}

// Import is `import { to = address  id = "..." }`.
func Import(address, id string) (string, error) {
	f := hclwrite.NewEmptyFile()
	b := f.Body().AppendNewBlock("import", nil)
	t, diags := hclsyntax.ParseTraversalAbs([]byte(address), "", hcl.InitialPos)
	if diags.HasErrors() {
		return "", fmt.Errorf("import to: %s", diags.Error())
	}
	b.Body().SetAttributeTraversal("to", t)
	b.Body().SetAttributeValue("id", cty.StringVal(id))
	return string(hclwrite.Format(f.Bytes())), nil
}
