package stage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/baseline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/inventory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// planDefaults are the plan flags every stage uses unless it says otherwise.
func planDefaults() engine.PlanOptions { return engine.PlanOptions{} }

// refOf converts an estate object to an inventory ref.
func refOf(o Object) inventory.Ref {
	return inventory.Ref{Group: o.Ref.Group, Version: o.Ref.Version, Kind: o.Ref.Kind, Namespace: o.Ref.Namespace, Name: o.Ref.Name}
}

// takeBaseline snapshots the namespaces the estate writes into without
// owning, plus the cluster-scoped kinds, before anything is applied.
func (r *Run) takeBaseline(ctx context.Context, s *Side) error {
	snap, err := baseline.Take(ctx, s.Cluster.RESTConfig(), baseline.DefaultScope(r.Spec.WritesInto...))
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Baselines == nil {
		r.Baselines = map[string]any{}
	}
	r.Baselines[s.Name] = snap
	return nil
}

func (r *Run) baseline(side string) *baseline.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, _ := r.Baselines[side].(*baseline.Snapshot)
	return s
}

// baselineLine says what the baseline holds, for a detail sentence.
func (r *Run) baselineLine() string {
	b := r.baseline("subject")
	if b == nil {
		return "no baseline"
	}
	return fmt.Sprintf("%s's %d objects of the compared kinds (with every ClusterRole, ClusterRoleBinding and APIService)",
		strings.Join(r.Spec.WritesInto, ", "), b.Len())
}

// readObjects reads the live objects of objs on a side.
func readObjects(ctx context.Context, s *Side, objs []Object) (inventory.Inventory, error) {
	sel := inventory.Selection{}
	for _, o := range objs {
		sel.Refs = append(sel.Refs, refOf(o))
	}
	inv, err := inventory.Read(ctx, s.Cluster.RESTConfig(), sel)
	if err != nil {
		return inv, fmt.Errorf("inventory on %s: %w", s.Name, err)
	}
	return inv, nil
}

// captureColdOracle keeps the oracle's cold-deploy inventory: greenfield
// compares the engine's fresh apply with it.
func (r *Run) captureColdOracle(ctx context.Context) error {
	inv, err := readObjects(ctx, r.Oracle, r.Objects)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.coldOracle = &inv
	r.coldObjects = append([]Object(nil), r.Objects...)
	return nil
}

// availability checks the APIServices among the estate's objects report
// Available=True, where containers run; elsewhere it says why not.
func (r *Run) availability(ctx context.Context, rec *Recorder, when string) {
	var apis []Object
	for _, o := range r.Objects {
		if o.Ref.Kind == "APIService" && o.Ref.Group == "apiregistration.k8s.io" {
			apis = append(apis, o)
		}
	}
	for _, o := range apis {
		name := "APIService " + o.Ref.Name + " Available " + when
		if !r.Substrate.ContainersRun {
			rec.NotRun(name, "needs the aggregated API's backend running: this substrate runs no containers (no kubelet), so use --substrate kind")
			continue
		}
		u, err := r.Subject.Get(ctx, o.Ref)
		if err == nil && u == nil {
			err = fmt.Errorf("not found")
		}
		if err == nil {
			err = availableTrue(u)
		}
		rec.Check(name, err, "Available=True")
	}
}

func availableTrue(u *unstructured.Unstructured) error {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			if m["status"] == "True" {
				return nil
			}
			return fmt.Errorf("Available=%v (%v)", m["status"], m["reason"])
		}
	}
	return fmt.Errorf("no Available condition yet")
}

// sourceLine names the estate's source for a detail sentence.
func (r *Run) sourceLine() string {
	if src := r.Spec.Source; src != nil {
		return fmt.Sprintf("%s's %s at %s", strings.TrimPrefix(src.Repository, "https://github.com/"), src.Path, src.Commit[:10])
	}
	return "the reference root written here"
}

// deltaLine names the deltas the subject's root carries.
func (r *Run) deltaLine() string {
	var names []string
	for _, d := range r.Subject.Root.Applied {
		names = append(names, d.Name+" ("+d.Why+")")
	}
	if len(names) == 0 {
		return "gauntlet's providers file and no delta"
	}
	return "gauntlet's providers file and its deltas: " + strings.Join(names, ", ")
}

// backupState copies a side's local state file aside and returns a func
// that puts it back, for BREAKs that corrupt state.
func (r *Run) backupState(s *Side) (func() error, error) {
	path := filepath.Join(s.Root.Dir, "terraform.tfstate")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("back up state: %w", err)
	}
	return func() error { return os.WriteFile(path, b, 0o644) }, nil
}

// estateObject converts an inventory ref back to an estate object.
func estateObject(r inventory.Ref) estate.Object {
	return estate.Object{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}
