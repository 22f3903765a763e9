package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/hclblock"
	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func handoff() Stage {
	return &handoffStage{Described{Info{ID: "handoff", Title: "Hand-off between estates", RecordsRequirements: []string{"GAUNT-PAIR-HANDOFF-01"},
		Needs: []engine.Capability{engine.RemovedForget, engine.ImportBlocks}, After: []string{"migrate"}, Declared: handoffUndeclared}}}
}

// handoffStage decides whether a run is clear only for an estate that
// declares a hand-off (estate.yaml's handoff section); for every other
// estate it is not run and outside the verdict.
type handoffStage struct{ Described }

// handoffUndeclared: the stage decides whether a run is clear only for
// an estate that declares a hand-off.
func handoffUndeclared(spec *estate.Spec) string {
	if spec.Handoff == nil {
		return "estate.yaml declares no handoff: a hand-off moves an object between two roots of one estate"
	}
	return ""
}

// handoffFile is the gauntlet-owned file holding the subject's removed
// block (in the giving root) and import block (in the receiving one).
const handoffFile = "gauntlet_handoff.tf"

// handoffRoot is one root of the hand-off on one side.
type handoffRoot struct {
	name  string
	root  *estate.Root
	ws    *engine.Workspace
	store recordstore.Store
}

// handoffSide is what the stage keeps per side.
type handoffSide struct {
	sd       *Side
	from, to *handoffRoot
	cs       kubernetes.Interface
	obj      Object
	uid      string
	// before is from's state record before the move; after, once from
	// forgot the object.
	before, after []byte
	// lockID is the lock the SIGKILLed apply left (subject only).
	lockID string
	// killed is how the subject's adopting apply ended.
	killed string
	// finished says the finishing step (the subject's rerun, the oracle's
	// import) ran; it runs once.
	finished bool
	finish   string
	// toAtPosition is to's state record at the position, before the
	// finishing step: the world no_rerun puts back.
	toAtPosition []byte
	// snaps are from's and to's files before the hand-off.
	snaps []estate.Snapshot
}

func snapshotRoots(roots ...*estate.Root) ([]estate.Snapshot, error) {
	var out []estate.Snapshot
	for _, rt := range roots {
		snap, err := rt.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", rt.Name, err)
		}
		out = append(out, snap)
	}
	return out, nil
}

