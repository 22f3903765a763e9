// Package estate reads an estate's declarative spec (estates/<name>/
// estate.yaml), verifies its source, and materialises its Terraform root
// for one run: the pinned file copied, every delta applied and asserted, and
// a providers file written by gauntlet.
package estate

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/slashpath"
	"github.com/hashicorp/go-version"
	"sigs.k8s.io/yaml"
)

// APIVersion is the version of the estate.yaml format this gauntlet reads;
// every estate.yaml starts by naming it, so a file written for another
// format is refused by name rather than half-read.
const APIVersion = "gauntlet/v1"

// Spec is an estate's estate.yaml.
type Spec struct {
	// APIVersion must be APIVersion ("gauntlet/v1").
	APIVersion  string `json:"apiVersion"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// Lane (default "kubernetes") and Set (default "growing") are labels
	// that group estates for a reader: recorded in the result and shown on
	// the evidence page and by `gauntlet list`; nothing selects on them.
	Lane   string  `json:"lane"`
	Set    string  `json:"set"`
	Source *Source `json:"source,omitempty"`
	// Files are Terraform files written here, beside estate.yaml, for
	// reference estates (no Source): paths inside estate.yaml's folder,
	// the first file's folder being the root's; every other file keeps
	// its path from there (a local module under or beside the root).
	Files []string `json:"files,omitempty"`
	// Variables are written into the root as the run-owned
	// gauntlet.auto.tfvars.json; "${kubeconfig}" in a string value
	// becomes the side's kubeconfig path.
	Variables map[string]any `json:"variables,omitempty"`
	// Sensitive names variables whose values are never printed.
	Sensitive []string `json:"sensitive,omitempty"`
	// Roots, when given, replace Source/Files: roots applied in order
	// and destroyed in reverse (a CRD, then its custom resource).
	Roots []RootSpec `json:"roots,omitempty"`
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
	// RelaxProviders let a run use the pinned provider where the root's
	// version constraint excludes it (a root pinned to kubernetes
	// "~> 2.23" run on the pinned 3.2.1). Each is a declared delta the
	// evidence page shows; see RelaxProvider.
	RelaxProviders []RelaxProvider `json:"relax_providers,omitempty"`
	// Skip names stages that do not apply, with the reason.
	Skip map[string]string `json:"skip,omitempty"`
	// Findings name stages where the pinned engine, stock or the provider
	// misbehaves on this estate, each with why and exactly what the stage
	// reports (Finding): a run reporting anything else there, or passing
	// (the entry is stale), is not what the estate expects.
	Findings map[string]Finding `json:"findings,omitempty"`
	// NotDerived names stages gauntlet derives no plan for on this root
	// today, with what stops it. It changes nothing in a run (the stage is
	// still not run, the page says why); the estate's Go test then expects
	// exactly that, and fails once the stage runs (the entry is stale).
	NotDerived map[string]string `json:"not_derived,omitempty"`
	// Test says how the estate's Go test runs it (pkg/gauntlet/gauntlettest).
	Test *TestSpec `json:"test,omitempty"`

	Drift        *Drift        `json:"drift,omitempty"`
	Rename       *Rename       `json:"rename,omitempty"`
	Remove       *Remove       `json:"remove,omitempty"`
	PlanApproval *PlanApproval `json:"plan_approval,omitempty"`
	Fence        *Fence        `json:"fence,omitempty"`
	Handoff      *Handoff      `json:"handoff,omitempty"`

	// Dir is the estate's folder (set by Load).
	Dir string `json:"-"`
}

// TestSpec tunes an estate's Go test.
type TestSpec struct {
	// Sabotaged runs the gauntlet a second time with every BREAK's
	// corruption skipped, and fails if any BREAK still proves: a check that
	// way shown to be tautological. It doubles the test's time, so one
	// estate per family of BREAKs is enough.
	Sabotaged bool `json:"sabotaged,omitempty"`
}

// Source pins third-party files under one commit of a repository: a
// single file (Path and SHA256) or a list of files (Files, relative to
// Dir), each verified by its sha256.
type Source struct {
	Repository string `json:"repository"`
	Commit     string `json:"commit"`
	Path       string `json:"path,omitempty"`
	SHA256     string `json:"sha256,omitempty"`
	License    string `json:"license"`
	// Dir is the root's folder in the repository: the files' paths and
	// the root's local module sources are relative to it.
	Dir   string       `json:"dir,omitempty"`
	Files []SourceFile `json:"files,omitempty"`
}

// SourceFile is one pinned file of a list source; As renames it in the
// run's root (default: its path relative to Dir).
type SourceFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	As     string `json:"as,omitempty"`
}

// Pinned is one file of a source: where it is in the repository, its
// pinned sha256 and where it lands in the run's root.
type Pinned struct {
	RepoPath string
	SHA256   string
	RootPath string
}

// Pinned lists the source's files in order; the first is the root's
// main file (the one edits apply to unless they name another).
func (s *Source) Pinned() []Pinned {
	if len(s.Files) == 0 {
		return []Pinned{{RepoPath: s.Path, SHA256: s.SHA256, RootPath: path.Base(s.Path)}}
	}
	var out []Pinned
	for _, f := range s.Files {
		to := f.As
		if to == "" {
			to = f.Path
		}
		out = append(out, Pinned{RepoPath: path.Join(s.Dir, f.Path), SHA256: f.SHA256, RootPath: to})
	}
	return out
}

// Up is how many folders the source's files climb above the root's
// folder (a module called from "../../" takes 2): the run lays the root
// out that deep in its folder, the repository's folder names kept.
func (s *Source) Up() int {
	n := 0
	for _, p := range s.Pinned() {
		if up, _ := slashpath.Climb(p.RootPath); up > n {
			n = up
		}
	}
	return n
}

// Fetched is a pinned file found verified in the cache: RootPath is where
// it lands in the run's root, File where it lies now.
type Fetched struct {
	RootPath string
	File     string
}

// RootSpec is one root of an ordered estate.
type RootSpec struct {
	Name   string   `json:"name"`
	Source *Source  `json:"source,omitempty"`
	Files  []string `json:"files,omitempty"`
	// Variables add to (and override) the estate's own for this root.
	Variables map[string]any `json:"variables,omitempty"`
}

// RootSpecs returns the estate's roots in apply order: Roots, or one
// root named "root" made from Source/Files and Variables.
func (s *Spec) RootSpecs() []RootSpec {
	if len(s.Roots) > 0 {
		out := make([]RootSpec, len(s.Roots))
		for i, r := range s.Roots {
			vars := map[string]any{}
			for k, v := range s.Variables {
				vars[k] = v
			}
			for k, v := range r.Variables {
				vars[k] = v
			}
			r.Variables = vars
			out[i] = r
		}
		return out
	}
	return []RootSpec{{Name: DefaultRoot, Source: s.Source, Files: s.Files, Variables: s.Variables}}
}

// DefaultRoot names the root of a single-root estate.
const DefaultRoot = "root"

// StageRoot is the root the stage sections name ("" when none does).
func (s *Spec) StageRoot() string {
	for _, n := range s.stageRoots() {
		if n != "" {
			return n
		}
	}
	return ""
}

func (s *Spec) stageRoots() []string {
	var out []string
	if s.Drift != nil {
		out = append(out, s.Drift.Root)
	}
	if s.Rename != nil {
		out = append(out, s.Rename.Root)
	}
	if s.Remove != nil {
		out = append(out, s.Remove.Root)
	}
	if s.PlanApproval != nil {
		out = append(out, s.PlanApproval.Root)
	}
	if s.Fence != nil {
		out = append(out, s.Fence.Root)
	}
	return out
}

// ActedRoot is the root a stage acts on: the one named, else the last.
func (s *Spec) ActedRoot(name string) string {
	rs := s.RootSpecs()
	if name == "" {
		return rs[len(rs)-1].Name
	}
	return name
}

// Sources lists every root's pinned source (a corpus import or fetch
// brings them all).
func (s *Spec) Sources() []*Source {
	var out []*Source
	for _, r := range s.RootSpecs() {
		if r.Source != nil {
			out = append(out, r.Source)
		}
	}
	return out
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

// Edit replaces Old with New exactly Count times (default 1) in the
// root's File (default its main file); or, given HCL instead, sets one
// attribute of a resource block wherever its text lies.
type Edit struct {
	Old   string   `json:"old,omitempty"`
	New   string   `json:"new,omitempty"`
	Count int      `json:"count,omitempty"`
	File  string   `json:"file,omitempty"`
	HCL   *HCLEdit `json:"hcl,omitempty"`
}

// HCLEdit is a structured edit: no text anchor to keep exact, so a
// module-heavy root needs one line where a text edit needs the block's
// whitespace. In estate.yaml:
//
//	hcl: {resource: module.app.kubernetes_deployment_v1.web, set: spec.replicas, value: "1"}
type HCLEdit struct {
	// Resource is the block's address: "type.name", or in a local module
	// "module.app.type.name" (instance keys are dropped: the block's).
	Resource string `json:"resource"`
	// Set is the attribute, after the nested blocks that hold it, each
	// one of its type: "spec.replicas" is replicas of the one spec block.
	// An attribute the block does not write is added.
	Set string `json:"set"`
	// Value is an HCL expression, written as given: 1, "\"x\"", false.
	Value string `json:"value"`
}

// validate says what an edit lacks: exactly one of old and hcl.
func (e Edit) validate() error {
	if (e.Old == "") == (e.HCL == nil) {
		return fmt.Errorf("exactly one of old (a text edit) and hcl (a structured one) is required")
	}
	if h := e.HCL; h != nil {
		if h.Resource == "" || h.Set == "" || h.Value == "" {
			return fmt.Errorf("hcl: resource, set and value are required")
		}
		if _, err := ParseAddress(h.Resource); err != nil {
			return fmt.Errorf("hcl: resource: %w", err)
		}
		if _, err := hclValue(h.Value); err != nil {
			return fmt.Errorf("hcl: %w", err)
		}
		if e.New != "" || e.Count != 0 || e.File != "" {
			return fmt.Errorf("hcl: new, count and file go with old (a text edit); a structured edit finds its block by address")
		}
	}
	return nil
}

// Delta is an Edit the run applies to the source, on the listed
// substrates (all when empty), with the reason it is needed.
type Delta struct {
	Name       string   `json:"name"`
	Why        string   `json:"why"`
	Substrates []string `json:"substrates,omitempty"`
	// Root names the root it edits (default: the last).
	Root string `json:"root,omitempty"`
	Edit `json:",inline"`
}

// RelaxProvider relaxes one version constraint the root writes in a
// required_providers block to the version gauntlet pins, through an
// override file the run owns (gauntlet_relax_override.tf, beside the
// block). In estate.yaml:
//
//	relax_providers:
//	  - provider: kubernetes      # the local name in required_providers
//	    constraint: "~> 2.23"     # exactly as the root writes it
//	    why: the root was written against 2.x; 3.2.1 is the provider the toolchain supplies
//
// It is refused at run time when no required_providers entry of that name
// has that constraint (the pinned source moved), when the provider is not
// one the toolchain pins (only the version may be relaxed, never the
// provider), and when the pinned version already meets the constraint
// (the relaxation is stale). `gauntlet estate new` and the preflight name
// every constraint that excludes a pin.
type RelaxProvider struct {
	Provider   string `json:"provider"`
	Constraint string `json:"constraint"`
	Why        string `json:"why"`
	// Root names the root it applies to (default: every root).
	Root string `json:"root,omitempty"`
}

// Tamper is an out-of-band JSON patch to one object.
type Tamper struct {
	Object Object `json:"object"`
	Patch  string `json:"patch"`
}

// Drift: patch Object out of band; the plan must propose exactly Address;
// after reconverge Field reads Want. Break tampers a second object.
type Drift struct {
	// Root names the root the stages act on (default: the last).
	Root    string `json:"root,omitempty"`
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
	// Root names the root the stages act on (default: the last).
	Root  string `json:"root,omitempty"`
	From  string `json:"from"`
	To    string `json:"to"`
	Edits []Edit `json:"edits"`
	Break []Edit `json:"break"`
}

// Remove: delete Address's block; Object must go, Neighbour must stay.
type Remove struct {
	// Root names the root the stages act on (default: the last).
	Root string `json:"root,omitempty"`
	// Address is the resource whose block is deleted; with an instance key
	// and no File or Block, that one instance is taken out of its block's
	// literal for_each or count instead (Root.RemoveInstance).
	Address string `json:"address"`
	// File and Block locate the resource block to delete when Address is
	// not "type.name" in the main file (a block in a local module):
	// File is its path in the root, Block its "type.name" there.
	File  string `json:"file,omitempty"`
	Block string `json:"block,omitempty"`
	// Edits take the removed block's references out (an output naming
	// it), each matching exactly as declared.
	Edits     []Edit `json:"edits,omitempty"`
	Object    Object `json:"object"`
	Neighbour Object `json:"neighbour"`
}

// PlanApproval: plan Edit as a saved plan (an update at Address to
// Object), move the world with Move, then apply the saved plan.
type PlanApproval struct {
	// Root names the root the stages act on (default: the last).
	Root    string `json:"root,omitempty"`
	Address string `json:"address"`
	Edit    Edit   `json:"edit"`
	Object  Object `json:"object"`
	Move    Tamper `json:"move"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Load reads and validates <root>/<name>/estate.yaml; root is the folder of
// estates (this repository's estates/).
func Load(root, name string) (*Spec, error) {
	dir := filepath.Join(root, name)
	file := filepath.Join(dir, "estate.yaml")
	raw, err := os.ReadFile(file)
	if err != nil {
		if os.IsNotExist(err) {
			have, _ := List(root)
			return nil, fmt.Errorf("no estate %q in %s (estates: %s)", name, root, strings.Join(have, ", "))
		}
		return nil, err
	}
	s, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("estate %s (%s): %w", name, file, err)
	}
	if s.Name != name {
		return nil, fmt.Errorf("estate %s (%s): name: the estate names itself %q", name, file, s.Name)
	}
	s.Dir = dir
	for _, r := range s.RootSpecs() {
		for _, f := range r.Files {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
				return nil, fmt.Errorf("estate %s (%s): root %s: files: %s: %w", name, file, r.Name, f, err)
			}
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
	if err := checkAPIVersion(raw); err != nil {
		return nil, err
	}
	var s Spec
	if err := yaml.UnmarshalStrict(raw, &s); err != nil {
		return nil, err
	}
	s.defaults()
	return &s, s.validate()
}

// checkAPIVersion refuses a spec that does not name APIVersion. It reads
// apiVersion alone, before the strict parse, so a file of another format
// (whose fields this gauntlet does not know) is refused for its version,
// not for its first unknown field.
func checkAPIVersion(raw []byte) error {
	var head struct {
		APIVersion any `json:"apiVersion"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return err
	}
	switch head.APIVersion {
	case APIVersion:
		return nil
	case nil:
		return fmt.Errorf("apiVersion is missing: add `apiVersion: %s` as the first line", APIVersion)
	default:
		return fmt.Errorf("apiVersion %q: this gauntlet reads %s only: add `apiVersion: %s` as the first line (and write the rest in that format, docs/estate-yaml.md)", fmt.Sprint(head.APIVersion), APIVersion, APIVersion)
	}
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
	case len(s.Roots) == 0 && (s.Source == nil) == (len(s.Files) == 0):
		return fmt.Errorf("exactly one of source (a corpus file) and files (written here) is required")
	case len(s.Roots) > 0 && (s.Source != nil || len(s.Files) > 0):
		return fmt.Errorf("roots replace source and files: give one or the other")
	case !nameRE.MatchString(s.Namespace) || !nameRE.MatchString(s.Prefix):
		return fmt.Errorf("namespace %q and prefix %q (for the stage additions): lowercase letters, digits and dashes", s.Namespace, s.Prefix)
	}
	for _, id := range slices.Sorted(maps.Keys(s.Findings)) {
		if _, ok := s.Skip[id]; ok {
			return fmt.Errorf("stage %s is both skipped and a finding: a finding is a stage that runs and fails", id)
		}
		if err := s.Findings[id].validate(id); err != nil {
			return err
		}
	}
	written := map[string]bool{"drift_reconverge": s.Drift != nil, "day2_rename": s.Rename != nil,
		"day2_remove": s.Remove != nil, "plan_approval": s.PlanApproval != nil}
	for id := range s.NotDerived {
		_, skipped := s.Skip[id]
		_, finding := s.Findings[id]
		switch {
		case skipped || finding:
			return fmt.Errorf("not_derived: stage %s is also skipped or a finding: list it in one place", id)
		case written[id]:
			return fmt.Errorf("not_derived: stage %s has its plan written here, so nothing is derived for it: remove the entry", id)
		}
	}
	names := map[string]bool{}
	for _, r := range s.RootSpecs() {
		if !nameRE.MatchString(r.Name) || names[r.Name] {
			return fmt.Errorf("root %q: a unique name of lowercase letters, digits and dashes is required", r.Name)
		}
		names[r.Name] = true
		if len(s.Roots) > 0 && (r.Source == nil) == (len(r.Files) == 0) {
			return fmt.Errorf("root %s: exactly one of source and files is required", r.Name)
		}
		if r.Source != nil {
			if err := r.Source.validate(); err != nil {
				return fmt.Errorf("root %s: %w", r.Name, err)
			}
		}
		for _, f := range r.Files {
			if !filepath.IsLocal(filepath.FromSlash(f)) {
				return fmt.Errorf("root %s: files: %s: a path inside estate.yaml's folder is required (the first file's folder is the root's; a module it calls keeps its path from there)", r.Name, f)
			}
		}
	}
	if n := s.StageRoot(); n != "" {
		if !names[n] {
			return fmt.Errorf("stage sections name root %q, which the estate does not have", n)
		}
		for _, o := range s.stageRoots() {
			if o != "" && o != n {
				return fmt.Errorf("stage sections name roots %q and %q: the stages act on one root per run", n, o)
			}
		}
	}
	if s.Fence != nil {
		if err := s.Fence.validate(names, s.ActedRoot(s.Fence.Root)); err != nil {
			return err
		}
	}
	if err := s.Handoff.check(names); err != nil {
		return err
	}
	for _, k := range s.Kinds {
		if k.Version == "" || k.Kind == "" {
			return fmt.Errorf("kinds: %+v needs a version and a kind (or drop the list: the run derives it)", k)
		}
	}
	if s.PlanApproval != nil && s.PlanApproval.Edit.HCL != nil {
		// The stage flips the label its edit writes as text for the BREAK.
		return fmt.Errorf("plan_approval: edit: takes old and new (a text edit that writes a reviewed label); drop the section to derive one")
	}
	for _, d := range s.Deltas {
		if d.Name == "" || d.Why == "" {
			return fmt.Errorf("delta %q: name and why are required", d.Name)
		}
		if err := d.Edit.validate(); err != nil {
			return fmt.Errorf("delta %q: %w", d.Name, err)
		}
		if d.Root != "" && !names[d.Root] {
			return fmt.Errorf("delta %q: no root %q", d.Name, d.Root)
		}
	}
	for _, rp := range s.RelaxProviders {
		if rp.Provider == "" || rp.Constraint == "" || rp.Why == "" {
			return fmt.Errorf("relax_providers %q: provider, constraint and why are required", rp.Provider)
		}
		if _, err := version.NewConstraint(rp.Constraint); err != nil {
			return fmt.Errorf("relax_providers %s: constraint %q: %w", rp.Provider, rp.Constraint, err)
		}
		if rp.Root != "" && !names[rp.Root] {
			return fmt.Errorf("relax_providers %s: no root %q", rp.Provider, rp.Root)
		}
	}
	if todo := s.todoVariables(); len(todo) > 0 {
		return fmt.Errorf("variables %s are TODO (left by gauntlet estate new: the root requires them and has no default): give each a value", strings.Join(todo, ", "))
	}
	for _, n := range s.Sensitive {
		if _, ok := s.Variables[n]; ok {
			continue
		}
		found := false
		for _, r := range s.Roots {
			_, found = r.Variables[n]
			if found {
				break
			}
		}
		if !found {
			return fmt.Errorf("sensitive: %q is not among the variables", n)
		}
	}
	return nil
}

// todoVariables are the variables still set to the TODO marker estate new
// writes for a required variable, in order.
func (s *Spec) todoVariables() []string {
	var out []string
	add := func(vars map[string]any, prefix string) {
		for k, v := range vars {
			if v == todoMarker {
				out = append(out, prefix+k)
			}
		}
	}
	add(s.Variables, "")
	for _, r := range s.Roots {
		add(r.Variables, r.Name+".")
	}
	sort.Strings(out)
	return out
}

// todoMarker is what gauntlet estate new writes where only the user knows
// the value.
const todoMarker = "TODO"

func (src *Source) validate() error {
	if src.Repository == "TODO" || src.Commit == "TODO" {
		return fmt.Errorf("source: repository and commit are TODO (left by gauntlet estate new): set the repository the files come from and the full commit they are pinned at")
	}
	if src.Repository == "" || !commitRE.MatchString(src.Commit) {
		return fmt.Errorf("source: repository and a full 40-hex commit are required (quote the commit in YAML)")
	}
	if (src.Path == "") == (len(src.Files) == 0) {
		return fmt.Errorf("source: exactly one of path (a single file) and files (a list under dir) is required")
	}
	if src.Path != "" && !sha256RE.MatchString(src.SHA256) {
		return fmt.Errorf("source: sha256 %q is not 64 lowercase hex digits", src.SHA256)
	}
	// The import reads the file at <commit>/<path> of a folder and caches
	// it under the same: a path that climbs would read and write outside.
	if src.Path != "" && (path.IsAbs(src.Path) || path.Clean(src.Path) != src.Path || src.Path == ".." || strings.HasPrefix(src.Path, "../")) {
		return fmt.Errorf("source: path %q: a clean path inside the repository is required", src.Path)
	}
	seen := map[string]bool{}
	for _, f := range src.Files {
		if f.Path == "" || !sha256RE.MatchString(f.SHA256) {
			return fmt.Errorf("source file %q: a path and a sha256 of 64 lowercase hex digits are required", f.Path)
		}
		for _, p := range []string{f.As, src.Dir} {
			if path.IsAbs(p) || strings.Contains(p, "..") {
				return fmt.Errorf("source file %q: dir and as stay inside the repository and the root", f.Path)
			}
		}
		// A path may climb out of dir (a module the root calls from
		// "../../"), never out of the repository.
		up, rest := slashpath.Climb(f.Path)
		if path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || strings.Contains(rest, "..") || up > strings.Count(src.Dir, "/")+1 || (up > 0 && src.Dir == "") {
			return fmt.Errorf("source file %q: paths stay inside the repository (they may climb out of dir, %q)", f.Path, src.Dir)
		}
	}
	for _, p := range src.Pinned() {
		if seen[p.RootPath] {
			return fmt.Errorf("source: two files land at %s in the root", p.RootPath)
		}
		seen[p.RootPath] = true
	}
	return nil
}
