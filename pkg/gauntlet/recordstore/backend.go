package recordstore

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// FromBackendBlock reads the Store a root's `backend "kubernetes"` block
// configures, from the root's .tf files in dir: its secret_suffix and
// namespace (default "default"), given as literal strings. The default
// workspace is assumed.
func FromBackendBlock(dir string) (Store, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return Store{}, err
	}
	sort.Strings(files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return Store{}, err
		}
		file, diags := hclsyntax.ParseConfig(src, filepath.Base(f), hcl.InitialPos)
		if diags.HasErrors() {
			return Store{}, fmt.Errorf("parse %s: %s", f, diags.Error())
		}
		for _, tf := range file.Body.(*hclsyntax.Body).Blocks {
			if tf.Type != "terraform" {
				continue
			}
			for _, b := range tf.Body.Blocks {
				if b.Type != "backend" || len(b.Labels) != 1 || b.Labels[0] != "kubernetes" {
					continue
				}
				s := Store{Namespace: "default"}
				for name, dst := range map[string]*string{"secret_suffix": &s.Suffix, "namespace": &s.Namespace} {
					a, ok := b.Body.Attributes[name]
					if !ok {
						continue
					}
					v, diags := a.Expr.Value(nil)
					if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
						return Store{}, fmt.Errorf("%s: backend \"kubernetes\" %s is not a literal string", f, name)
					}
					*dst = v.AsString()
				}
				if s.Suffix == "" {
					return Store{}, fmt.Errorf("%s: backend \"kubernetes\" has no secret_suffix", f)
				}
				return s, nil
			}
		}
	}
	return Store{}, fmt.Errorf("%s: no backend \"kubernetes\" block in the root's .tf files", dir)
}
