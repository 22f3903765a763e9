package baseline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Diff is what happened between two snapshots.
type Diff struct {
	// Vanished are objects in the earlier snapshot only.
	Vanished []inventory.Ref
	// Appeared are objects in the later snapshot only.
	Appeared []inventory.Ref
	// Replaced are objects deleted and created again under the same name
	// (their uid differs), whether or not their fields changed.
	Replaced []inventory.Ref
	// Changed has one entry per changed field: Want is the earlier value,
	// Got the later one.
	Changed []inventory.Difference
}

// Equal reports whether nothing happened.
func (d Diff) Equal() bool {
	return len(d.Vanished)+len(d.Appeared)+len(d.Replaced)+len(d.Changed) == 0
}

// String is one sentence per finding, or "no change".
func (d Diff) String() string {
	if d.Equal() {
		return "no change"
	}
	var lines []string
	for _, r := range d.Vanished {
		lines = append(lines, r.String()+": vanished")
	}
	for _, r := range d.Appeared {
		lines = append(lines, r.String()+": appeared")
	}
	for _, r := range d.Replaced {
		lines = append(lines, r.String()+": replaced (deleted and created again)")
	}
	for _, c := range d.Changed {
		lines = append(lines, fmt.Sprintf("%s: %s changed: was %s, now %s", c.Object, c.Path, orNothing(c.Want), orNothing(c.Got)))
	}
	return strings.Join(lines, "\n")
}

func orNothing(v string) string {
	if v == "" {
		return "nothing"
	}
	return v
}

// Compare says what happened between before and after. Server-set
// metadata, controller-written annotations (inventory's defaults) and the
// control plane's own rewrites (see package doc) are ignored; nothing
// else is, not even fields inventory's DefaultRules drop, because here
// both sides are the same cluster and any change to them is real. opts
// add to that, e.g. inventory.IgnoreLabels for a marker the comparison
// should not see.
func Compare(before, after *Snapshot, opts ...inventory.Option) Diff {
	// No server-default rules: both sides are the same cluster, so a
	// defaulted field that changed was changed by someone; so was a token
	// Secret's data or a generated name (inventory.SameCluster).
	opts = append([]inventory.Option{inventory.ReplaceRules(), inventory.SameCluster()}, opts...)
	r := inventory.Compare(withoutControllerFields(before.Inventory), withoutControllerFields(after.Inventory), opts...)
	var d Diff
	for _, x := range r.Differences {
		switch {
		case x.Missing():
			d.Vanished = append(d.Vanished, x.Object)
		case x.Unexpected():
			d.Appeared = append(d.Appeared, x.Object)
		default:
			d.Changed = append(d.Changed, x)
		}
	}
	d.Replaced = replaced(before.Inventory, after.Inventory)
	return d
}

// withoutControllerFields returns inv with copies of the objects whose
// content a controller derives from other objects, less that content:
// an aggregated ClusterRole's rules are the union of the ClusterRoles its
// aggregationRule selects, refilled by the aggregation controller. The
// selected ClusterRoles are themselves in the snapshot, so a change
// there still shows, once, where it was made.
func withoutControllerFields(inv inventory.Inventory) inventory.Inventory {
	out := inv
	out.Objects = make([]*unstructured.Unstructured, len(inv.Objects))
	for i, u := range inv.Objects {
		if _, aggregated := u.Object["aggregationRule"]; aggregated && u.GetKind() == "ClusterRole" {
			u = u.DeepCopy()
			delete(u.Object, "rules")
		}
		out.Objects[i] = u
	}
	return out
}

// replaced lists the objects in both inventories under different uids.
func replaced(before, after inventory.Inventory) []inventory.Ref {
	type k struct{ group, kind, ns, name string }
	uids := map[k]types.UID{}
	for _, u := range before.Objects {
		r := inventory.RefOf(u)
		uids[k{r.Group, r.Kind, r.Namespace, r.Name}] = u.GetUID()
	}
	var out []inventory.Ref
	for _, u := range after.Objects {
		r := inventory.RefOf(u)
		if uid, ok := uids[k{r.Group, r.Kind, r.Namespace, r.Name}]; ok && uid != u.GetUID() {
			out = append(out, r)
		}
	}
	// In the order the rest of a Diff is in, whatever order after's
	// objects were in.
	slices.SortFunc(out, func(a, b inventory.Ref) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}
