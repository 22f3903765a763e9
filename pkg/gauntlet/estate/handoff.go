package estate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Handoff: one object moves from root From to root To without the live
// object changing - the engine under test with a `removed` block (destroy
// = false) in From and an `import` block in To, stock with `state rm` and
// `import`. Address is the resource's root-module address in both roots.
type Handoff struct {
	Address string `json:"address"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// check validates the section against the estate's root names.
func (h *Handoff) check(roots map[string]bool) error {
	if h == nil {
		return nil
	}
	if _, _, err := splitAddress(h.Address); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	for _, n := range []string{h.From, h.To} {
		if !roots[n] {
			return fmt.Errorf("handoff: no root %q", n)
		}
	}
	if h.From == h.To {
		return fmt.Errorf("handoff: from and to are both %q: a hand-off is between two roots", h.From)
	}
	return nil
}

// TakeResource removes the resource block at address ("type.name") from
// the root and returns its text, as written, for another root to adopt.
func (r *Root) TakeResource(address string) (string, error) {
	files, err := r.parseAll()
	if err != nil {
		return "", err
	}
	f, block, err := rootBlock(files, address)
	if err != nil {
		return "", fmt.Errorf("take block: %w", err)
	}
	text := string(hclwrite.Format(block.BuildTokens(nil).Bytes()))
	f.f.Body().RemoveBlock(block)
	return strings.TrimLeft(text, "\n"), f.write()
}

// AdoptResource appends a resource block's text (from TakeResource) to the
// root's main file; the root must not have that block yet.
func (r *Root) AdoptResource(address, text string) error {
	files, err := r.parseAll()
	if err != nil {
		return err
	}
	if _, _, err := rootBlock(files, address); err == nil {
		return fmt.Errorf("adopt %s: the root already has that block", address)
	}
	add, diags := hclwrite.ParseConfig([]byte(text), address, hcl.InitialPos)
	if diags.HasErrors() {
		return fmt.Errorf("adopt %s: %s", address, diags.Error())
	}
	for _, f := range files {
		if f.path != filepath.Join(r.Dir, filepath.FromSlash(r.Main)) {
			continue
		}
		body := f.f.Body()
		body.AppendNewline()
		for _, b := range add.Body().Blocks() {
			body.AppendBlock(b)
		}
		return f.write()
	}
	return fmt.Errorf("adopt %s: the root's main file %s is not among its files", address, r.Main)
}
