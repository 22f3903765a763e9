package inventory

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// CountLabelled returns how many objects of these kinds, in every
// namespace, carry label=value, and which. A kind the server does not
// serve counts zero: after a teardown its CRD may be gone too.
func CountLabelled(ctx context.Context, cfg *rest.Config, kinds []schema.GroupVersionKind, label, value string) (int, []Ref, error) {
	sel, err := labels.ValidatedSelectorFromSet(labels.Set{label: value})
	if err != nil {
		return 0, nil, fmt.Errorf("inventory: count %s=%s: %w", label, value, err)
	}
	inv, err := Read(ctx, cfg, Selection{Kinds: kinds, LabelSelector: sel.String()})
	if err != nil {
		return 0, nil, err
	}
	refs := make([]Ref, len(inv.Objects))
	for i, u := range inv.Objects {
		refs[i] = RefOf(u)
	}
	return len(refs), refs, nil
}
