// Package baseline snapshots the objects an estate may touch but does not
// own - kube-system's ConfigMaps, RBAC, APIServices and the like - and
// compares a later snapshot with it: what vanished, what appeared, what
// was replaced and what changed.
//
// A comparison ignores only what the control plane rewrites on its own
// (resourceVersions and other server-set metadata, leader-election
// annotations, the rules the aggregation controller fills into aggregated
// ClusterRoles), so two snapshots of an untouched cluster agree, and any
// deletion, addition or field edit shows.
package baseline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Scope is what a snapshot covers.
type Scope struct {
	// Namespaces whose NamespacedKinds are snapshotted; empty means all.
	Namespaces []string
	// NamespacedKinds are snapshotted in Namespaces.
	NamespacedKinds []schema.GroupVersionKind
	// ClusterKinds are cluster-scoped kinds snapshotted whole.
	ClusterKinds []schema.GroupVersionKind
}

// DefaultScope covers what estates commonly write into without owning:
// ConfigMaps, ServiceAccounts, Services, Deployments, DaemonSets, Roles
// and RoleBindings in namespaces (kube-system when none are given), plus
// ClusterRoles, ClusterRoleBindings and APIServices.
func DefaultScope(namespaces ...string) Scope {
	if len(namespaces) == 0 {
		namespaces = []string{"kube-system"}
	}
	gvk := func(group, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
	}
	const rbac = "rbac.authorization.k8s.io"
	return Scope{
		Namespaces: namespaces,
		NamespacedKinds: []schema.GroupVersionKind{
			gvk("", "ConfigMap"), gvk("", "ServiceAccount"), gvk("", "Service"),
			gvk("apps", "Deployment"), gvk("apps", "DaemonSet"), gvk(rbac, "Role"), gvk(rbac, "RoleBinding"),
		},
		ClusterKinds: []schema.GroupVersionKind{
			gvk(rbac, "ClusterRole"), gvk(rbac, "ClusterRoleBinding"), gvk("apiregistration.k8s.io", "APIService"),
		},
	}
}

// Snapshot is every object of a Scope at one moment, as read.
type Snapshot struct {
	Scope Scope
	// Taken is when the read finished.
	Taken time.Time
	// Inventory holds the objects as read, not normalised.
	Inventory inventory.Inventory
}

// Len is how many objects the snapshot holds.
func (s *Snapshot) Len() int { return len(s.Inventory.Objects) }

// Counts is how many objects of each kind the snapshot holds.
func (s *Snapshot) Counts() map[string]int { return s.Inventory.Counts() }

// String is e.g. "236 objects: 27 APIService, 70 ClusterRole, ...", kinds
// in name order, for evidence pages.
func (s *Snapshot) String() string {
	counts := s.Counts()
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return fmt.Sprintf("%d objects: %s", s.Len(), strings.Join(parts, ", "))
}

// Take snapshots scope on the cluster cfg points at, bounded by ctx. It
// fails if the server does not serve a kind of the scope: a snapshot
// that silently held nothing of that kind would always compare equal.
func Take(ctx context.Context, cfg *rest.Config, scope Scope, opts ...Option) (*Snapshot, error) {
	o := defaults()
	for _, opt := range opts {
		opt.apply(o)
	}
	s, err := take(ctx, cfg, scope)
	if err != nil || o.quiet <= 0 {
		return s, err
	}
	return settle(ctx, cfg, scope, s, o.quiet)
}

func take(ctx context.Context, cfg *rest.Config, scope Scope) (*Snapshot, error) {
	// One Read: cluster-scoped kinds ignore the namespace list.
	inv, err := inventory.Read(ctx, cfg, inventory.Selection{
		Kinds:      append(slices.Clip(scope.NamespacedKinds), scope.ClusterKinds...),
		Namespaces: scope.Namespaces,
	})
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if len(inv.Unserved) > 0 {
		return nil, fmt.Errorf("baseline: the server does not serve %v", inv.Unserved)
	}
	return &Snapshot{Scope: scope, Taken: time.Now(), Inventory: inv}, nil
}

// settle takes snapshots quiet apart until two in a row agree, and
// returns the last. Controllers keep creating objects for a moment after
// a control plane reports ready (the controller-manager makes a
// ServiceAccount per controller as each starts); a baseline taken in that
// moment would blame the estate for them.
func settle(ctx context.Context, cfg *rest.Config, scope Scope, prev *Snapshot, quiet time.Duration) (*Snapshot, error) {
	var last Diff
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("baseline: no %s without a change before the deadline (last change: %s): %w",
				quiet, firstLine(last), ctx.Err())
		case <-time.After(quiet):
		}
		cur, err := take(ctx, cfg, scope)
		if err != nil {
			return nil, err
		}
		if last = Compare(prev, cur); last.Equal() {
			return cur, nil
		}
		prev = cur
	}
}

func firstLine(d Diff) string {
	s, _, _ := strings.Cut(d.String(), "\n")
	return s
}
