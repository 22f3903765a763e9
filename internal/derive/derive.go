// Package derive chooses, from an estate's root and its cold-deployed
// objects, what the drift, rename, remove and plan-approval stages do when
// estate.yaml does not say: a drift target and a field the configuration
// sets literally, a resource to rename (every reference following), a leaf
// resource to remove with a neighbour that must stay untouched, and an
// object to add a label to. Each choice is a plan the stage can check; when
// no candidate fits, the reason says why and the stage does not run.
package derive

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object is one of the estate's live objects, known by its address.
type Object struct {
	Address string
	Type    string
	Ref     estate.Object
}

// Input is what a derivation reads.
type Input struct {
	// Dir is the root (its own .tf files; gauntlet_*.tf are ignored).
	Dir string
	// Objects are the cold-deployed objects; Live their live copies by
	// address (an object missing from Live is not a candidate).
	Objects []Object
	Live    map[string]*unstructured.Unstructured
	// Exclude are addresses hand-written stage sections act on.
	Exclude []string
}

// Plans are the derived stage plans; a nil plan has its reason in Why.
type Plans struct {
	Drift        *estate.Drift
	Rename       *estate.Rename
	Remove       *estate.Remove
	PlanApproval *estate.PlanApproval
	// DriftCandidates are every object the drift could tamper, best
	// first; Drift takes the first two. A run tries them on stock and
	// takes the first two stock sees (a drift no engine detects proves
	// nothing about the engine).
	DriftCandidates []DriftCandidate
	// Why says, per stage ID, why the choice was made or why none was.
	Why map[string]string
}

// Suffixes the plans use.
const (
	RenameSuffix   = "_renamed"
	IdentitySuffix = "-renamed"
	ReviewedLabel  = "reviewed"
)

// block is one resource block as the analysis sees it: the root's, or a
// local module's (its address then carries the module path, no keys).
type block struct {
	address string
	module  string // "module.a.module.b", "" at the root
	dir     string // the folder whose files hold it, relative to the root
	// calls is how many module call paths reach dir (1 at the root): an
	// edit to the block acts in every one.
	calls int
	// callCounted: a module call on its path has count or for_each.
	callCounted bool
	typ         string
	counted     bool // count or for_each
	// absent: count is 0 or for_each empty with the variables' defaults
	// (the configuration makes no object of it unless a value says so).
	absent bool
	// count is a count written as a literal number (-1 otherwise); keys a
	// for_each collection's keys written as a literal (an object or
	// toset of strings), in the block or in a local (keysFrom).
	count int
	// byDefault is the count the variables' defaults give (-1 when they
	// give none): the preview's guess, never an edit's.
	byDefault int
	keys      []string
	keysFrom  string
	labels    map[string]string // literal metadata labels
	// annotations and data (a ConfigMap's) the configuration sets
	// literally: drift candidates when no label is one.
	annotations, data map[string]string
	named             bool // sets metadata name (typed block or manifest)
	// labelable: a label can be added with the HCL writer (a typed
	// metadata block, or a manifest written out as an object).
	labelable bool
	// mergeable: its labels are an expression (var.labels, a local,
	// merge(...)) the HCL writer merges a label into.
	mergeable bool
	refs      int // references to it from other blocks of its module
	// outRefs are the references among refs from output blocks;
	// outEdits, when every output reading it can read it as a count of 0
	// would give it and nothing but outputs reads those (outputs.go), the
	// edits that make them, and outNames those outputs.
	outRefs  int
	outEdits []estate.Edit
	outNames []string
	file     string // the file that holds it (relative to the root after analyse)
	// Literal identity, where the configuration writes it out (for a
	// preview before anything is applied).
	apiVersion, kind, name, namespace string
}

// Derive chooses every plan.
func Derive(in Input) (*Plans, error) {
	blocks, err := analyse(in.Dir)
	if err != nil {
		return nil, err
	}
	p := &Plans{Why: map[string]string{}}
	excluded := map[string]bool{}
	for _, a := range in.Exclude {
		excluded[a] = true
		excluded[estate.BlockOf(a)] = true
	}
	// An object whose resource version another copies is no candidate:
	// any touch of it, even one put back, moves what the configuration
	// reads, and the next plan updates its reader.
	var all []*unstructured.Unstructured
	for _, u := range in.Live {
		all = append(all, u)
	}
	refd := inventory.VersionReferenced(all)
	live := map[string]*unstructured.Unstructured{}
	for a, u := range in.Live {
		if !refd[inventory.RefOf(u)] {
			live[a] = u
		}
	}
	in.Live = live
	byAddr := map[string]Object{}
	for _, o := range in.Objects {
		byAddr[o.Address] = o
	}
	// Candidates: every live object whose block the analysis read - a
	// single root resource, an instance of a count or for_each block, a
	// resource inside a local module.
	byBlock := map[string]block{}
	for _, b := range blocks {
		byBlock[b.address] = b
	}
	var cands []cand
	for _, o := range in.Objects {
		a, err := estate.ParseAddress(o.Address)
		if err != nil || in.Live[o.Address] == nil || !plainAddress(a) {
			continue
		}
		b, ok := byBlock[a.Block()]
		// A counted block's object has a key (the preview lists a block
		// whose instances it cannot tell as one object, with none).
		callKeyed := false
		for _, c := range a.Calls {
			callKeyed = callKeyed || c.Key.Set
		}
		if !ok || b.counted != a.Key.Set || b.callCounted != callKeyed {
			continue
		}
		cands = append(cands, cand{b: b, o: o, u: in.Live[o.Address], a: a})
	}
	// Single root resources first (their edits are the plainest, and an
	// estate derived before instances and modules were candidates keeps
	// its plans), then the most stable kinds.
	sort.SliceStable(cands, func(i, j int) bool {
		ti, tj := cands[i].tier(), cands[j].tier()
		if ti != tj {
			return ti < tj
		}
		ri, rj := rank(cands[i].o.Ref.Kind), rank(cands[j].o.Ref.Kind)
		if ri != rj {
			return ri < rj
		}
		return cands[i].o.Address < cands[j].o.Address
	})
	p.drift(cands)
	p.rename(cands, in.Objects, excluded)
	p.remove(cands, in.Objects, in.Live, excluded)
	p.approval(cands, in.Objects, in.Live, excluded)
	return p, nil
}

