package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// edit changes one parsed configuration file and says how many
// constructs it removed.
type edit func(f *hclwrite.File) int

// removeBlocks removes every top-level block of one type (moved, import).
func removeBlocks(typ string) edit {
	return func(f *hclwrite.File) int {
		n := 0
		for _, b := range f.Body().Blocks() {
			if b.Type() == typ {
				f.Body().RemoveBlock(b)
				n++
			}
		}
		return n
	}
}

// dropCreateBeforeDestroy removes `create_before_destroy = true` from the
// lifecycle block of every resource.
func dropCreateBeforeDestroy(f *hclwrite.File) int {
	n := 0
	for _, r := range f.Body().Blocks() {
		if r.Type() != "resource" {
			continue
		}
		for _, l := range r.Body().Blocks() {
			if l.Type() != "lifecycle" {
				continue
			}
			a := l.Body().GetAttribute("create_before_destroy")
			if a != nil && strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes())) == "true" {
				l.Body().RemoveAttribute("create_before_destroy")
				n++
			}
		}
	}
	return n
}

// rewrite applies e to src; changed is false when e removed nothing or
// the file does not parse (tofu will report that itself).
func rewrite(name string, src []byte, e edit) (out []byte, changed bool) {
	f, diags := hclwrite.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return src, false
	}
	if e(f) == 0 {
		return src, false
	}
	return f.Bytes(), true
}

// strip rewrites the root's .tf files in dir with e and returns a function
// that puts every rewritten file back byte for byte.
func strip(dir string, e edit) (restore func() error, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	saved := map[string][]byte{}
	restore = func() error {
		var first error
		for p, b := range saved {
			if err := os.WriteFile(p, b, 0o644); err != nil && first == nil {
				first = fmt.Errorf("restore %s: %w", p, err)
			}
		}
		return first
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			restore()
			return nil, err
		}
		out, changed := rewrite(filepath.Base(p), src, e)
		if !changed || bytes.Equal(out, src) {
			continue
		}
		saved[p] = src
		if err := os.WriteFile(p, out, 0o644); err != nil {
			restore()
			return nil, err
		}
	}
	return restore, nil
}
