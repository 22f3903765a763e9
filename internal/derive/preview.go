package derive

import (
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/internal/identity"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Preview derives the plans from a root's configuration alone, before
// anything is applied (gauntlet estate new prints it): each object is
// taken as the configuration writes it (a block whose count is 0, or
// whose for_each is empty, with the variables' defaults makes none, nor
// does a block of a module call whose count is 0; a count or for_each
// written as a literal, or a count the defaults decide, makes one object
// per instance) - its kind from the resource type or the manifest, its
// name and labels where they are literal. A run
// derives again from the state and the live objects, which decide.
func Preview(dir string) (*Plans, []Object, error) {
	blocks, err := analyse(dir)
	if err != nil {
		return nil, nil, err
	}
	in := Input{Dir: dir, Live: map[string]*unstructured.Unstructured{}}
	for _, b := range blocks {
		k, role := identity.TypeKind(b.typ)
		if role != identity.Owns || b.absent {
			continue
		}
		ref := estate.Object{Group: k.Group, Version: k.Version, Kind: k.Kind, Namespace: b.namespace, Name: b.name}
		if b.typ == identity.Manifest {
			ref.Group, ref.Version = identity.SplitAPIVersion(b.apiVersion)
			ref.Kind = b.kind
		}
		if ref.Kind == "" {
			ref.Kind = "(kind set by an expression)"
		}
		if ref.Name == "" {
			ref.Name = fmt.Sprintf("(name of %s)", b.address)
		}
		// A count or for_each written as a literal makes one object per
		// instance; else the block stands for its objects as one.
		addrs := []string{b.address}
		n := b.count
		if n < 0 {
			n = b.byDefault
		}
		switch {
		case n > 0:
			addrs = nil
			for i := range n {
				addrs = append(addrs, fmt.Sprintf("%s[%d]", b.address, i))
			}
		case b.keys != nil:
			addrs = nil
			for _, k := range b.keys {
				addrs = append(addrs, b.address+estate.Key{Set: true, String: k}.Text())
			}
		}
		for _, a := range addrs {
			in.Objects = append(in.Objects, Object{Address: a, Type: b.typ, Ref: ref})
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetLabels(b.labels)
			in.Live[a] = u
		}
	}
	p, err := Derive(in)
	return p, in.Objects, err
}