// restore puts from's and to's files back as snapshotRoots found them,
// gauntlet's hand-off file removed.
func (hs *handoffSide) restore() error {
	if hs == nil || len(hs.snaps) != 2 {
		return nil
	}
	var errs []error
	for i, rt := range []*estate.Root{hs.from.root, hs.to.root} {
		if err := rt.RemoveFile(handoffFile); err != nil {
			errs = append(errs, err)
		}
		if err := rt.Restore(hs.snaps[i]); err != nil {
			errs = append(errs, fmt.Errorf("restore root %s on %s: %w", rt.Name, hs.sd.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Check names.
const (
	hoPosition = "between the two roots: the object is live and in neither root's state"
	hoHeld     = "a SIGKILLed apply leaves the lock held; the next plan is refused naming the lock ID"
	hoCleared  = "force-unlock with that ID clears the lock"
	hoOnly     = "the object is in the receiving root's state only"
	hoUID      = "the live object's metadata.uid never changed"
	hoEmpty    = "both roots' plans are empty"
)

// Run moves the object at the section's address from one root's state to
// the other's while it stays live. The engine under test forgets it with a
// removed block and adopts it with an import block, and is SIGKILLed
// between the two (at the import's first read of the object, through the
// wire proxy): the object is then live and in neither state, the lock is
// left held, and a rerun finishes the move. Stock does the same with
// state rm and import. Both end with the object in the receiving root's
// state only, its uid unchanged and both roots' plans empty.
func (s *handoffStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	if why := s.About.Undeclared(r.Spec); why != "" {
		return &NotApplicable{Reason: why, Cause: result.CauseUndeclared}
	}
	h := r.Spec.Handoff
	sides := map[string]*handoffSide{}
	var mu sync.Mutex
	err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		hs, err := handoffOpen(ctx, r, sd, h)
		if err == nil {
			hs.snaps, err = snapshotRoots(hs.from.root, hs.to.root)
		}
		mu.Lock()
		sides[sd.Name] = hs
		mu.Unlock()
		return err
	})
	if err != nil {
		return err
	}
	if err := s.move(ctx, r, rec, h, sides); err != nil {
		// Put both roots' files back as they were, so that teardown
		// destroys what each root's state holds instead of tripping on a
		// half-written hand-off.
		for _, hs := range sides {
			err = errors.Join(err, hs.restore())
		}
		return err
	}
	return nil
}

// move runs the hand-off on both sides once each side's roots are open.
func (s *handoffStage) move(ctx context.Context, r *Run, rec *Recorder, h *estate.Handoff, sides map[string]*handoffSide) error {
	subj := sides["subject"]
	obj, addr := subj.obj, h.Address
	id := importID(obj)

	// Up to the position between the two roots: the subject's engine
	// forgets the object and is killed adopting it; stock forgets it with
	// state rm and has not imported it yet.
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		return sides[sd.Name].toPosition(ctx, addr, id)
	}); err != nil {
		return err
	}
	position := func(ctx context.Context, hs *handoffSide) error {
		var errs []error
		u, err := hs.sd.Get(ctx, obj.Ref)
		if err != nil {
			return err
		}
		if !exists(u) {
			errs = append(errs, &result.Finding{Address: addr, Object: obj.Ref.String(), Field: fieldExists, Want: present, Got: absent})
		}
		for _, hr := range []*handoffRoot{hs.from, hs.to} {
			errs = append(errs, inRootState(ctx, hs, hr, addr, absent))
		}
		return errors.Join(errs...)
	}
	rec.Check(hoPosition, r.both(ctx, func(ctx context.Context, sd *Side) error { return position(ctx, sides[sd.Name]) }),
		fmt.Sprintf("%s read live; state list in %s and %s, on both clusters", obj.Ref, h.From, h.To))
	r.breakBoth(ctx, rec, Breaking{Name: "from_remembers", Corruption: "writes root " + h.From + "'s state record from before the move back into its Secret",
		Victim: addr, Covers: []string{hoPosition}, Predict: []result.Prediction{{Address: addr, Field: inRootField(h.From), Got: present}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		hs := sides[sd.Name]
		if err := corrupt(ctx, func() error { return recordstore.PutRaw(ctx, hs.cs, hs.from.store, hs.before) }); err != nil {
			return nil, err
		}
		m := one(hoPosition, position(ctx, hs))
		return undoing(m, nil, func() error { return recordstore.PutRaw(ctx, hs.cs, hs.from.store, hs.after) })
	})

	if err := s.lock(ctx, r, rec, subj); err != nil {
		return err
	}

	inToOnly := func(ctx context.Context, hs *handoffSide) error {
		return errors.Join(inRootState(ctx, hs, hs.to, addr, present), inRootState(ctx, hs, hs.from, addr, absent))
	}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		hs := sides[sd.Name]
		var err error
		if hs.toAtPosition, err = recordstore.Raw(ctx, hs.cs, hs.to.store); err != nil {
			return err
		}
		return hs.finishMove(ctx, addr, id)
	}); err != nil {
		return err
	}
	// Stock's import of a kubernetes_manifest may leave part of the
	// resource unset in state; the seed's oracle needed one apply then.
	stockNote := ""
	{
		o := sides["oracle"]
		p, err := o.to.ws.Plan(ctx, plainPlan())
		if err != nil {
			return err
		}
		if empty(p) != nil {
			a, err := o.to.ws.Apply(ctx, engine.ApplyOptions{})
			if err != nil {
				return err
			}
			stockNote = fmt.Sprintf("stock's import left %s incomplete in root %s's state: its plan after the import was not empty (%s), so stock needed one apply (%s) before its plans were empty", addr, h.To, p.Counts, a)
		}
	}
	r.moveObject(h, obj)

	rec.Check(hoOnly, r.both(ctx, func(ctx context.Context, sd *Side) error { return inToOnly(ctx, sides[sd.Name]) }),
		fmt.Sprintf("state list in %s and %s, on both clusters", h.From, h.To))
	// The world as it would be had the finishing step (the subject's
	// rerun, stock's import) never run: the receiving root's record as it
	// was at the position, measured by the check itself.
	r.breakBoth(ctx, rec, Breaking{Name: "no_rerun", Corruption: "writes root " + h.To + "'s state record from before the rerun (stock: before the import) back into its Secret",
		Victim: addr, Covers: []string{hoOnly}, Predict: []result.Prediction{{Address: addr, Field: inRootField(h.To), Got: absent}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			hs := sides[sd.Name]
			now, err := recordstore.Raw(ctx, hs.cs, hs.to.store)
			if err != nil {
				return nil, err
			}
			if err := corrupt(ctx, func() error { return recordstore.PutRaw(ctx, hs.cs, hs.to.store, hs.toAtPosition) }); err != nil {
				return nil, err
			}
			m := one(hoOnly, inToOnly(ctx, hs))
			return undoing(m, nil, func() error { return recordstore.PutRaw(ctx, hs.cs, hs.to.store, now) })
		})
	sameUID := func(ctx context.Context, hs *handoffSide) error {
		u, err := hs.sd.Get(ctx, obj.Ref)
		if err != nil {
			return err
		}
		if !exists(u) {
			return &result.Finding{Address: addr, Object: obj.Ref.String(), Field: fieldExists, Want: present, Got: absent}
		}
		if string(u.GetUID()) != hs.uid {
			return &result.Finding{Address: addr, Object: obj.Ref.String(), Field: fieldUID, Want: unchanged, Got: changed, Detail: hs.uid + " -> " + string(u.GetUID())}
		}
		return nil
	}
	rec.Check(hoUID, r.both(ctx, func(ctx context.Context, sd *Side) error { return sameUID(ctx, sides[sd.Name]) }),
		fmt.Sprintf("%s's uid read before the move and after it, on both clusters", obj.Ref))
	plansEmpty := func(ctx context.Context, hs *handoffSide) error {
		var errs []error
		for _, hr := range []*handoffRoot{hs.from, hs.to} {
			p, err := hr.ws.Plan(ctx, plainPlan())
			if err != nil {
				return measure(hs.sd, "plan in root "+hr.name, err)
			}
			if err := empty(p); err != nil {
				errs = append(errs, fmt.Errorf("root %s on %s: %w", hr.name, hs.sd.Name, err))
			}
		}
		return errors.Join(errs...)
	}
	rec.Check(hoEmpty, r.both(ctx, func(ctx context.Context, sd *Side) error { return plansEmpty(ctx, sides[sd.Name]) }),
		fmt.Sprintf("%s and %s planned on both clusters", h.From, h.To))
	// No corruption gives an object its uid back: the stage goes on with
	// the recreated copy (same content; nothing later reads its uid).
	r.breakBoth(ctx, rec, Breaking{Name: "recreate", Corruption: "deletes " + obj.Ref.String() + " and creates it again from its copy",
		Victim: obj.Ref.String(), Covers: []string{hoUID}, Predict: []result.Prediction{{Object: obj.Ref.String(), Field: fieldUID, Got: changed}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		hs := sides[sd.Name]
		u, err := sd.Get(ctx, obj.Ref)
		if err != nil || u == nil {
			return nil, fmt.Errorf("read %s: %v", obj.Ref, cmpErr(err, "not found"))
		}
		if err := corrupt(ctx, func() error {
			if err := sd.deleteAndWait(ctx, obj.Ref, handoffWait); err != nil {
				return err
			}
			return sd.Recreate(ctx, obj.Ref, u)
		}); err != nil {
			return nil, err
		}
		return one(hoUID, sameUID(ctx, hs)), nil
	})

	r.breakBoth(ctx, rec, Breaking{Name: "delete_before_replan", Corruption: "deletes " + obj.Ref.String() + " out of band before the plans",
		Victim: addr, Covers: []string{hoEmpty}, Predict: []result.Prediction{planPredict(addr, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, obj.Ref, func() (Measured, error) {
			hs := sides[sd.Name]
			p, err := hs.to.ws.Plan(ctx, plainPlan())
			if err != nil {
				return nil, err
			}
			return one(hoEmpty, empty(p)), nil
		})
	})
	rec.Say("the object at %s (%s) moved from root %s to root %s. On the subject, %s forgot it with a removed block (destroy = false), and its apply of an import block in %s was SIGKILLed by the wire proxy at the import's first read of the object (%s); stock moved it with state rm in %s and import in %s",
		addr, obj.Ref, h.From, h.To, r.Subject.Engine.Engine.Profile, h.To, subj.killed, h.From, h.To)
	if stockNote != "" {
		rec.Say("%s", stockNote)
	}
	rec.Claim([]string{hoPosition}, "after the kill, as after stock's state rm, the object was live and in neither root's state")
	rec.Claim([]string{hoHeld, hoCleared}, "the killed apply left its lock held: the next plan was refused naming lock %s, and force-unlock with that ID cleared it", subj.lockID)
	rec.Claim([]string{hoOnly, hoUID, hoEmpty}, "%s; the object is in %s's state only, its uid never changed, and both roots plan empty on both clusters", subj.finish, h.To)
	return nil
}

// What the hand-off's checks find.
const (
	fieldUID      = "metadata.uid"
	fieldNextPlan = "the next plan"
	refusedNaming = "refused naming the lock"
)

// inRootField is an address's presence in one root's state.
func inRootField(root string) string { return "in root " + root + "'s state" }

// inRootState is a finding when addr's presence in hr's state is not
// want; a state list that failed is a measurement error.
func inRootState(ctx context.Context, hs *handoffSide, hr *handoffRoot, addr, want string) error {
	l, err := hr.ws.StateList(ctx)
	if err != nil {
		return measure(hs.sd, "state list in root "+hr.name, err)
	}
	if got := presence(slices.Contains(l, addr)); got != want {
		return &result.Finding{Address: addr, Field: inRootField(hr.name), Want: want, Got: got}
	}
	return nil
}

// handoffWait bounds the wait for a deleted object to be gone.
const handoffWait = 2 * time.Minute

// lock checks, on the subject, the lock the SIGKILL left: held, named by
// the refusal of the next plan, cleared by force-unlock with its ID. The
// oracle's path (state rm, import) kills nothing, so these BREAKs run on
// the subject only.
func (s *handoffStage) lock(ctx context.Context, r *Run, rec *Recorder, hs *handoffSide) error {
	st := hs.to.store
	held := func(ctx context.Context) (string, error) {
		lk, err := readLockFinding(ctx, hs.sd, st)
		if err != nil {
			return "", err
		}
		if lk.Holder == "" {
			return "", &result.Finding{Object: leaseObject(st), Field: fieldHolder, Want: heldWord, Got: "none", Detail: "after the SIGKILLed apply"}
		}
		_, err = hs.to.ws.Plan(ctx, plainPlan())
		var ce *engine.CallError
		switch {
		case err == nil:
			return lk.Holder, &result.Finding{Object: leaseObject(st), Field: fieldNextPlan, Want: refusedNaming, Got: "ran", Detail: "held by " + lk.Holder}
		case !errors.As(err, &ce):
			return lk.Holder, measure(hs.sd, "plan in root "+hs.to.name, err)
		case lockInfoID(ce) != lk.Holder:
			// The engine must refuse for the lock and name it: its
			// state-lock diagnostic's Lock Info carries the lock's ID.
			got := "refused without naming it"
			if id := lockInfoID(ce); id != "" {
				got = "refused naming lock " + id
			} else if d := callDiagnostic(ce); d != "" {
				got = "refused for another reason: " + planErrorSummary(d)
			}
			return lk.Holder, &result.Finding{Object: leaseObject(st), Field: fieldNextPlan, Want: refusedNaming, Got: got, Detail: lastLines(ce.Call.Output, 4)}
		}
		return lk.Holder, nil
	}
	id, err := held(ctx)
	hs.lockID = id
	rec.Check(hoHeld, onSubject(err), fmt.Sprintf("Lease %s/%s held by %s; the plan refused naming it", st.Namespace, st.LeaseName(), id))
	r.breakSubject(ctx, rec, Breaking{Name: "lease_released", Corruption: "releases Lease " + st.LeaseName() + " out of band",
		Victim: st.LeaseName(), Covers: []string{hoHeld}, Predict: []result.Prediction{{Object: leaseObject(st), Field: fieldHolder, Got: "none"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		saved, err := hs.cs.CoordinationV1().Leases(st.Namespace).Get(ctx, st.LeaseName(), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if err := corrupt(ctx, func() error { return recordstore.SetHolder(ctx, hs.cs, st, "", "") }); err != nil {
			return nil, err
		}
		_, e := held(ctx)
		return undoing(one(hoHeld, e), nil, func() error {
			return recordstore.SetHolder(ctx, hs.cs, st, ptrString(saved.Spec.HolderIdentity), saved.Annotations[recordstore.LockInfoAnnotation])
		})
	})
	if id == "" {
		return fmt.Errorf("no lock ID to force-unlock: %v", err)
	}
	saved, err := hs.cs.CoordinationV1().Leases(st.Namespace).Get(ctx, st.LeaseName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	info := saved.Annotations[recordstore.LockInfoAnnotation]
	if _, err := hs.to.ws.Run(ctx, []string{"force-unlock", "-force", "-no-color", id}); err != nil {
		return err
	}
	cleared := func(ctx context.Context) error {
		lk, err := readLockFinding(ctx, hs.sd, st)
		if err != nil {
			return err
		}
		return releasedFinding(st, lk)
	}
	rec.Check(hoCleared, onSubject(cleared(ctx)), fmt.Sprintf("force-unlock -force %s; Lease %s/%s read back free", id, st.Namespace, st.LeaseName()))
	r.breakSubject(ctx, rec, Breaking{Name: "lease_held_again", Corruption: "holds Lease " + st.LeaseName() + " again as lock " + id,
		Victim: id, Covers: []string{hoCleared}, Predict: []result.Prediction{{Object: leaseObject(st), Field: fieldHolder, Got: heldWord}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := corrupt(ctx, func() error { return recordstore.SetHolder(ctx, hs.cs, st, id, info) }); err != nil {
			return nil, err
		}
		return undoing(one(hoCleared, cleared(ctx)), nil, func() error { return recordstore.SetHolder(ctx, hs.cs, st, "", "") })
	})
	return nil
}

// lastLines is the end of an engine's output, for a failure's detail.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// handoffOpen finds both roots on a side with the workspace acting on
// each now (after migrate, the side's engine in both), and the object to
// move, with its uid now.
func handoffOpen(ctx context.Context, r *Run, sd *Side, h *estate.Handoff) (*handoffSide, error) {
	hs := &handoffSide{sd: sd}
	cs, err := sd.Typed()
	if err != nil {
		return hs, err
	}
	hs.cs = cs
	if hs.from, err = engineIn(sd, h.From); err != nil {
		return hs, err
	}
	if hs.to, err = engineIn(sd, h.To); err != nil {
		return hs, err
	}
	// The object as cold deploy found it in the acted root, else from the
	// giving root's state now.
	objs := r.Objects
	if h.From != sd.Root.Name {
		st, err := hs.from.ws.State(ctx)
		if err != nil {
			return hs, err
		}
		if objs, err = objectsFromState(st); err == nil {
			objs, err = sd.settle(objs)
		}
		if err != nil {
			return hs, err
		}
	}
	i := slices.IndexFunc(objs, func(o Object) bool { return o.Address == h.Address })
	if i < 0 {
		return hs, fmt.Errorf("root %s's state on %s holds no object at %s", h.From, sd.Name, h.Address)
	}
	hs.obj = objs[i]
	u, err := sd.Get(ctx, hs.obj.Ref)
	if err != nil || u == nil {
		return hs, fmt.Errorf("%s on %s: %v", hs.obj.Ref, sd.Name, cmpErr(err, "not found"))
	}
	hs.uid = string(u.GetUID())
	return hs, nil
}

// engineIn is the workspace acting on the named root of a side now, with
// the root's records. The hand-off reads and checks the kubernetes
// backend's records: a root on local state cannot take part.
func engineIn(sd *Side, name string) (*handoffRoot, error) {
	hr := &handoffRoot{name: name}
	var rec *estate.Records
	if sd.Root.Name == name {
		hr.root, hr.ws, rec = sd.Root, sd.Engine, sd.Records
	} else {
		i := slices.IndexFunc(sd.Others, func(o *OtherRoot) bool { return o.Root.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("hand-off: no root %s on %s", name, sd.Name)
		}
		o := sd.Others[i]
		hr.root, hr.ws, rec = o.Root, sd.otherWorkspace(o), o.Records
		if sd.Engine != sd.Stock && hr.ws == o.Stock {
			return nil, fmt.Errorf("hand-off: on %s, root %s is still stock's: the engine under test never took it over", sd.Name, name)
		}
	}
	if rec == nil || !sd.live() {
		return nil, &NotApplicable{Reason: "root " + name + " keeps its state outside the cluster: the hand-off reads and checks the kubernetes backend's records"}
	}
	hr.store = storeOf(rec)
	return hr, nil
}

// toPosition brings one side to the position between the two roots.
func (hs *handoffSide) toPosition(ctx context.Context, addr, id string) error {
	before, err := recordstore.Raw(ctx, hs.cs, hs.from.store)
	if err != nil {
		return err
	}
	hs.before = before
	block, err := hs.from.root.TakeResource(addr)
	if err != nil {
		return err
	}
	if err := hs.to.root.AdoptResource(addr, block); err != nil {
		return err
	}
	if hs.sd.Name != "subject" {
		if _, err := hs.from.ws.StateRm(ctx, addr); err != nil {
			return err
		}
		hs.after, err = recordstore.Raw(ctx, hs.cs, hs.from.store)
		return err
	}
	removed, err := hclblock.Removed(addr)
	if err != nil {
		return err
	}
	if err := hs.from.root.WriteFile(handoffFile, removed); err != nil {
		return err
	}
	if _, err := hs.from.ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
		// The engine's error carries every error it printed.
		return fmt.Errorf("root %s forgets %s: %w", hs.from.name, addr, err)
	}
	if hs.after, err = recordstore.Raw(ctx, hs.cs, hs.from.store); err != nil {
		return err
	}
	imp, err := hclblock.Import(addr, id)
	if err != nil {
		return err
	}
	if err := hs.to.root.WriteFile(handoffFile, imp); err != nil {
		return err
	}
	m, err := hs.sd.mapping(hs.obj.Ref)
	if err != nil {
		return err
	}
	hs.killed, err = killedApply(ctx, hs.sd, hs.to.ws, wire.Match{Verb: "get", Resource: m.Resource.Resource, Namespace: hs.obj.Ref.Namespace, Name: hs.obj.Ref.Name})
	return err
}

// finishMove is the step after the position: the subject's rerun of the
// apply, stock's import. It runs once.
func (hs *handoffSide) finishMove(ctx context.Context, addr, id string) error {
	if hs.finished {
		return nil
	}
	hs.finished = true
	if hs.sd.Name != "subject" {
		_, err := hs.to.ws.Run(ctx, []string{"import", "-input=false", "-no-color", addr, id})
		return err
	}
	a, err := hs.to.ws.Apply(ctx, engine.ApplyOptions{})
	hs.finish = "the rerun of the apply finished the move (" + a.String() + ")"
	return err
}

// killedApply applies in ws with a wire trigger that SIGKILLs the
// engine's process group right after the response to the matched request
// (the proxy holds the engine's next requests until it is dead). It
// returns how the apply ended; an apply the trigger never fired in is an
// error.
func killedApply(ctx context.Context, sd *Side, ws *engine.Workspace, m wire.Match) (string, error) {
	var mu sync.Mutex
	var proc *os.Process
	var killErr error
	fired := false
	cancel := sd.Proxy.After(m, func(wire.Request) {
		mu.Lock()
		defer mu.Unlock()
		fired = true
		if proc == nil {
			killErr = fmt.Errorf("no engine process to kill")
			return
		}
		killErr = syscall.Kill(-proc.Pid, syscall.SIGKILL)
	})
	defer cancel()
	_, err := ws.Apply(ctx, engine.ApplyOptions{}, engine.OnStart(func(p *os.Process) { mu.Lock(); proc = p; mu.Unlock() }))
	mu.Lock()
	defer mu.Unlock()
	switch {
	case !fired:
		return "", fmt.Errorf("the trigger on %s %s %s/%s never fired (apply: %v)", m.Verb, m.Resource, m.Namespace, m.Name, err)
	case killErr != nil:
		return "", fmt.Errorf("SIGKILL at %s %s/%s: %w", m.Verb, m.Namespace, m.Name, killErr)
	case err == nil:
		return "", fmt.Errorf("the apply killed at %s %s/%s exited 0", m.Verb, m.Namespace, m.Name)
	}
	var ce *engine.CallError
	if !errors.As(err, &ce) {
		return "", fmt.Errorf("the apply killed at %s %s/%s: %w", m.Verb, m.Namespace, m.Name, err)
	}
	how := fmt.Sprintf("exit %d", ce.Call.ExitCode)
	if sig := engine.Signal(ce.Err); sig != 0 {
		how = fmt.Sprintf("died of signal %d (%s)", int(sig), sig)
	}
	return fmt.Sprintf("killed right after the response to %s %s %s/%s: the engine %s", m.Verb, m.Resource, m.Namespace, m.Name, how), nil
}

// moveObject makes the run's objects follow the hand-off: r.Objects are
// the acted root's, which the teardown's engine destroys.
func (r *Run) moveObject(h *estate.Handoff, obj Object) {
	acted := r.Subject.Root.Name
	switch acted {
	case h.From:
		r.Objects = slices.DeleteFunc(r.Objects, func(o Object) bool { return o.Address == obj.Address })
	case h.To:
		if !slices.ContainsFunc(r.Objects, func(o Object) bool { return o.Address == obj.Address }) {
			r.Objects = append(r.Objects, obj)
		}
	}
}

// lockRefusal is the diagnostic both engine families refuse a locked
// state with.
const lockRefusal = "Error: Error acquiring the state lock"

// lockInfoID is the lock ID a failed call's state-lock refusal names (its
// "Lock Info:" block's ID), "" when it printed no such refusal.
func lockInfoID(ce *engine.CallError) string {
	for _, d := range ce.Diagnostics() {
		if planErrorSummary(d) != lockRefusal {
			continue
		}
		for _, l := range strings.Split(d, "\n") {
			if id, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "│")), "ID:"); ok {
				return strings.TrimSpace(id)
			}
		}
	}
	return ""
}
