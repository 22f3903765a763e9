package stage

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/identity"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Object is one live object an estate manages, known by its address.
type Object struct {
	Address string
	// Type is the provider resource type, e.g. "kubernetes_deployment".
	Type string
	Ref  estate.Object
}

// objectsFromState lists the kubernetes objects a state manages, by
// address, typed resources of both name generations and kubernetes_manifest
// alike (see package identity). Resources of other providers (random_...,
// null_resource) and kubernetes resources that own no object
// (kubernetes_labels, ...) are not objects. A namespaced object whose
// namespace the attributes leave out is settled by Side.settle.
func objectsFromState(st *tfjson.State) ([]Object, error) {
	if st == nil || st.Values == nil {
		return nil, nil
	}
	var out []Object
	var walk func(m *tfjson.StateModule) error
	walk = func(m *tfjson.StateModule) error {
		for _, res := range m.Resources {
			if res.Mode != tfjson.ManagedResourceMode {
				continue
			}
			ref, ok, err := identity.Of(res.Address, res.Type, res.AttributeValues)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, Object{Address: res.Address, Type: res.Type, Ref: ref})
			}
		}
		for _, c := range m.ChildModules {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(st.Values.RootModule); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out, nil
}

// settle asks this side's API server whether each object's kind is
// namespaced and places the object accordingly (identity.Scope): a
// kubernetes_manifest may leave a namespaced object's namespace out, and a
// custom resource's kind is known only once its CRD is served.
func (s *Side) settle(objs []Object) ([]Object, error) {
	out := make([]Object, len(objs))
	for i, o := range objs {
		m, err := s.mapping(o.Ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Address, err)
		}
		o.Ref = identity.Scope(o.Ref, m.Scope.Name() == meta.RESTScopeNameNamespace)
		out[i] = o
	}
	return out, nil
}

// derivedKinds are the kinds of the estate's objects; where estate.yaml
// lists kinds, they must be exactly these (the list is optional).
func derivedKinds(spec *estate.Spec, objs []Object) ([]estate.Kind, error) {
	refs := make([]estate.Object, len(objs))
	for i, o := range objs {
		refs[i] = o.Ref
	}
	got := identity.Kinds(refs)
	if len(spec.Kinds) == 0 {
		return got, nil
	}
	key := func(k estate.Kind) string { return identity.APIVersion(k.Group, k.Version) + " " + k.Kind }
	have := map[string]bool{}
	for _, k := range got {
		have[key(k)] = true
	}
	listed := map[string]bool{}
	var diffs []string
	for _, k := range spec.Kinds {
		listed[key(k)] = true
		if !have[key(k)] {
			diffs = append(diffs, key(k)+" is listed but the state holds none")
		}
	}
	for _, k := range got {
		if !listed[key(k)] {
			diffs = append(diffs, key(k)+" is in the state but not listed")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return got, fmt.Errorf("estate.yaml's kinds differ from the kinds the state derives (drop the list to derive it): %s", strings.Join(diffs, "; "))
	}
	return got, nil
}

// importID is the ID the kubernetes provider imports o by.
func importID(o Object) string { return identity.ImportID(o.Type, o.Ref) }

// describe lists objects for a detail sentence: "two ClusterRoles, ... and
// the APIService v1beta1.metrics.k8s.io".
func describe(objs []Object) string {
	count := map[string]int{}
	var order []string
	for _, o := range objs {
		if count[o.Ref.Kind] == 0 {
			order = append(order, o.Ref.Kind)
		}
		count[o.Ref.Kind]++
	}
	words := []string{"", "a", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	var parts []string
	for _, k := range order {
		n := count[k]
		w := fmt.Sprint(n)
		if n < len(words) {
			w = words[n]
		}
		name := k
		if n > 1 {
			name += "s"
		} else if k == "APIService" {
			for _, o := range objs {
				if o.Ref.Kind == k {
					w, name = "the", "APIService "+o.Ref.Name
				}
			}
		}
		if w == "a" && strings.ContainsAny(k[:1], "AEIOU") {
			w = "an"
		}
		parts = append(parts, w+" "+name)
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}
