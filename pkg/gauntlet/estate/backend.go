package estate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Records names where a root keeps its state when its backend is
// "kubernetes": a Secret per workspace in Namespace, told apart by
// Suffix (the backend's secret_suffix).
type Records struct {
	Namespace, Suffix string
}

func (r Records) String() string { return r.Namespace + "/" + r.Suffix }

// RemoteRead is a data "terraform_remote_state" that reads another root's
// records on the kubernetes backend.
type RemoteRead struct {
	// Name is the data source's name (data.terraform_remote_state.<Name>).
	Name    string
	Records Records
}

// localOverride is the override file that keeps a root on local state
// until the migrate stage moves its state into the cluster: Terraform and
// OpenTofu merge *_override.tf files over the root, a backend block in one
// replacing the root's own.
const localOverride = "gauntlet_local_override.tf"

// Records returns where the root keeps its state, or nil when its backend
// is not "kubernetes" (local state, or a backend gauntlet does not read).
func (r *Root) Records() (*Records, error) {
	var out *Records
	err := r.eachBlock(func(b *hclsyntax.Block) error {
		if b.Type != "terraform" {
			return nil
		}
		for _, inner := range b.Body.Blocks {
			if inner.Type != "backend" || len(inner.Labels) != 1 || inner.Labels[0] != "kubernetes" {
				continue
			}
			rec := Records{Namespace: "default"}
			for name, attr := range inner.Body.Attributes {
				v, diags := attr.Expr.Value(nil)
				if diags.HasErrors() || v.Type() != cty.String {
					if name == "namespace" || name == "secret_suffix" {
						return fmt.Errorf("backend \"kubernetes\" %s: gauntlet reads only a literal string here", name)
					}
					continue
				}
				switch name {
				case "namespace":
					rec.Namespace = v.AsString()
				case "secret_suffix":
					rec.Suffix = v.AsString()
				}
			}
			if rec.Suffix == "" {
				return fmt.Errorf("backend \"kubernetes\" has no secret_suffix")
			}
			out = &rec
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", r.Name, err)
	}
	return out, nil
}

// RemoteReads lists the root's terraform_remote_state data sources on the
// kubernetes backend, by name.
func (r *Root) RemoteReads() ([]RemoteRead, error) {
	var out []RemoteRead
	err := r.eachBlock(func(b *hclsyntax.Block) error {
		if b.Type != "data" || len(b.Labels) != 2 || b.Labels[0] != "terraform_remote_state" {
			return nil
		}
		attrs := b.Body.Attributes
		backend, ok := attrs["backend"]
		if !ok {
			return nil
		}
		if v, diags := backend.Expr.Value(nil); diags.HasErrors() || v.Type() != cty.String || v.AsString() != "kubernetes" {
			return nil
		}
		rec := Records{Namespace: "default"}
		if cfg, ok := attrs["config"]; ok {
			v, diags := cfg.Expr.Value(nil)
			if diags.HasErrors() || !v.Type().IsObjectType() {
				return fmt.Errorf("data.terraform_remote_state.%s: gauntlet reads only a literal config object", b.Labels[1])
			}
			for k, val := range v.AsValueMap() {
				if val.Type() != cty.String {
					continue
				}
				switch k {
				case "namespace":
					rec.Namespace = val.AsString()
				case "secret_suffix":
					rec.Suffix = val.AsString()
				}
			}
		}
		out = append(out, RemoteRead{Name: b.Labels[1], Records: rec})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", r.Name, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// WriteLocalOverride keeps the root on local state: its backend becomes
// "local", and each remote read named in reads (data source name -> the
// local state file of the root it reads) reads that file instead.
func (r *Root) WriteLocalOverride(reads map[string]string) error {
	var b strings.Builder
	b.WriteString("# Written by gauntlet: local state until the migrate stage moves it into the\n# cluster, and the remote reads pointed at the local state files meanwhile.\n")
	b.WriteString("terraform {\n  backend \"local\" {}\n}\n")
	names := make([]string, 0, len(reads))
	for n := range reads {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\ndata \"terraform_remote_state\" %q {\n  backend = \"local\"\n  config = {\n    path = %q\n  }\n}\n", n, reads[n])
	}
	return r.WriteFile(localOverride, b.String())
}

// RemoveLocalOverride removes the override WriteLocalOverride wrote.
func (r *Root) RemoveLocalOverride() error {
	err := os.Remove(filepath.Join(r.Dir, localOverride))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// eachBlock calls f on every top-level block of the root module's own
// .tf files (gauntlet's aside).
func (r *Root) eachBlock(f func(*hclsyntax.Block) error) error {
	paths, err := rootFiles(r.Dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		file, diags := hclsyntax.ParseConfig(src, filepath.Base(p), hcl.InitialPos)
		if diags.HasErrors() {
			return fmt.Errorf("parse %s: %s", filepath.Base(p), diags.Error())
		}
		for _, b := range file.Body.(*hclsyntax.Body).Blocks {
			if err := f(b); err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(p), err)
			}
		}
	}
	return nil
}
