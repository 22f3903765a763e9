package stage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/fence"
	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func fenceStage() Stage {
	return &fenceStg{Described{Info{ID: "fence", Title: "Estate fence", Requirements: []string{"GAUNT-PAIR-FENCE-01"}, After: []string{"migrate"}, Declared: fenceUndeclared}}}
}

type fenceStg struct{ Described }

// fenceUndeclared: an estate that declares a fence must pass it to be
// clear; one that declares none is not asked.
func fenceUndeclared(spec *estate.Spec) string {
	if spec.Fence == nil {
		return "needs a fence section in estate.yaml (identity, root, reads.root): the estate declares no read of another estate's records to close"
	}
	return ""
}

// fenced is one side's restricted identity: its own wire proxy (its
// requests counted apart), the side's engine planning the acted root
// through it, and the records it must not read.
type fenced struct {
	id      *fence.Identity
	proxy   *wire.Proxy
	ws      *engine.Workspace
	admin   kubernetes.Interface
	reads   recordstore.Store
	own     recordstore.Store
	opts    []fence.GrantOption
	cleanup func(context.Context) error
}

// Run plans the acted root as the estate's fenced identity on both sides:
// refused by the API server reading the other root's state Secret, then,
// with get on that one Secret, empty; the other root's state namespace is
// unchanged across both plans.
func (s *fenceStg) Run(ctx context.Context, r *Run, rec *Recorder) (err error) {
	if why := s.About.Undeclared(r.Spec); why != "" {
		return &NotApplicable{Reason: why, Cause: result.CauseUndeclared}
	}
	f := r.Spec.Fence
	sides := map[string]*fenced{}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		for _, fs := range sides {
			err = errors.Join(err, fs.close(cctx))
		}
	}()
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		fs, err := openFence(ctx, r, sd, f)
		r.mu.Lock()
		if fs != nil {
			sides[sd.Name] = fs
		}
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	const (
		refused   = "the plan as the identity is refused reading the other root's state"
		granted   = "with get on that one Secret the same plan is empty"
		unchanged = "nothing in the other root's state namespace changed across both plans"
	)
	reads := sides["subject"].reads

	// The plan with no grant: the engine's output and the identity's own
	// wire must both show the refusal.
	before, err := gather(ctx, r, func(ctx context.Context, sd *Side) (recordstore.Snapshot, error) {
		return recordstore.Take(ctx, sides[sd.Name].admin, reads.Namespace)
	})
	if err != nil {
		return err
	}
	verbs, err := gather(ctx, r, func(ctx context.Context, sd *Side) (refusal, error) { return sides[sd.Name].planRefused(ctx) })
	if err != nil {
		return err
	}
	rec.Check(refused, joinSides(result.Stamp(verbs["subject"].err, refused, "subject"), result.Stamp(verbs["oracle"].err, refused, "oracle")), "Forbidden on both sides, on the engines' output and the identities' wires")
	for _, sd := range r.Sides() {
		fs, v := sides[sd.Name], verbs[sd.Name]
		if v.verb == "list" {
			// Measured, not assumed: stock terraform's backend lists the
			// namespace's Secrets before it reads a state by name.
			fs.opts = []fence.GrantOption{fence.AlsoList()}
		}
		rec.Figure(sd.Name+".fence_refused_requests", v.requests)
		rec.Figure(sd.Name+".fence_forbidden", v.forbidden)
	}
	rec.Claim([]string{refused}, "root %s planned as %s (get/list/watch cluster-wide on every listable kind but Secrets and Leases, every verb on its %d kinds and on its own records %s, nothing of %s): refused by the API server on both sides - %s's %s of %s, %s's %s",
		r.Subject.Root.Name, sides["subject"].id.User, len(r.Kinds), sides["subject"].idState(), reads.Namespace,
		r.Subject.Engine.Engine.Profile, verbs["subject"].verb, reads, r.Oracle.Engine.Engine.Profile, verbs["oracle"].what())

	// The grant, then the same plan.
	revokes, err := gather(ctx, r, func(ctx context.Context, sd *Side) (func(context.Context) error, error) {
		fs := sides[sd.Name]
		return fs.id.Grant(ctx, reads.Namespace, reads.SecretName(), fs.opts...)
	})
	if err != nil {
		return err
	}
	counts := map[string]int{}
	rec.Check(granted, r.both(ctx, func(ctx context.Context, sd *Side) error {
		n0 := sides[sd.Name].proxy.Total()
		p, err := sides[sd.Name].ws.Plan(ctx, plainPlan())
		r.mu.Lock()
		counts[sd.Name] = sides[sd.Name].proxy.Total() - n0
		r.mu.Unlock()
		if err != nil {
			return measure(sd, "plan as the fence's identity", err)
		}
		return empty(p)
	}), "on both sides")
	after, err := gather(ctx, r, func(ctx context.Context, sd *Side) (recordstore.Snapshot, error) {
		return recordstore.Take(ctx, sides[sd.Name].admin, reads.Namespace)
	})
	if err != nil {
		return err
	}
	rec.Check(unchanged, r.both(ctx, func(ctx context.Context, sd *Side) error {
		return snapshotFindings(reads.Namespace, before[sd.Name], after[sd.Name], "")
	}), fmt.Sprintf("%d objects in %s, names and resourceVersions", len(after["subject"]), reads.Namespace))
	for _, sd := range r.Sides() {
		rec.Figure(sd.Name+".fence_granted_requests", counts[sd.Name])
	}
	rec.Claim([]string{granted}, "with one Role granting get on %s by name (the subject's grant has no list; %s), the same plans are empty", reads, sides["oracle"].grantWords())
	rec.Claim([]string{unchanged}, "nothing in %s changed across either plan (%d Secrets and Leases, names and resourceVersions)", reads.Namespace, len(after["subject"]))
	rec.Say("%s's requests, counted on a wire proxy of its own per side: subject %d for the refused plan (%d answered 403) and %d for the granted one, oracle %d (%d answered 403) and %d",
		f.Identity, verbs["subject"].requests, verbs["subject"].forbidden, counts["subject"], verbs["oracle"].requests, verbs["oracle"].forbidden, counts["oracle"])

	// BREAK: a write into the other root's state namespace between two
	// snapshots around a real plan as the identity.
	r.breakBoth(ctx, rec, Breaking{Name: "write_records", Corruption: "labels " + reads.String() + " between the snapshots around a plan as " + f.Identity,
		Victim: "Secret/" + reads.SecretName(), Covers: []string{unchanged}, Predict: []result.Prediction{secretMoved(reads)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		fs := sides[sd.Name]
		b, err := recordstore.Take(ctx, fs.admin, reads.Namespace)
		if err != nil {
			return nil, err
		}
		if _, err := fs.ws.Plan(ctx, plainPlan()); err != nil {
			return nil, err
		}
		labelled := false
		if err := corrupt(ctx, func() error { labelled = true; return fs.label(ctx, "fence") }); err != nil {
			return nil, err
		}
		a, err := recordstore.Take(ctx, fs.admin, reads.Namespace)
		return undoing(one(unchanged, snapshotFindings(reads.Namespace, b, a, "")), err, func() error {
			if !labelled {
				return nil // the undo takes back only what the corruption did
			}
			return fs.label(ctx, "")
		})
	})
	// BREAK: an object of the root deleted out of band; the granted plan
	// must propose it.
	victim := r.victim()
	r.breakBoth(ctx, rec, Breaking{Name: "delete_before_fenced_plan", Corruption: "deletes " + victim.Ref.String() + " out of band before the plan as " + f.Identity,
		Victim: victim.Address, Covers: []string{granted}, Predict: []result.Prediction{planPredict(victim.Address, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, victim.Ref, func() (Measured, error) {
			p, err := sides[sd.Name].ws.Plan(ctx, plainPlan())
			if err != nil {
				return nil, err
			}
			return one(granted, empty(p)), nil
		})
	})
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return revokes[sd.Name](ctx) }); err != nil {
		return err
	}
	// BREAK: the read granted before the plan; the refusal must not appear.
	r.breakBoth(ctx, rec, Breaking{Name: "grant_first", Corruption: "grants get on " + reads.String() + " before the plan as " + f.Identity,
		Victim: reads.SecretName(), Covers: []string{refused}, Predict: []result.Prediction{{Object: secretObject(reads), Field: fieldFenceRead, Got: "read"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		fs := sides[sd.Name]
		revoke := func(context.Context) error { return nil }
		if err := corrupt(ctx, func() (err error) {
			revoke, err = fs.id.Grant(ctx, reads.Namespace, reads.SecretName(), fs.opts...)
			return err
		}); err != nil {
			return nil, err
		}
		v, err := fs.planRefused(ctx)
		return undoing(one(refused, v.err), err, func() error { return revoke(ctx) })
	})
	return nil
}

// openFence makes the side's identity for the fence, its proxy and its
// workspace on the acted root.
func openFence(ctx context.Context, r *Run, sd *Side, f *estate.Fence) (*fenced, error) {
	var readsRecords *estate.Records
	for _, o := range sd.Others {
		if o.Root.Name == f.Reads.Root {
			readsRecords = o.Records
		}
	}
	if sd.Records == nil || readsRecords == nil {
		return nil, fmt.Errorf("fence: roots %s and %s must both keep their state on the kubernetes backend: the fence closes records in the cluster", sd.Root.Name, f.Reads.Root)
	}
	own, reads := storeOf(sd.Records), storeOf(readsRecords)
	admin, err := kubernetes.NewForConfig(sd.Cluster.RESTConfig())
	if err != nil {
		return nil, err
	}
	var kinds []schema.GroupKind
	for _, k := range r.Kinds {
		gk := schema.GroupKind{Group: k.Group, Kind: k.Kind}
		if !slices.Contains(kinds, gk) {
			kinds = append(kinds, gk)
		}
	}
	id, cleanup, err := fence.Create(ctx, sd.Cluster.RESTConfig(), fence.Spec{Name: f.Identity, Own: kinds, State: own})
	if err != nil {
		return nil, err
	}
	fs := &fenced{id: id, admin: admin, reads: reads, own: own, cleanup: cleanup}
	// The proxy reaches the cluster directly: on a taped side the
	// engine's traffic is recorded with its calls.
	upstream := rest.CopyConfig(id.Config)
	upstream.WrapTransport = nil
	if fs.proxy, err = wire.Start(ctx, upstream, wire.WithLogger(r.Log)); err != nil {
		return fs, fmt.Errorf("fence: %s's wire proxy: %w", id.User, err)
	}
	work := filepath.Dir(sd.Engine.LogDir)
	kc := filepath.Join(work, "fence-"+f.Identity+".kubeconfig")
	if err := fs.proxy.WriteKubeconfig(kc); err != nil {
		return fs, err
	}
	if sd.Tape != nil {
		sd.Tape.Proxy(kc, fs.proxy)
	}
	if fs.ws, err = sd.openWorkspace(sd.Root.Dir, kc, filepath.Join(sd.Engine.LogDir, "fence-"+f.Identity)); err != nil {
		return fs, err
	}
	return fs, nil
}

func (fs *fenced) close(ctx context.Context) error {
	var err error
	if fs.proxy != nil {
		err = fs.proxy.Close(ctx)
	}
	return errors.Join(err, fs.cleanup(ctx))
}

// refusal is what one plan as the identity showed: err is nil when the
// API server refused it the other root's state.
type refusal struct {
	verb                string
	requests, forbidden int
	err                 error
}

func (v refusal) what() string {
	if v.verb == "list" {
		return "list of the namespace's Secrets (its backend lists them before reading a state)"
	}
	return v.verb + " of the Secret by name"
}

// planRefused plans as the identity and reads the refusal from the
// engine's output and from the identity's wire: a 403 to a read of
// Secrets in the other root's state namespace. A plan that fails for
// another reason is the stage's error.
func (fs *fenced) planRefused(ctx context.Context) (refusal, error) {
	seq0 := fs.proxy.Seq()
	p, err := fs.ws.Plan(ctx, plainPlan())
	log := fs.proxy.Since(seq0)
	v := refusal{requests: len(log)}
	var seen bool
	for _, q := range log {
		if q.Code == 403 {
			v.forbidden++
			seen = seen || q.Resource == "secrets" && q.Namespace == fs.reads.Namespace
		}
	}
	var ce *engine.CallError
	switch {
	case err == nil:
		v.err = &result.Finding{Object: secretObject(fs.reads), Field: fieldFenceRead, Want: refusedWord, Got: "read", Detail: fmt.Sprintf("the plan as %s ran (%s)", fs.id.User, p.Counts)}
		return v, nil
	case !errors.As(err, &ce):
		return v, err
	}
	verb, rerr := fs.id.Refused(ce.Call.Output, fs.reads.Namespace, fs.reads.SecretName())
	if rerr != nil {
		return v, fmt.Errorf("the plan as %s failed, but not on the fence: %w (log %s)", fs.id.User, rerr, ce.Call.Log)
	}
	v.verb = verb
	if !seen {
		v.err = &result.Finding{Object: secretObject(fs.reads), Field: "403 on the identity's wire", Want: "seen", Got: "none", Detail: "the engine reports a refusal, the wire shows none"}
	}
	return v, nil
}

// fieldFenceRead is what the API server did with the identity's read of
// the other root's state: "refused" or "read".
const fieldFenceRead = "the identity's read"

// label sets (or, with "", removes) the BREAK's label on the other root's
// state Secret.
func (fs *fenced) label(ctx context.Context, value string) error {
	v := `null`
	if value != "" {
		v = `"` + value + `"`
	}
	patch := `{"metadata":{"labels":{"gauntlet-break":` + v + `}}}`
	_, err := fs.admin.CoreV1().Secrets(fs.reads.Namespace).Patch(ctx, fs.reads.SecretName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("label %s: %w", fs.reads, err)
	}
	return nil
}

func (fs *fenced) idState() string {
	return fs.own.String() + " and its lock Lease"
}

func (fs *fenced) grantWords() string {
	if len(fs.opts) > 0 {
		return "the oracle's also lists the namespace's Secrets, which stock terraform's backend does before it reads a state"
	}
	return "nor has the oracle's"
}
