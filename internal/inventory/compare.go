package inventory

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Difference is one way two inventories disagree.
type Difference struct {
	// Object is the object that differs, as the got side names it (the
	// want side's when got has none).
	Object Ref
	// Pair is the identity PairBy paired it by; "" when paired by name.
	Pair string
	// Path is where in the object, e.g.
	// spec.template.spec.containers[0].args[3]; empty when the object is
	// on one side only.
	Path string
	// Want and Got are the JSON of the value at Path on each side (of the
	// whole normalised object when Path is empty); empty where that side
	// has none.
	Want, Got string
}

// Missing reports whether the object is wanted but was not found.
func (d Difference) Missing() bool { return d.Path == "" && d.Got == "" }

// Unexpected reports whether the object was found but is not wanted.
func (d Difference) Unexpected() bool { return d.Path == "" && d.Want == "" }

// maxShown bounds a value in String: a whole ConfigMap or CA bundle in a
// sentence helps nobody, and Difference keeps the full value.
const maxShown = 160

// String is one short sentence, e.g.
// `Deployment kube-system/metrics-server: spec.replicas: want 2, got 3`.
func (d Difference) String() string {
	switch {
	case d.Missing():
		return d.Object.String() + ": missing (wanted, not found)"
	case d.Unexpected():
		return d.Object.String() + ": unexpected (found, not wanted)"
	}
	return fmt.Sprintf("%s: %s: want %s, got %s", d.Object, d.Path, shown(d.Want), shown(d.Got))
}

func shown(v string) string {
	if v == "" {
		return "nothing"
	}
	if len(v) > maxShown {
		return v[:maxShown] + "… (" + strconv.Itoa(len(v)) + " bytes)"
	}
	return v
}

// Report is the outcome of Compare.
type Report struct {
	// Compared is how many distinct objects the two sides held together.
	Compared int
	// Differences are ordered by object (kind, group, namespace, name),
	// then by path as found, maps in key order and lists by index.
	Differences []Difference
}

// Equal reports whether the two sides agree on every object.
func (r Report) Equal() bool { return len(r.Differences) == 0 }

// String is one sentence per difference, or one saying there are none.
func (r Report) String() string {
	if r.Equal() {
		return fmt.Sprintf("no differences in %d objects", r.Compared)
	}
	lines := make([]string, len(r.Differences))
	for i, d := range r.Differences {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Compare normalises both inventories (see Normalize) and compares them
// object by object, pairing objects by group, kind, namespace and name,
// or by the identities PairBy gives. An object on one side only is one
// Difference; an object on both sides yields one Difference per differing
// field, named after the got side's object.
//
// Lists are compared by position, as Terraform treats them: an element
// inserted at the front shows as every later index differing, which is
// what happened to the list, and is stable from run to run.
func Compare(want, got Inventory, opts ...Option) Report {
	o := newOptions(opts)
	w, g := o.index(want, o.wantIDs, o.wantGen), o.index(got, o.gotIDs, o.gotGen)
	pairs := make([]pairKey, 0, len(w)+len(g))
	for k := range w {
		pairs = append(pairs, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			pairs = append(pairs, k)
		}
	}
	// Ordered by the object as the want side names it (the got side's
	// where want has none), then by identity.
	first := func(k pairKey) key {
		if e, ok := w[k]; ok {
			return e.ref.key()
		}
		return g[k].ref.key()
	}
	slices.SortFunc(pairs, func(a, b pairKey) int {
		if c := compareKeys(first(a), first(b)); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	r := Report{Compared: len(pairs)}
	for _, k := range pairs {
		we, wok := w[k]
		ge, gok := g[k]
		switch {
		case !gok:
			r.Differences = append(r.Differences, Difference{Object: we.ref, Pair: k.id, Want: render(we.obj.Object)})
		case !wok:
			r.Differences = append(r.Differences, Difference{Object: ge.ref, Pair: k.id, Got: render(ge.obj.Object)})
		default:
			r.Differences = append(r.Differences, diffObject(ge.ref, k.id, we.obj, ge.obj)...)
		}
	}
	return r
}

// pairKey is what pairs two objects across inventories: the caller's
// identity (PairBy), else the object's key.
type pairKey struct {
	id string
	k  key
}

// indexed is one side's object, normalised, with the Ref it was read as
// (normalising may drop a generated name).
type indexed struct {
	ref Ref
	obj *unstructured.Unstructured
}

func (o *options) index(inv Inventory, ids map[key]string, gen map[string]string) map[pairKey]indexed {
	m := make(map[pairKey]indexed, len(inv.Objects))
	for _, u := range inv.Objects {
		ref := RefOf(u)
		k := pairKey{k: ref.key()}
		if id, ok := ids[ref.key()]; ok {
			k = pairKey{id: id}
		}
		n := o.normalize(u, gen)
		m[k] = indexed{ref: ref, obj: n}
	}
	return m
}

// positional turns a list into a map from index to element, so cmp
// compares lists element by element by index. cmp's own slice
// comparison aligns elements with an edit script that is deliberately
// non-deterministic, which would make a report differ between two runs
// over the same objects.
var positional = cmp.Transformer("positional", func(l []any) map[int]any {
	m := make(map[int]any, len(l))
	for i, e := range l {
		m[i] = e
	}
	return m
})

func diffObject(ref Ref, pair string, want, got *unstructured.Unstructured) []Difference {
	rep := &reporter{ref: ref, pair: pair}
	cmp.Equal(want.Object, got.Object, positional, cmp.Reporter(rep))
	return rep.diffs
}

// reporter collects one Difference per unequal leaf cmp reports.
type reporter struct {
	ref   Ref
	pair  string
	path  cmp.Path
	diffs []Difference
}

func (r *reporter) PushStep(s cmp.PathStep) { r.path = append(r.path, s) }
func (r *reporter) PopStep()                { r.path = r.path[:len(r.path)-1] }

func (r *reporter) Report(res cmp.Result) {
	if res.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	d := Difference{Object: r.ref, Pair: r.pair, Path: pathString(r.path)}
	if vx.IsValid() {
		d.Want = render(vx.Interface())
	}
	if vy.IsValid() {
		d.Got = render(vy.Interface())
	}
	r.diffs = append(r.diffs, d)
}

// plainKey is a map key that reads unambiguously after a dot.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// pathString renders the map keys and list indexes of a cmp path, e.g.
// spec.ports[0].name or metadata.labels["app.kubernetes.io/name"]; type
// assertions and the positional transform add nothing a reader needs.
func pathString(p cmp.Path) string {
	var b strings.Builder
	for _, s := range p {
		mi, ok := s.(cmp.MapIndex)
		if !ok {
			continue
		}
		switch k := mi.Key(); k.Interface().(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", k.Int())
		case string:
			switch {
			case !plainKey.MatchString(k.String()):
				b.WriteString("[" + strconv.Quote(k.String()) + "]")
			case b.Len() > 0:
				b.WriteString("." + k.String())
			default:
				b.WriteString(k.String())
			}
		default:
			fmt.Fprintf(&b, "[%v]", k)
		}
	}
	return b.String()
}

// render is the compact JSON of a value from an unstructured object,
// which always marshals.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}
