// Package estate reads an estate's declarative spec (estates/<name>/
// estate.yaml), verifies its source, and materialises its Terraform root
// for one run: the pinned file copied, every delta applied and asserted, and
// a providers file written by gauntlet.
package estate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Spec is an estate's estate.yaml.
type Spec struct {
	Name        string  `json:"name"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Lane        string  `json:"lane"`
	Set         string  `json:"set"`
	Source      *Source `json:"source,omitempty"`
	// Files are Terraform files written here, beside estate.yaml, for
	// reference estates (no Source).
	Files []string `json:"files,omitempty"`
	// Namespace receives the stage additions; Prefix starts their names.
	Namespace string `json:"namespace"`
	Prefix    string `json:"prefix"`
	// WritesInto are namespaces the estate writes into without owning;
	// teardown compares them with a baseline taken before cold deploy.
	WritesInto []string `json:"writes_into,omitempty"`
	// Kinds are the kinds the estate creates. Optional: the run derives
	// them from the state and discovery, and a list given here must match.
	Kinds []Kind `json:"kinds,omitempty"`
	// Deltas change the source for a run; each must match exactly.
	Deltas []Delta `json:"deltas,omitempty"`
	// Skip names stages that do not apply, with the reason.
	Skip map[string]string `json:"skip,omitempty"`

	Drift        *Drift        `json:"drift,omitempty"`
	Rename       *Rename       `json:"rename,omitempty"`
	Remove       *Remove       `json:"remove,omitempty"`
	PlanApproval *PlanApproval `json:"plan_approval,omitempty"`

	// Dir is the estate's folder (set by Load).
	Dir string `json:"-"`
}

// Source pins a third-party file: repository, commit, path and sha256.
type Source struct {
	Repository string `json:"repository"`
	Commit     string `json:"commit"`
	Path       string `json:"path"`
	SHA256     string `json:"sha256"`
	License    string `json:"license"`
}

// Kind is a Kubernetes kind by group/version/kind.
type Kind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Object names one live object.
type Object struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Edit replaces Old with New exactly Count times (default 1) in the root.
type Edit struct {
	Old   string `json:"old"`
	New   string `json:"new"`
	Count int    `json:"count,omitempty"`
}

// Delta is an Edit the run applies to the source, on the listed
// substrates (all when empty), with the reason it is needed.
type Delta struct {
	Name       string   `json:"name"`
	Why        string   `json:"why"`
	Substrates []string `json:"substrates,omitempty"`
	Edit       `json:",inline"`
}

// Tamper is an out-of-band JSON patch to one object.
type Tamper struct {
	Object Object `json:"object"`
	Patch  string `json:"patch"`
}

// Drift: patch Object out of band; the plan must propose exactly Address;
// after reconverge Field reads Want. Break tampers a second object.
type Drift struct {
	Address string `json:"address"`
	Object  Object `json:"object"`
	Patch   string `json:"patch"`
	Field   string `json:"field"`
	Want    string `json:"want"`
	Break   Tamper `json:"break"`
}

// Rename: a moved block From -> To with Edits making references follow.
// Break edits the object's own name instead.
type Rename struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Edits []Edit `json:"edits"`
	Break []Edit `json:"break"`
}

// Remove: delete Address's block; Object must go, Neighbour must stay.
type Remove struct {
	Address   string `json:"address"`
	Object    Object `json:"object"`
	Neighbour Object `json:"neighbour"`
}

// PlanApproval: plan Edit as a saved plan (an update at Address to
// Object), move the world with Move, then apply the saved plan.
type PlanApproval struct {
	Address string `json:"address"`
	Edit    Edit   `json:"edit"`
	Object  Object `json:"object"`
	Move    Tamper `json:"move"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Load reads and validates estates/<name>/estate.yaml under root.
func Load(root, name string) (*Spec, error) {
	dir := filepath.Join(root, name)
	raw, err := os.ReadFile(filepath.Join(dir, "estate.yaml"))
	if err != nil {
		if os.IsNotExist(err) {
			have, _ := List(root)
			return nil, fmt.Errorf("no estate %q in %s (estates: %s)", name, root, strings.Join(have, ", "))
		}
		return nil, err
	}
	s, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("estate %s: %w", name, err)
	}
	if s.Name != name {
		return nil, fmt.Errorf("estate %s: estate.yaml names itself %q", name, s.Name)
	}
	s.Dir = dir
	for _, f := range s.Files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("estate %s: file %s: %w", name, f, err)
		}
	}
	return s, nil
}

// List returns the estates under root (folders holding estate.yaml).
func List(root string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(root, "*", "estate.yaml"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		out = append(out, filepath.Base(filepath.Dir(m)))
	}
	sort.Strings(out)
	return out, nil
}

// Parse parses and validates a spec; unknown fields are errors.
func Parse(raw []byte) (*Spec, error) {
	var s Spec
	if err := yaml.UnmarshalStrict(raw, &s); err != nil {
		return nil, err
	}
	s.defaults()
	return &s, s.validate()
}

// defaults fills what a minimal estate.yaml (name, title, source,
// variables) leaves out: the kubernetes lane and growing set, stage
// additions in namespace "default" prefixed "gauntlet", and that namespace
// as the one the estate writes into without owning.
func (s *Spec) defaults() {
	if s.Lane == "" {
		s.Lane = "kubernetes"
	}
	if s.Set == "" {
		s.Set = "growing"
	}
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	if s.Prefix == "" {
		s.Prefix = "gauntlet"
	}
	if len(s.WritesInto) == 0 {
		s.WritesInto = []string{s.Namespace}
	}
}

var (
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

func (s *Spec) validate() error {
	switch {
	case !nameRE.MatchString(s.Name):
		return fmt.Errorf("name %q: lowercase letters, digits and dashes", s.Name)
	case s.Title == "":
		return fmt.Errorf("title is required")
	case (s.Source == nil) == (len(s.Files) == 0):
		return fmt.Errorf("exactly one of source (a corpus file) and files (written here) is required")
	case !nameRE.MatchString(s.Namespace) || !nameRE.MatchString(s.Prefix):
		return fmt.Errorf("namespace %q and prefix %q (for the stage additions): lowercase letters, digits and dashes", s.Namespace, s.Prefix)
	}
	if src := s.Source; src != nil {
		if src.Repository == "" || src.Path == "" || !commitRE.MatchString(src.Commit) {
			return fmt.Errorf("source: repository, path and a full 40-hex commit are required (quote the commit in YAML)")
		}
		if !sha256RE.MatchString(src.SHA256) {
			return fmt.Errorf("source: sha256 %q is not 64 lowercase hex digits", src.SHA256)
		}
	}
	for _, k := range s.Kinds {
		if k.Version == "" || k.Kind == "" {
			return fmt.Errorf("kinds: %+v needs a version and a kind (or drop the list: the run derives it)", k)
		}
	}
	for _, d := range s.Deltas {
		if d.Name == "" || d.Why == "" || d.Old == "" {
			return fmt.Errorf("delta %q: name, why and old are required", d.Name)
		}
	}
	return nil
}
