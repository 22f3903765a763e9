package estate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// providerDecls is what a root declares about providers itself: the provider
// blocks it configures and the local names it requires.
type providerDecls struct {
	Configured map[string]bool
	Required   map[string]bool
}

// declared reads the root module's own .tf files in dir (not its local
// modules, whose provider needs the root passes down) for provider blocks
// and required_providers entries. Gauntlet-owned files are left out.
func declared(dir string) (providerDecls, error) {
	b := providerDecls{Configured: map[string]bool{}, Required: map[string]bool{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return b, err
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "gauntlet_") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return b, err
		}
		file, diags := hclsyntax.ParseConfig(src, filepath.Base(f), hcl.InitialPos)
		if diags.HasErrors() {
			return b, fmt.Errorf("parse %s: %s", filepath.Base(f), diags.Error())
		}
		body, ok := file.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, blk := range body.Blocks {
			switch {
			case blk.Type == "provider" && len(blk.Labels) == 1:
				b.Configured[blk.Labels[0]] = true
			case blk.Type == "terraform":
				for _, inner := range blk.Body.Blocks {
					if inner.Type == "required_providers" {
						for name := range inner.Body.Attributes {
							b.Required[name] = true
						}
					}
				}
			}
		}
	}
	return b, nil
}

// providersTF is the providers file: a required_providers pin for each
// pinned provider the root does not require itself (a second entry for
// the same name is an error to the engines), and an empty kubernetes
// provider block - reading KUBE_CONFIG_PATH, which gauntlet sets per
// side - only when the root configures none of its own.
func providersTF(pins []ProviderPin, brought providerDecls, overridden bool) string {
	var req []string
	sorted := append([]ProviderPin(nil), pins...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		if brought.Required[p.Name] {
			continue
		}
		req = append(req, fmt.Sprintf("    %s = {\n      source  = %q\n      version = %q\n    }\n", p.Name, p.Source, p.Version))
	}
	var b strings.Builder
	b.WriteString("# Written by gauntlet: the providers this run pins, where the root does not\n# declare them itself.")
	if len(req) > 0 {
		b.WriteString("\nterraform {\n  required_providers {\n" + strings.Join(req, "") + "  }\n}\n")
	} else {
		b.WriteString(" The root requires every pinned provider itself.\n")
	}
	switch {
	case brought.Configured["kubernetes"] && overridden:
		b.WriteString("\n# The root configures its own kubernetes provider with cluster settings; " + ClusterOverride + "\n# points them at the side's cluster.\n")
	case brought.Configured["kubernetes"]:
		b.WriteString("\n# The root configures its own kubernetes provider and sets no cluster in it: it reads\n# KUBE_CONFIG_PATH, which gauntlet sets per side.\n")
	default:
		b.WriteString("\n# The kubernetes provider reads the cluster from KUBE_CONFIG_PATH, which gauntlet sets per side.\nprovider \"kubernetes\" {}\n")
	}
	return b.String()
}

// Redact replaces the value of every sensitive variable in s with
// "(sensitive)": such values are never printed.
func (s *Spec) Redact(text string) string {
	for _, v := range s.sensitiveValues() {
		text = strings.ReplaceAll(text, v, "(sensitive)")
	}
	return text
}

// SensitiveValues are the string forms of the sensitive variables'
// values, longest first: what a run must never print.
func (s *Spec) SensitiveValues() []string { return s.sensitiveValues() }

// sensitiveValues are the string forms of the sensitive variables' values
// (every root's), longest first so that one containing another goes whole.
func (s *Spec) sensitiveValues() []string {
	var out []string
	add := func(v any) {
		var walk func(v any)
		walk = func(v any) {
			switch t := v.(type) {
			case string:
				if t != "" {
					out = append(out, t)
				}
			case map[string]any:
				for _, e := range t {
					walk(e)
				}
			case []any:
				for _, e := range t {
					walk(e)
				}
			case nil:
			default:
				out = append(out, fmt.Sprint(t))
			}
		}
		walk(v)
	}
	for _, n := range s.Sensitive {
		if v, ok := s.Variables[n]; ok {
			add(v)
		}
		for _, r := range s.Roots {
			if v, ok := r.Variables[n]; ok {
				add(v)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// RedactJSON is Redact for JSON text, where a value appears escaped.
func (s *Spec) RedactJSON(text string) string {
	for _, v := range s.sensitiveValues() {
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		text = strings.ReplaceAll(text, strings.Trim(string(b), `"`), "(sensitive)")
	}
	return text
}