type cand struct {
	b block
	o Object
	u *unstructured.Unstructured
	a estate.Address
}

// single is a root resource block of one object.
func (c cand) single() bool { return c.b.module == "" && !c.b.counted }

func (c cand) tier() int {
	if c.single() {
		return 0
	}
	return 1
}

// shape says what kind of candidate the object is, for Why.
func (c cand) shape() string {
	var parts []string
	switch {
	case c.a.Key.Set && c.a.Key.Int:
		parts = append(parts, fmt.Sprintf("index %d of a count block", c.a.Key.Index))
	case c.a.Key.Set:
		parts = append(parts, fmt.Sprintf("key %q of a for_each block", c.a.Key.String))
	}
	if c.b.module != "" {
		parts = append(parts, fmt.Sprintf("in local module %s (%s)", c.b.module, c.b.dir))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// plainKey is an instance key every engine's output prints the same way
// and the apply's progress lines do not split: no spaces, no escapes.
var plainKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)

func plainAddress(a estate.Address) bool {
	ok := func(k estate.Key) bool { return !k.Set || k.Int || plainKeyRE.MatchString(k.String) }
	for _, c := range a.Calls {
		if !ok(c.Key) {
			return false
		}
	}
	return ok(a.Key)
}

// stable are kinds no controller writes to after creation, best first: a
// neighbour's resourceVersion moves only if the estate moves it, and an
// edit to them waits on nothing.
var stable = []string{"ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
	"Service", "LimitRange", "PriorityClass", "NetworkPolicy", "IngressClass", "StorageClass",
	"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

func rank(kind string) int {
	for i, k := range stable {
		if k == kind {
			return i
		}
	}
	return len(stable)
}

func isStable(kind string) bool { return rank(kind) < len(stable) }

// cascading are kinds whose deletion takes other objects with it.
var cascading = map[string]bool{"Namespace": true, "CustomResourceDefinition": true}

// literalField is a field a block sets literally, where the drift can
// tamper: a label, an annotation, or a ConfigMap's data entry.
type literalField struct {
	what, key, value string // what: "label", "annotation" or "data"
}

func (f literalField) pointer() string {
	switch f.what {
	case "label":
		return "/metadata/labels/" + escapePointer(f.key)
	case "annotation":
		return "/metadata/annotations/" + escapePointer(f.key)
	}
	return "/data/" + escapePointer(f.key)
}

func (f literalField) path() string {
	switch f.what {
	case "label":
		return LabelField(f.key)
	case "annotation":
		return mapField("metadata.annotations", f.key)
	}
	return mapField("data", f.key)
}

// driftable is the first field c's block sets literally that its live
// object carries, labels first, then annotations, then data; a value
// of many lines or past 100 characters is passed over (the page prints
// it).
func driftable(c cand) (literalField, bool) {
	data, _, _ := unstructured.NestedStringMap(c.u.Object, "data")
	for _, m := range []struct {
		what      string
		want, got map[string]string
	}{
		{"label", c.b.labels, c.u.GetLabels()},
		{"annotation", c.b.annotations, c.u.GetAnnotations()},
		{"data", c.b.data, data},
	} {
		for _, k := range slices.Sorted(maps.Keys(m.want)) {
			v := m.want[k]
			if g, ok := m.got[k]; ok && g == v && len(v) <= 100 && !strings.Contains(v, "\n") {
				return literalField{m.what, k, v}, true
			}
		}
	}
	return literalField{}, false
}

// DriftCandidate is one object the drift could tamper, with the field.
type DriftCandidate struct {
	Address string
	Object  estate.Object
	shape   string
	f       literalField
}

// String names the candidate's field and object.
func (c DriftCandidate) String() string {
	return fmt.Sprintf("%s %s of %s (%s%s)", c.f.what, c.f.key, c.Object, c.Address, c.shape)
}

// Tamper is the JSON patch that replaces the field, and Untamper the one
// that puts it back.
func (c DriftCandidate) Tamper() string {
	patch, _ := json.Marshal([]map[string]string{
		{"op": "test", "path": c.f.pointer(), "value": c.f.value},
		{"op": "replace", "path": c.f.pointer(), "value": tampered(c.f.value)},
	})
	return string(patch)
}

// Untamper puts the field's literal value back.
func (c DriftCandidate) Untamper() string {
	patch, _ := json.Marshal([]map[string]string{{"op": "replace", "path": c.f.pointer(), "value": c.f.value}})
	return string(patch)
}

// DriftOf is the drift plan that tampers first and, for its BREAK,
// second, with the sentence that says so.
func DriftOf(first, second DriftCandidate) (*estate.Drift, string) {
	breakPatch, _ := json.Marshal([]map[string]string{
		{"op": "replace", "path": second.f.pointer(), "value": tampered(second.f.value)},
	})
	d := &estate.Drift{
		Address: first.Address, Object: first.Object, Patch: first.Tamper(),
		Field: first.f.path(), Want: first.f.value,
		Break: estate.Tamper{Object: second.Object, Patch: string(breakPatch)},
	}
	why := fmt.Sprintf("%s%s's configuration sets %s %s = %q literally: the drift replaces it out of band on that one object and the apply must set it back; the BREAK tampers %s %s of %s (%s%s) too",
		first.Address, first.shape, first.f.what, first.f.key, first.f.value, second.f.what, second.f.key, second.Object, second.Address, second.shape)
	return d, why
}

func (p *Plans) drift(cands []cand) {
	for _, c := range cands {
		if f, ok := driftable(c); ok {
			p.DriftCandidates = append(p.DriftCandidates, DriftCandidate{Address: c.o.Address, Object: c.o.Ref, shape: c.shape(), f: f})
		}
	}
	if len(p.DriftCandidates) < 2 {
		p.Why["drift_reconverge"] = fmt.Sprintf("no drift derived: it needs two live objects - single root resources, instances of count or for_each blocks, or resources in local modules - whose block sets a metadata label, an annotation or a ConfigMap's data entry literally that the live object carries (one to drift, one for the BREAK's second tamper); the root has %d", len(p.DriftCandidates))
		return
	}
	p.Drift, p.Why["drift_reconverge"] = DriftOf(p.DriftCandidates[0], p.DriftCandidates[1])
}

func tampered(v string) string {
	if v == "" {
		return "tampered"
	}
	t := v + "-tampered"
	if len(t) > 63 {
		t = "tampered"
	}
	return t
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// mapField is the field path of a map's key: prefix.key, or
// prefix["key"] when the key is not plain.
func mapField(prefix, key string) string {
	if plainKey.MatchString(key) {
		return prefix + "." + key
	}
	return prefix + `["` + key + `"]`
}

// LabelField is the field path of a label, as the drift stage reads it:
// metadata.labels.app, or metadata.labels["app.kubernetes.io/name"].
func LabelField(key string) string { return mapField("metadata.labels", key) }

func (p *Plans) rename(cands []cand, objs []Object, excluded map[string]bool) {
	// A single root resource first (the plainest edit, and what estates
	// derived before keep); else one in a block renaming touches nothing
	// else.
	var best *cand
	for _, single := range []bool{true, false} {
		for i, c := range cands {
			if c.single() != single || excluded[c.b.address] || !c.b.named || !renamable(c, objs) {
				continue
			}
			if best == nil || c.b.refs > best.b.refs {
				best = &cands[i]
			}
		}
		if best != nil {
			break
		}
	}
	if best == nil {
		p.Why["day2_rename"] = "no rename derived: no live resource that sets its metadata name is a single root resource, or the one instance of a block in the root or in a local module one uncounted call reaches"
		return
	}
	// The moved block names the instance; the block keeps its key.
	from := best.o.Address
	to := best.b.address + RenameSuffix + strings.TrimPrefix(from, best.b.address)
	p.Rename = &estate.Rename{From: from, To: to}
	p.Why["day2_rename"] = fmt.Sprintf("%s is renamed %s with a moved block and its %d reference(s) rewritten by the HCL writer; the BREAK appends %q to %s's metadata name instead, a real identity change",
		from, to, best.b.refs, IdentitySuffix, best.o.Ref)
}

// renamable: renaming the block moves this object and no other. A block
// in a module folder edits every call of it, so one uncounted call path
// must reach the folder; a counted block must have this one instance
// (index 0, which a moved block names the same way on every engine).
// References to a block are in its own folder's files, which the HCL
// writer rewrites.
func renamable(c cand, objs []Object) bool {
	if c.single() {
		return true
	}
	if c.b.calls != 1 || c.b.callCounted || !strings.HasPrefix(c.o.Address, c.b.address) {
		return false
	}
	if c.a.Key.Set && (!c.a.Key.Int || c.a.Key.Index != 0) {
		return false
	}
	for _, o := range objs {
		if o.Address != c.o.Address && estate.BlockOf(o.Address) == c.b.address {
			return false
		}
	}
	return true
}

func (p *Plans) remove(cands []cand, objs []Object, live map[string]*unstructured.Unstructured, excluded map[string]bool) {
	// A leaf first, as before outputs' readers and single instances were
	// candidates: an estate derived then keeps its plan.
	rm := p.removal(cands, objs, excluded, false)
	if rm.c == nil {
		rm = p.removal(cands, objs, excluded, true)
	}
	target := rm.c
	if target == nil {
		p.Why["day2_remove"] = "no removal derived: no live leaf (a block no other block references but outputs nothing else reads, not renamed, not a kind whose deletion takes others with it: Namespace, CustomResourceDefinition) whose removal the HCL writer can make alone - a single root resource, a block in a local module called once, a counted block with one instance, the last index of a literal count, or a key of a for_each collection written as a literal in the block or in a local only it reads"
		return
	}
	nb, ok := neighbour(objs, live, target.o.Ref, p.Rename)
	if !ok {
		p.Why["day2_remove"] = fmt.Sprintf("no removal derived: %s is a leaf, but no other object is of a kind whose resourceVersion only the estate moves (%s)", target.o.Address, strings.Join(stable, ", "))
		return
	}
	p.Remove = &estate.Remove{Address: target.o.Address, Object: target.o.Ref, Neighbour: nb.Ref}
	leaf := "no other block references it"
	if rm.whole {
		// Located by file and block: the address has a key, and the
		// edits to the outputs go with the block.
		p.Remove.File, p.Remove.Block = target.b.file, strings.TrimPrefix(target.b.address, prefixOf(target.b.module))
		p.Remove.Edits = rm.edits
		if len(rm.edits) > 0 {
			leaf = fmt.Sprintf("only outputs read it (%s), nothing but outputs reads them up to the root, and each reads it through a splat, which becomes [] as a count of 0 would give it", strings.Join(target.b.outNames, ", "))
		}
	}
	p.Why["day2_remove"] = fmt.Sprintf("%s%s is a leaf - %s - so %s leaves the rest plannable; %s must keep its uid and resourceVersion",
		target.o.Address, target.shape(), leaf, rm.how, nb.Ref)
}

// removal is a derived removal's target, how the HCL writer takes it out,
// and, when whole, the block to delete by file and name with edits.
type removal struct {
	c     *cand
	how   string
	whole bool
	edits []estate.Edit
}

// removal picks the first candidate the HCL writer can take out alone;
// wider also takes a block only outputs read (outEdits) and a counted
// block's one instance (its whole block).
func (p *Plans) removal(cands []cand, objs []Object, excluded map[string]bool, wider bool) removal {
	for i, c := range cands {
		if excluded[c.o.Address] || excluded[c.b.address] || cascading[c.o.Ref.Kind] ||
			(p.Rename != nil && estate.BlockOf(p.Rename.From) == c.b.address) {
			continue
		}
		if c.b.refs > 0 && (!wider || c.b.outEdits == nil) {
			continue
		}
		if h, ok := removable(c, objs); ok && (!wider || !c.a.Key.Set) {
			return removal{c: &cands[i], how: h, whole: wider, edits: c.b.outEdits}
		}
		if h, ok := oneInstance(c, objs); ok && wider {
			return removal{c: &cands[i], how: h, whole: true, edits: c.b.outEdits}
		}
	}
	return removal{}
}

// oneInstance says how the HCL writer takes out a counted block whose
// state holds one instance: its whole block goes.
func oneInstance(c cand, objs []Object) (string, bool) {
	if !c.b.counted || c.b.callCounted || c.b.calls != 1 {
		return "", false
	}
	n := 0
	for _, o := range objs {
		if estate.BlockOf(o.Address) == c.b.address {
			n++
		}
	}
	if n != 1 {
		return "", false
	}
	if c.b.module == "" {
		return "deleting its block, its one instance", true
	}
	return fmt.Sprintf("deleting its block from %s, its one instance (the module is called once)", c.b.dir), true
}

// removable says how the HCL writer takes c's object out and nothing else,
// if it can: its whole block when the block makes only it, else one
// instance out of a count or for_each the configuration writes literally.
func removable(c cand, objs []Object) (string, bool) {
	if c.single() {
		return "its removal", true
	}
	if c.b.callCounted || c.b.calls != 1 {
		return "", false // the module's block is every call's
	}
	if !c.b.counted {
		return fmt.Sprintf("deleting its block from %s (the module is called once)", c.b.dir), true
	}
	// The instances the state has must be exactly what the literal says,
	// else the literal is not what was applied.
	var ints []int
	var keys []string
	for _, o := range objs {
		if a, err := estate.ParseAddress(o.Address); err == nil && a.Block() == c.b.address {
			if a.Key.Int {
				ints = append(ints, a.Key.Index)
			} else {
				keys = append(keys, a.Key.String)
			}
		}
	}
	switch {
	case c.a.Key.Int && c.b.count > 0:
		if len(keys) > 0 || len(ints) != c.b.count || c.a.Key.Index != c.b.count-1 {
			return "", false
		}
		return fmt.Sprintf("lowering its literal count from %d to %d (the last index goes)", c.b.count, c.b.count-1), true
	case !c.a.Key.Int && c.b.keys != nil:
		if len(ints) > 0 || !sameSet(keys, c.b.keys) {
			return "", false
		}
		return fmt.Sprintf("dropping key %q from %s", c.a.Key.String, c.b.keysFrom), true
	}
	return "", false
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// neighbour picks another object of a stable kind, the same namespace first.
func neighbour(objs []Object, live map[string]*unstructured.Unstructured, of estate.Object, rn *estate.Rename) (Object, bool) {
	var best Object
	found := false
	score := func(o Object) int {
		s := rank(o.Ref.Kind)
		if o.Ref.Namespace != of.Namespace {
			s += 100
		}
		return s
	}
	for _, o := range objs {
		u := live[o.Address]
		if o.Ref == of || !isStable(o.Ref.Kind) || u == nil || (rn != nil && o.Address == rn.From) {
			continue
		}
		if _, agg := u.Object["aggregationRule"]; agg {
			continue // the aggregation controller rewrites its rules
		}
		if !found || score(o) < score(best) {
			best, found = o, true
		}
	}
	return best, found
}

func (p *Plans) approval(cands []cand, objs []Object, live map[string]*unstructured.Unstructured, excluded map[string]bool) {
	// The label edit is the block's: every instance of it changes, so a
	// block the rename acts on is left alone. The removed object is gone
	// by then (the remove stage runs first and drops it from the estate's
	// objects, which the stage's expected updates are read from); another
	// instance of its block may take the label.
	skip := func(c cand) bool {
		blk := c.b.address
		return excluded[c.o.Address] || excluded[blk] || (p.Rename != nil && estate.BlockOf(p.Rename.From) == blk) ||
			(p.Remove != nil && p.Remove.Address == c.o.Address)
	}
	// Labels written out first (what estates derived before keep), then
	// labels an expression gives, the label merged into it.
	var target *cand
	for _, merge := range []bool{false, true} {
		for i, c := range cands {
			// A module folder two calls reach would take the label in both.
			if skip(c) || c.b.calls != 1 || (!merge && !c.b.labelable) || (merge && !c.b.mergeable) {
				continue
			}
			if _, has := c.b.labels[ReviewedLabel]; has {
				continue
			}
			target = &cands[i]
			break
		}
		if target != nil {
			break
		}
	}
	if target == nil {
		p.Why["plan_approval"] = "no plan-approval edit derived: no live object (not the removed one) - single root resource, instance of a count or for_each block, or resource in a local module called once - whose block (not renamed) has metadata a label can be added to with the HCL writer, or labels written as an expression it can merge one into"
		return
	}
	blk := target.b.address
	var updated []string
	var move *Object
	for i, o := range objs {
		u := live[o.Address]
		// Only the removed object is gone; a renamed one is still there.
		if p.Remove != nil && o.Address == p.Remove.Address {
			continue
		}
		if estate.BlockOf(o.Address) == blk {
			updated = append(updated, o.Address)
			continue // the saved plan updates it
		}
		if u == nil || len(u.GetLabels()) == 0 {
			continue
		}
		if _, has := u.GetLabels()["stray"]; has {
			continue
		}
		if move == nil || rank(o.Ref.Kind) < rank(move.Ref.Kind) {
			move = &objs[i]
		}
	}
	if move == nil {
		p.Why["plan_approval"] = fmt.Sprintf("no plan-approval edit derived: %s can take the label, but no other live object has labels for the out-of-band move (a JSON patch adding label stray)", target.o.Address)
		return
	}
	p.PlanApproval = &estate.PlanApproval{Address: target.o.Address, Object: target.o.Ref,
		Move: estate.Tamper{Object: move.Ref, Patch: `[{"op":"add","path":"/metadata/labels/stray","value":"yes"}]`}}
	what := fmt.Sprintf("%s (one update, saved as a plan)", target.o.Address)
	if !target.single() {
		where := "its block"
		if target.b.module != "" {
			where = fmt.Sprintf("its block %s in %s (the module is called once)", blk, target.b.dir)
		}
		what = fmt.Sprintf("%s%s - the edit is %s's, so the saved plan holds one update per instance of it: %d (%s)",
			target.o.Address, target.shape(), where, len(updated), strings.Join(updated, ", "))
	}
	how := fmt.Sprintf("adds label %s = \"yes\" to", ReviewedLabel)
	if target.b.mergeable {
		how = fmt.Sprintf("merges label %s = \"yes\" (merge() around the expression its labels are written as) into", ReviewedLabel)
	}
	p.Why["plan_approval"] = fmt.Sprintf("the HCL writer %s %s; the world then moves out of band: label stray=yes on %s",
		how, what, move.Ref)
}

// maxDepth bounds how deep module calls are followed (a module that
// calls itself through a relative source would never end).
const maxDepth = 16

// analyse reads the root's resource blocks, and those of every local
// module it calls (sources such as "./modules/x", followed from the
// calling folder, recursively), with the references between the blocks
// of each module.
func analyse(dir string) ([]block, error) {
	var blocks []block
	calls := map[string]int{}
	mods := map[string]*modInst{}
	rootDir := dir
	rel := func(p string) string {
		if r, err := filepath.Rel(rootDir, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	var walk func(module, dir string, args map[string]hclsyntax.Expression, callCounted, callAbsent bool, depth int) error
	walk = func(module, dir string, args map[string]hclsyntax.Expression, callCounted, callAbsent bool, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("derive: module calls nest deeper than %d at %s", maxDepth, module)
		}
		calls[filepath.Clean(dir)]++
		m, err := readModule(dir, args)
		if err != nil {
			return err
		}
		if mods[module] == nil {
			mods[module] = &modInst{} // the root
		}
		mods[module].m = m
		prefix := prefixOf(module)
		start := len(blocks)
		for i := range m.blocks {
			b := m.blocks[i]
			b.address = prefix + b.address
			b.module, b.dir, b.callCounted = module, filepath.Clean(dir), callCounted
			b.absent = b.absent || callAbsent
			blocks = append(blocks, b)
		}
		outputReaders(mods, module, blocks[start:], rel)
		for _, c := range m.calls {
			child := prefix + "module." + c.name
			mods[child] = &modInst{parent: module, call: c.name}
			if err := walk(child, filepath.Join(dir, filepath.FromSlash(c.source)), c.args, callCounted || c.counted, callAbsent || c.absent, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", dir, nil, false, false, 0); err != nil {
		return nil, err
	}
	for i := range blocks {
		blocks[i].calls = calls[blocks[i].dir]
		// Said relative to the root: a run's folder is a temporary one.
		blocks[i].dir, blocks[i].file = rel(blocks[i].dir), rel(blocks[i].file)
	}
	return blocks, nil
}

// moduleCall is a module block with a local source.
type moduleCall struct {
	name, source    string
	counted, absent bool
	// args are the call's input variables, as written.
	args map[string]hclsyntax.Expression
}

// metaArgs are a module block's arguments that are not input variables.
var metaArgs = map[string]bool{"source": true, "version": true, "count": true, "for_each": true, "depends_on": true, "providers": true}

// module is one folder's resource blocks and local module calls.
type module struct {
	blocks []block
	calls  []moduleCall
	// outputs are its output blocks by name; uses the module outputs
	// ("call.name", "call.*") anything but an output reads.
	outputs map[string]*output
	uses    map[string]bool
}

// readModule reads one module folder's .tf files (gauntlet_*.tf aside),
// called with args (nil at the root).
func readModule(dir string, args map[string]hclsyntax.Expression) (*module, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	out := &module{outputs: map[string]*output{}, uses: map[string]bool{}}
	refs, outRefs := map[string]int{}, map[string]int{}
	var bodies []*hclsyntax.Body
	var raw []*hclsyntax.Block // each resource block, as blocks lists them
	var rawPaths []string
	var mods []*hclsyntax.Block
	for _, path := range paths {
		if strings.HasPrefix(filepath.Base(path), "gauntlet_") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, diags := hclsyntax.ParseConfig(src, filepath.Base(path), hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("derive: %s", diags.Error())
		}
		body := f.Body.(*hclsyntax.Body)
		bodies = append(bodies, body)
		for _, b := range body.Blocks {
			self := ""
			switch {
			case b.Type == "resource" && len(b.Labels) == 2:
				self = b.Labels[0] + "." + b.Labels[1]
				raw, rawPaths = append(raw, b), append(rawPaths, path)
			case b.Type == "module" && len(b.Labels) == 1:
				mods = append(mods, b)
			}
			isOutput := b.Type == "output" && len(b.Labels) == 1
			for addr, n := range referenced(b.Body) {
				if addr != self {
					refs[addr] += n
					if isOutput {
						outRefs[addr] += n
					}
				}
			}
			if v, ok := b.Body.Attributes["value"]; ok && isOutput {
				o := &output{path: path, src: src, expr: v.Expr, reads: map[string]bool{}}
				exprModuleReads(v.Expr, o.reads)
				out.outputs[b.Labels[0]] = o
			} else {
				moduleReads(b.Body, out.uses)
			}
		}
	}
	vars := inputs(bodies, args)
	for i, b := range raw {
		rb := resourceOf(b.Labels[0]+"."+b.Labels[1], b, vars)
		rb.file = rawPaths[i]
		out.blocks = append(out.blocks, rb)
	}
	ctx := defaults(bodies)
	locals := literalLocals(bodies)
	localRefs := map[string]int{}
	for _, body := range bodies {
		countLocals(body, localRefs)
	}
	for i := range out.blocks {
		b := &out.blocks[i]
		b.refs, b.outRefs = refs[b.address], outRefs[b.address]
		b.absent = absent(raw[i], ctx)
		b.byDefault = countOf(raw[i], ctx)
		b.count, b.keys, b.keysFrom = instances(raw[i], locals)
		// A local another expression reads too is not this block's alone:
		// dropping a key there would change the other reader.
		if name, ok := strings.CutPrefix(b.keysFrom, "local."); ok && localRefs[name] != 1 {
			b.keys, b.keysFrom = nil, ""
		}
	}
	for _, b := range mods {
		a, ok := b.Body.Attributes["source"]
		if !ok {
			continue
		}
		src := literal(a.Expr)
		if !estate.LocalSource(src) {
			continue // a registry or git module: its files are not here
		}
		_, c := b.Body.Attributes["count"]
		_, fe := b.Body.Attributes["for_each"]
		call := moduleCall{name: b.Labels[0], source: src, counted: c || fe, absent: absent(b, ctx), args: map[string]hclsyntax.Expression{}}
		for name, a := range b.Body.Attributes {
			if !metaArgs[name] {
				call.args[name] = a.Expr
			}
		}
		out.calls = append(out.calls, call)
	}
	return out, nil
}

// countLocals counts, per local name, the expressions of body (and its
// nested blocks) that read it.
func countLocals(body *hclsyntax.Body, n map[string]int) {
	for _, a := range body.Attributes {
		for _, t := range a.Expr.Variables() {
			if t.RootName() != "local" || len(t) < 2 {
				continue
			}
			if at, ok := t[1].(hcl.TraverseAttr); ok {
				n[at.Name]++
			}
		}
	}
	for _, b := range body.Blocks {
		countLocals(b.Body, n)
	}
}

// literalLocals are a module's locals, by name, as written.
func literalLocals(bodies []*hclsyntax.Body) map[string]hclsyntax.Expression {
	out := map[string]hclsyntax.Expression{}
	for _, body := range bodies {
		for _, b := range body.Blocks {
			if b.Type != "locals" {
				continue
			}
			for name, a := range b.Body.Attributes {
				out[name] = a.Expr
			}
		}
	}
	return out
}

// instances reads how many instances a block's configuration writes out:
// a count that is a literal number (else -1), and the keys of a for_each
// collection written as a literal - an object constructor or toset of a
// list of strings, in the block or in a local (from says where). These are
// the shapes the HCL writer can take one instance out of.
func instances(b *hclsyntax.Block, locals map[string]hclsyntax.Expression) (count int, keys []string, from string) {
	count = -1
	if a, ok := b.Body.Attributes["count"]; ok && len(a.Expr.Variables()) == 0 {
		if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
			if n, acc := v.AsBigFloat().Int64(); acc == big.Exact && n > 0 {
				count = int(n)
			}
		}
	}
	a, ok := b.Body.Attributes["for_each"]
	if !ok {
		return count, nil, ""
	}
	e, from := a.Expr, "the block's for_each"
	if st, ok := e.(*hclsyntax.ScopeTraversalExpr); ok && len(st.Traversal) == 2 && st.Traversal.RootName() == "local" {
		at, ok := st.Traversal[1].(hcl.TraverseAttr)
		if !ok || locals[at.Name] == nil {
			return count, nil, ""
		}
		e, from = locals[at.Name], "local."+at.Name
	}
	switch x := e.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, it := range x.Items {
			// A bare key (high = ...) is a traversal only to Variables.
			k, diags := it.KeyExpr.Value(nil)
			if diags.HasErrors() || k.IsNull() || !k.IsKnown() || k.Type() != cty.String || k.AsString() == "" {
				return count, nil, ""
			}
			keys = append(keys, k.AsString())
		}
	case *hclsyntax.FunctionCallExpr:
		if x.Name != "toset" || len(x.Args) != 1 {
			return count, nil, ""
		}
		list, ok := x.Args[0].(*hclsyntax.TupleConsExpr)
		if !ok {
			return count, nil, ""
		}
		for _, el := range list.Exprs {
			k := literal(el)
			if k == "" {
				return count, nil, ""
			}
			keys = append(keys, k)
		}
	default:
		return count, nil, ""
	}
	return count, keys, from
}

// inputs are the module's variables as this call sets them: the caller's
// argument, else the variable's default, as written.
func inputs(bodies []*hclsyntax.Body, args map[string]hclsyntax.Expression) map[string]hclsyntax.Expression {
	out := map[string]hclsyntax.Expression{}
	eachDefault(bodies, func(name string, e hclsyntax.Expression) { out[name] = e })
	for name, e := range args {
		out[name] = e
	}
	return out
}

// viaVar is e, or what the call sets when e is just var.X: a label a
// module takes from its caller is as literal as the caller writes it
// (the call's own expressions are the caller's, so only a literal there
// counts).
func viaVar(e hclsyntax.Expression, vars map[string]hclsyntax.Expression) hclsyntax.Expression {
	st, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(st.Traversal) != 2 || st.Traversal.RootName() != "var" {
		return e
	}
	at, ok := st.Traversal[1].(hcl.TraverseAttr)
	if !ok || vars[at.Name] == nil {
		return e
	}
	return vars[at.Name]
}

// defaults are the literal defaults of the module's variables, as the
// var object an expression reads.
func defaults(seen []*hclsyntax.Body) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	eachDefault(seen, func(name string, e hclsyntax.Expression) {
		if v, diags := e.Value(nil); !diags.HasErrors() {
			vars[name] = v
		}
	})
	return &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}}
}

// eachDefault calls f with each variable of the module's files that has a
// default, and the default's expression.
func eachDefault(bodies []*hclsyntax.Body, f func(name string, e hclsyntax.Expression)) {
	for _, body := range bodies {
		for _, b := range body.Blocks {
			if b.Type != "variable" || len(b.Labels) != 1 {
				continue
			}
			if a, ok := b.Body.Attributes["default"]; ok {
				f(b.Labels[0], a.Expr)
			}
		}
	}
}

// absent reports whether a block's count is 0, or its for_each empty,
// with the variables' defaults.
func absent(b *hclsyntax.Block, ctx *hcl.EvalContext) bool {
	if _, ok := b.Body.Attributes["count"]; ok {
		return countOf(b, ctx) == 0
	}
	if a, ok := b.Body.Attributes["for_each"]; ok {
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || !v.CanIterateElements() {
			return false
		}
		return v.LengthInt() == 0
	}
	return false
}

// countOf is a block's count with the variables' defaults, -1 when it has
// none or they do not decide it.
func countOf(b *hclsyntax.Block, ctx *hcl.EvalContext) int {
	a, ok := b.Body.Attributes["count"]
	if !ok {
		return -1
	}
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.Number) {
		return -1
	}
	n, acc := v.AsBigFloat().Int64()
	if acc != big.Exact || n < 0 {
		return -1
	}
	return int(n)
}

// referenced counts the resources a body's expressions refer to (type.name).
func referenced(body *hclsyntax.Body) map[string]int {
	out := map[string]int{}
	var walk func(*hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for _, a := range b.Attributes {
			for _, t := range a.Expr.Variables() {
				root := t.RootName()
				if len(t) < 2 || root == "var" || root == "local" || root == "module" || root == "data" || root == "path" || root == "terraform" || root == "each" || root == "count" || root == "self" {
					continue
				}
				if step, ok := t[1].(hcl.TraverseAttr); ok {
					out[root+"."+step.Name]++
				}
			}
		}
		for _, nb := range b.Blocks {
			walk(nb.Body)
		}
	}
	walk(body)
	return out
}

// resourceOf reads one resource block; vars are the module's variables as
// its call sets them (viaVar).
func resourceOf(address string, b *hclsyntax.Block, vars map[string]hclsyntax.Expression) block {
	out := block{address: address, typ: b.Labels[0], labels: map[string]string{}}
	_, c := b.Body.Attributes["count"]
	_, fe := b.Body.Attributes["for_each"]
	out.counted = c || fe
	if out.typ == "kubernetes_manifest" {
		m, ok := b.Body.Attributes["manifest"]
		if !ok {
			return out
		}
		md, ok := item(m.Expr, "metadata")
		if !ok {
			return out
		}
		var nameExpr hclsyntax.Expression
		nameExpr, out.named = item(md, "name")
		out.name = literal(nameExpr)
		if e, ok := item(md, "namespace"); ok {
			out.namespace = literal(e)
		}
		if e, ok := item(m.Expr, "apiVersion"); ok {
			out.apiVersion = literal(e)
		}
		if e, ok := item(m.Expr, "kind"); ok {
			out.kind = literal(e)
		}
		_, isObj := md.(*hclsyntax.ObjectConsExpr)
		labels, has := item(md, "labels")
		out.labels = literalMap(viaVar(labels, vars))
		if e, ok := item(md, "annotations"); ok {
			out.annotations = literalMap(viaVar(e, vars))
		}
		if e, ok := item(m.Expr, "data"); ok && out.kind == "ConfigMap" {
			out.data = literalMap(viaVar(e, vars))
		}
		_, labelsObj := labels.(*hclsyntax.ObjectConsExpr)
		out.labelable = isObj && (!has || labelsObj)
		out.mergeable = isObj && has && !labelsObj
		return out
	}
	if d, ok := b.Body.Attributes["data"]; ok && strings.HasPrefix(out.typ, "kubernetes_config_map") {
		out.data = literalMap(viaVar(d.Expr, vars))
	}
	for _, nb := range b.Body.Blocks {
		if nb.Type != "metadata" {
			continue
		}
		var name *hclsyntax.Attribute
		name, out.named = nb.Body.Attributes["name"]
		if out.named {
			out.name = literal(name.Expr)
		}
		if ns, ok := nb.Body.Attributes["namespace"]; ok {
			out.namespace = literal(ns.Expr)
		}
		if a, ok := nb.Body.Attributes["annotations"]; ok {
			out.annotations = literalMap(viaVar(a.Expr, vars))
		}
		labels, has := nb.Body.Attributes["labels"]
		out.labelable = true
		if has {
			out.labels = literalMap(viaVar(labels.Expr, vars))
			_, out.labelable = labels.Expr.(*hclsyntax.ObjectConsExpr)
			out.mergeable = !out.labelable
		}
		break
	}
	return out
}

// item returns the value of key in an object constructor expression.
func item(e hclsyntax.Expression, key string) (hclsyntax.Expression, bool) {
	obj, ok := e.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil, false
	}
	for _, it := range obj.Items {
		k, diags := it.KeyExpr.Value(nil)
		if !diags.HasErrors() && k.Type() == cty.String && k.IsKnown() && k.AsString() == key {
			return it.ValueExpr, true
		}
	}
	return nil, false
}

// literal is an expression's value when it is a literal string, else "".
func literal(e hclsyntax.Expression) string {
	if e == nil || len(e.Variables()) > 0 {
		return ""
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsWhollyKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// literalMap returns the items of an object constructor whose key and
// value are literal strings.
func literalMap(e hclsyntax.Expression) map[string]string {
	out := map[string]string{}
	obj, ok := e.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return out
	}
	for _, it := range obj.Items {
		if len(it.ValueExpr.Variables()) > 0 {
			continue
		}
		k, d1 := it.KeyExpr.Value(nil)
		v, d2 := it.ValueExpr.Value(nil)
		if d1.HasErrors() || d2.HasErrors() || !k.IsWhollyKnown() || !v.IsWhollyKnown() || k.IsNull() || v.IsNull() ||
			k.Type() != cty.String || v.Type() != cty.String {
			continue
		}
		out[k.AsString()] = v.AsString()
	}
	return out
}
