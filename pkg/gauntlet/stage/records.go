package stage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An estate whose roots use the kubernetes backend keeps its state in
// the cluster. Cold deploy applies it on local state (an override file
// per root); the migrate stage moves every root's state into the cluster
// with the engine's own init -migrate-state; from then on every stage
// ends with the record-store checks below, each proven by its BREAK.

// recordRoot is one root of a side whose state is kept in the cluster.
type recordRoot struct {
	name  string
	dir   string
	store recordstore.Store
	// ws is the workspace acting on the root now.
	ws *engine.Workspace
}

func storeOf(r *estate.Records) recordstore.Store {
	return recordstore.Store{Namespace: r.Namespace, Suffix: r.Suffix}
}

// recordRoots lists the side's roots on the kubernetes backend in apply
// order.
func (s *Side) recordRoots() []recordRoot {
	out := s.stoodOn()
	if s.Records != nil {
		out = append(out, recordRoot{name: s.Root.Name, dir: s.Root.Dir, store: storeOf(s.Records), ws: s.Engine})
	}
	for _, o := range s.Others {
		if !o.Before && o.Records != nil {
			out = append(out, s.otherRecordRoot(o))
		}
	}
	return out
}

// stoodOn lists the side's roots on the kubernetes backend that come
// before the acted one in apply order: the ones it stands on.
func (s *Side) stoodOn() []recordRoot {
	var out []recordRoot
	for _, o := range s.Others {
		if o.Before && o.Records != nil {
			out = append(out, s.otherRecordRoot(o))
		}
	}
	return out
}

func (s *Side) otherRecordRoot(o *OtherRoot) recordRoot {
	return recordRoot{name: o.Root.Name, dir: o.Root.Dir, store: storeOf(o.Records), ws: s.otherWorkspace(o)}
}

// RecordsEstate reports whether any of the estate's roots keeps its state
// on the kubernetes backend.
func (r *Run) RecordsEstate() bool { return len(r.Subject.recordRoots()) > 0 }

// RecordsLive reports whether the migrate stage has moved the estate's
// state into the cluster on both sides.
func (r *Run) RecordsLive() bool { return r.RecordsEstate() && r.Subject.live() && r.Oracle.live() }

// migrateRecords moves every root's local state into the cluster with
// this side's engine, in apply order, and sets the local file the
// migration leaves behind (both stock engines keep it) out of the root.
// It returns each root's local state as read before the move, by root.
func (s *Side) migrateRecords(ctx context.Context) (map[string]*recordstore.Record, error) {
	if err := s.Root.RemoveLocalOverride(); err != nil {
		return nil, err
	}
	for _, o := range s.Others {
		if err := o.Root.RemoveLocalOverride(); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.recordsLive = true // from here on the engine acts on every root
	s.mu.Unlock()
	local := map[string]*recordstore.Record{}
	for _, rr := range s.recordRoots() {
		path := filepath.Join(rr.dir, "terraform.tfstate")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("root %s: the local state to migrate: %w", rr.name, err)
		}
		if local[rr.name], err = recordstore.Decode(b); err != nil {
			return nil, fmt.Errorf("root %s: %s: %w", rr.name, path, err)
		}
		if _, err := rr.ws.Run(ctx, []string{"init", "-input=false", "-no-color", "-migrate-state", "-force-copy"}); err != nil {
			return nil, fmt.Errorf("root %s: init -migrate-state: %w", rr.name, err)
		}
		for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
			from := filepath.Join(rr.dir, f)
			if _, err := os.Stat(from); err != nil {
				continue
			}
			if err := os.Rename(from, filepath.Join(filepath.Dir(rr.dir), rr.name+"."+f+".migrated")); err != nil {
				return nil, fmt.Errorf("root %s: set the migrated local state aside: %w", rr.name, err)
			}
		}
	}
	return local, nil
}

// The record-store checks every stage ends with once the records live in
// the cluster.
const (
	recordsInCluster = "every root's state is a record in the cluster, none beside the root"
	recordsManage    = "each record names exactly what the engine manages"
	recordsFollow    = "serial only grows, lineage never changes"
	recordsReleased  = "every lock released"
)

// recordsSeen is what the last record-store check read, by side and root.
type recordsSeen map[string]*recordstore.Record

// CheckRecords runs the record-store checks on both sides, and their
// BREAKs on the acted root's records (or the first root's).
func (r *Run) CheckRecords(ctx context.Context, rec *Recorder) error {
	type read struct {
		recs  map[string]*recordstore.Record
		lists map[string][]string
	}
	reads, err := gather(ctx, r, func(ctx context.Context, sd *Side) (read, error) {
		out := read{recs: map[string]*recordstore.Record{}, lists: map[string][]string{}}
		for _, rr := range sd.recordRoots() {
			l, err := rr.ws.StateList(ctx)
			if err != nil {
				return out, fmt.Errorf("root %s: %w", rr.name, err)
			}
			out.lists[rr.name] = l
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	inCluster := func(ctx context.Context, sd *Side) error {
		var errs []error
		for _, rr := range sd.recordRoots() {
			errs = append(errs, localStateFindings(rr.name, rr.dir))
			got, err := readRecordFinding(ctx, sd, rr.store)
			errs = append(errs, err)
			r.mu.Lock()
			reads[sd.Name].recs[rr.name] = got
			r.mu.Unlock()
		}
		return errors.Join(errs...)
	}
	rec.Check(recordsInCluster, r.both(ctx, inCluster), "no terraform.tfstate and no terraform.tfstate.d beside any root; each state Secret read and decoded")
	manage := func(sd *Side, recs map[string]*recordstore.Record) error {
		var errs []error
		for _, rr := range sd.recordRoots() {
			if got := recs[rr.name]; got != nil {
				errs = append(errs, managesFindings(rr.store, got, reads[sd.Name].lists[rr.name]))
			}
		}
		return errors.Join(errs...)
	}
	rec.Check(recordsManage, r.both(ctx, func(ctx context.Context, sd *Side) error { return manage(sd, reads[sd.Name].recs) }),
		"compared with the engine's state list of each root")
	follow := func(sd *Side, recs map[string]*recordstore.Record) error {
		var errs []error
		for _, rr := range sd.recordRoots() {
			before := r.seen(sd.Name, rr.name)
			if got := recs[rr.name]; got != nil && before != nil {
				errs = append(errs, followsFindings(rr.store, before, got))
			}
		}
		return errors.Join(errs...)
	}
	rec.Check(recordsFollow, r.both(ctx, func(ctx context.Context, sd *Side) error { return follow(sd, reads[sd.Name].recs) }),
		"each record against the one read at the end of the stage before (after migrate: against the local state it came from)")
	released := func(ctx context.Context, sd *Side) error {
		var errs []error
		for _, rr := range sd.recordRoots() {
			lk, err := readLockFinding(ctx, sd, rr.store)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, releasedFinding(rr.store, lk))
		}
		return errors.Join(errs...)
	}
	rec.Check(recordsReleased, r.both(ctx, released), "no lock Lease has a holder")
	var summary []string
	for _, rr := range r.Subject.recordRoots() {
		if got := reads["subject"].recs[rr.name]; got != nil {
			summary = append(summary, fmt.Sprintf("%s serial %d, %d addresses", rr.store, got.Serial, len(got.Managed)))
		}
	}
	rec.Claim([]string{recordsInCluster, recordsManage, recordsFollow, recordsReleased},
		"records in the cluster on both sides, none beside a root (subject: %s); each names exactly what the engine lists, its serial only grew and its lineage held, and every lock was released", strings.Join(summary, "; "))

	// What the checks read is what the next stage follows from; the
	// BREAKs' measurements below read corrupted records into reads.
	keep := map[string]map[string]*recordstore.Record{}
	for side, rd := range reads {
		keep[side] = maps.Clone(rd.recs)
	}
	r.recordBreaks(ctx, rec, inCluster, keep["subject"], func(sd *Side, root string, got *recordstore.Record) error {
		recs := map[string]*recordstore.Record{}
		for k, v := range reads[sd.Name].recs {
			recs[k] = v
		}
		recs[root] = got
		return manage(sd, recs)
	}, follow, released)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.records == nil {
		r.records = map[string]recordsSeen{}
	}
	for side, recs := range keep {
		if r.records[side] == nil {
			r.records[side] = recordsSeen{}
		}
		for name, got := range recs {
			if got != nil {
				r.records[side][name] = got
			}
		}
	}
	return nil
}

// seen is the record the last check read for a side's root.
func (r *Run) seen(side, root string) *recordstore.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.records[side][root]
}

// noteLocal makes the local states the migration read the records the
// first check follows from.
func (r *Run) noteLocal(side string, local map[string]*recordstore.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.records == nil {
		r.records = map[string]recordsSeen{}
	}
	r.records[side] = recordsSeen{}
	for k, v := range local {
		r.records[side][k] = v
	}
}

func readRecord(ctx context.Context, sd *Side, s recordstore.Store) (*recordstore.Record, error) {
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	return recordstore.Read(ctx, cs, s)
}

// recordBreaks corrupts the records behind the engine's back, one way per
// check, and measures the check again: the failure must name the Secret,
// the file, the address or the Lease corrupted.
func (r *Run) recordBreaks(ctx context.Context, rec *Recorder, inCluster func(context.Context, *Side) error,
	now map[string]*recordstore.Record, manage func(sd *Side, root string, got *recordstore.Record) error, follow func(*Side, map[string]*recordstore.Record) error, released func(context.Context, *Side) error) {
	roots := r.Subject.recordRoots()
	v := roots[len(roots)-1]
	for _, rr := range roots {
		if rr.name == r.Subject.Root.Name {
			v = rr
		}
	}
	victim := func(sd *Side) recordRoot {
		for _, rr := range sd.recordRoots() {
			if rr.name == v.name {
				return rr
			}
		}
		return v
	}
	r.breakBoth(ctx, rec, Breaking{Name: "record_taken", Corruption: "deletes " + v.store.String() + " behind the engine's back",
		Victim: v.store.String(), Covers: []string{recordsInCluster},
		Predict: []result.Prediction{{Object: secretObject(v.store), Field: fieldRecord, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		cs, err := sd.Typed()
		if err != nil {
			return nil, err
		}
		rr := victim(sd)
		sec, err := cs.CoreV1().Secrets(rr.store.Namespace).Get(ctx, rr.store.SecretName(), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		// Deleted as every out-of-band delete is: waited for until gone.
		if err := corrupt(ctx, func() error {
			return sd.Delete(ctx, estate.Object{Version: "v1", Kind: "Secret", Namespace: rr.store.Namespace, Name: rr.store.SecretName()})
		}); err != nil {
			return nil, err
		}
		m := one(recordsInCluster, inCluster(ctx, sd))
		return undoing(m, nil, func() error {
			if _, err := cs.CoreV1().Secrets(rr.store.Namespace).Get(ctx, rr.store.SecretName(), metav1.GetOptions{}); err == nil {
				return nil
			}
			sec.ResourceVersion, sec.UID = "", ""
			_, err := cs.CoreV1().Secrets(rr.store.Namespace).Create(ctx, sec, metav1.CreateOptions{})
			return err
		})
	})
	r.breakBoth(ctx, rec, Breaking{Name: "state_file_beside_root", Corruption: "writes a terraform.tfstate beside root " + v.name,
		Victim: "terraform.tfstate", Covers: []string{recordsInCluster},
		Predict: []result.Prediction{{Object: localFile(v.name, "terraform.tfstate", present).Object, Field: fieldExists, Got: present}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		path := filepath.Join(victim(sd).dir, "terraform.tfstate")
		if err := corrupt(ctx, func() error { return os.WriteFile(path, []byte("{}\n"), 0o644) }); err != nil {
			return nil, err
		}
		m := one(recordsInCluster, inCluster(ctx, sd))
		return undoing(m, nil, func() error {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return err
			}
			return nil
		})
	})
	rewrite := func(check string, edit func(map[string]any) error, measure func(ctx context.Context, sd *Side) error) breakFunc {
		return func(ctx context.Context, sd *Side) (Measured, error) {
			undo, err := rewritten(ctx, sd, victim(sd).store, edit)
			if err != nil {
				return nil, err
			}
			return undoing(one(check, measure(ctx, sd)), nil, undo)
		}
	}
	// Take out the last instance the record holds, or - for an empty
	// record (after the teardown) - slip in one the engine never made.
	edit, victimAddr, how, holds := injectInstance(ghostAddress), ghostAddress, "writes "+ghostAddress+" into ", present
	if got := now[v.name]; got != nil {
		for i := len(got.Managed) - 1; i >= 0; i-- {
			if a := got.Managed[i]; !strings.HasPrefix(a, "module.") && !strings.HasPrefix(a, "data.") {
				edit, victimAddr, how, holds = dropInstance(a), a, "takes "+a+" out of ", absent
				break
			}
		}
	}
	r.breakBoth(ctx, rec, Breaking{Name: "record_forgets", Corruption: how + v.store.String() + " behind the engine's back",
		Victim: victimAddr, Covers: []string{recordsManage},
		Predict: []result.Prediction{{Address: victimAddr, Object: secretObject(v.store), Field: fieldRecordHold, Got: holds}}}, rewrite(recordsManage, edit, func(ctx context.Context, sd *Side) error {
		rr := victim(sd)
		got, err := readRecordFinding(ctx, sd, rr.store)
		if err != nil {
			return err
		}
		return manage(sd, rr.name, got)
	}))
	r.breakBoth(ctx, rec, Breaking{Name: "serial_back", Corruption: "writes " + v.store.String() + "'s serial back below the last one read",
		Victim: v.store.String(), Covers: []string{recordsFollow},
		Predict: []result.Prediction{{Object: secretObject(v.store), Field: fieldSerial, Got: wentBack}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		// Below this side's own last serial: the two sides' serials need
		// not agree.
		prev := r.seen(sd.Name, v.name)
		if prev == nil {
			return nil, fmt.Errorf("no earlier record on %s to go back from", sd.Name)
		}
		return rewrite(recordsFollow, func(st map[string]any) error {
			st["serial"] = prev.Serial - 1
			return nil
		}, func(ctx context.Context, sd *Side) error {
			rr := victim(sd)
			got, err := readRecordFinding(ctx, sd, rr.store)
			if err != nil {
				return err
			}
			return follow(sd, map[string]*recordstore.Record{rr.name: got})
		})(ctx, sd)
	})
	r.breakBoth(ctx, rec, Breaking{Name: "lock_held", Corruption: "holds " + v.store.LeaseName() + " as if a command had died holding it",
		Victim: v.store.LeaseName(), Covers: []string{recordsReleased},
		Predict: []result.Prediction{{Object: leaseObject(v.store), Field: fieldHolder, Got: heldWord}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := holdLease(ctx, sd, victim(sd).store)
		if err != nil {
			return nil, err
		}
		return undoing(one(recordsReleased, released(ctx, sd)), nil, undo)
	})
}

// ghostAddress is the instance a BREAK writes into a record: no root
// declares it.
const ghostAddress = "kubernetes_config_map_v1.gauntlet_break_ghost"

// injectInstance adds one instance of address to a decoded state.
func injectInstance(address string) func(map[string]any) error {
	return func(st map[string]any) error {
		typ, name, _ := strings.Cut(address, ".")
		resources, _ := st["resources"].([]any)
		st["resources"] = append(resources, map[string]any{
			"mode": "managed", "type": typ, "name": name,
			"instances": []any{map[string]any{"schema_version": 0, "attributes": map[string]any{}}},
		})
		return nil
	}
}

// dropInstance takes one address's instance out of a decoded state.
func dropInstance(address string) func(map[string]any) error {
	return func(st map[string]any) error {
		resources, _ := st["resources"].([]any)
		for i, res := range resources {
			m, _ := res.(map[string]any)
			base := fmt.Sprint(m["type"]) + "." + fmt.Sprint(m["name"])
			if m["mode"] == "data" {
				base = "data." + base
			}
			if base != address && !strings.HasPrefix(address, base+"[") {
				continue
			}
			instances, _ := m["instances"].([]any)
			if base == address || len(instances) <= 1 {
				st["resources"] = append(resources[:i:i], resources[i+1:]...)
				return nil
			}
			for j, in := range instances {
				key := fmt.Sprint(in.(map[string]any)["index_key"])
				if strings.Contains(address, "["+key+"]") || strings.Contains(address, "[\""+key+"\"]") {
					m["instances"] = append(instances[:j:j], instances[j+1:]...)
					return nil
				}
			}
		}
		return fmt.Errorf("%s is not in the state", address)
	}
}

const lockOnWire = "the apply took the acted root's lock and gave it back (seen on the wire)"

// lockWrites counts the writes to a lock Lease in a side's wire log from
// request index from on.
func lockWrites(sd *Side, s recordstore.Store, from int) int {
	n := 0
	for i, q := range sd.Proxy.Log() {
		if i >= from && q.Resource == "leases.coordination.k8s.io" && q.Namespace == s.Namespace && q.Name == s.LeaseName() &&
			(q.Verb == "update" || q.Verb == "patch" || q.Verb == "create") {
			n++
		}
	}
	return n
}

// checkLockOnWire checks that the apply since mark wrote the acted root's
// lock Lease at least twice - taken, then given back - on each side. Its
// BREAK applies again with -lock=false: no write may then be seen.
func (r *Run) checkLockOnWire(ctx context.Context, rec *Recorder, mark map[string]int) {
	if r.Subject.Records == nil {
		return
	}
	store := storeOf(r.Subject.Records)
	held := func(sd *Side, from int) error {
		s := storeOf(sd.Records)
		if n := lockWrites(sd, s, from); n < 2 {
			return &result.Finding{Object: leaseObject(s), Field: fieldLockWrites, Want: "2 or more (taken and given back)", Got: fmt.Sprint(n)}
		}
		return nil
	}
	rec.Check(lockOnWire, r.both(ctx, func(ctx context.Context, sd *Side) error { return held(sd, mark[sd.Name]) }),
		"writes to Lease "+store.Namespace+"/"+store.LeaseName()+" counted in the wire log of each side")
	r.breakBoth(ctx, rec, Breaking{Name: "apply_unlocked", Corruption: "applies again with -lock=false",
		Victim: store.LeaseName(), Covers: []string{lockOnWire}, Predict: []result.Prediction{{Object: leaseObject(store), Field: fieldLockWrites, Got: "0"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		from := len(sd.Proxy.Log())
		opts := engine.ApplyOptions{}
		if err := corrupt(ctx, func() error { opts.NoLock = true; return nil }); err != nil {
			return nil, err
		}
		if _, err := sd.Engine.Apply(ctx, opts); err != nil {
			return nil, err
		}
		return one(lockOnWire, held(sd, from)), nil
	})
}

const interruptedRecord = "the interrupted apply gave its lock back and its record holds the committed create"

// checkInterruptedRecord reads the acted root's record and lock right
// after an apply took SIGTERM between two creates: the engine must have
// written the first create into the record and released the lock on its
// way out. Its BREAKs hold the Lease, and take the first create out of
// the record.
func (r *Run) checkInterruptedRecord(ctx context.Context, rec *Recorder, first, second string) {
	if r.Subject.Records == nil {
		return
	}
	store := storeOf(r.Subject.Records)
	measure := func(ctx context.Context, sd *Side) error {
		s := storeOf(sd.Records)
		lk, err := readLockFinding(ctx, sd, s)
		if err != nil {
			return err
		}
		got, err := readRecordFinding(ctx, sd, s)
		if err != nil {
			return errors.Join(releasedFinding(s, lk), err)
		}
		errs := []error{releasedFinding(s, lk)}
		for _, a := range []struct{ addr, want string }{{first, present}, {second, absent}} {
			if g := presence(slices.Contains(got.Managed, a.addr)); g != a.want {
				errs = append(errs, &result.Finding{Address: a.addr, Object: secretObject(s), Field: fieldRecordHold, Want: a.want, Got: g, Detail: fmt.Sprintf("serial %d", got.Serial)})
			}
		}
		return errors.Join(errs...)
	}
	rec.Check(interruptedRecord, r.both(ctx, measure), store.String()+" and its Lease read right after the interrupt, on both sides")
	r.breakBoth(ctx, rec, Breaking{Name: "lock_left_held", Corruption: "holds " + store.LeaseName() + " as if the interrupted apply had kept it",
		Victim: store.LeaseName(), Covers: []string{interruptedRecord}, Predict: []result.Prediction{{Object: leaseObject(store), Field: fieldHolder, Got: heldWord}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := holdLease(ctx, sd, storeOf(sd.Records))
		if err != nil {
			return nil, err
		}
		return undoing(one(interruptedRecord, measure(ctx, sd)), nil, undo)
	})
	r.breakBoth(ctx, rec, Breaking{Name: "create_unrecorded", Corruption: "takes " + first + " out of " + store.String(),
		Victim: first, Covers: []string{interruptedRecord}, Predict: []result.Prediction{{Address: first, Object: secretObject(store), Field: fieldRecordHold, Got: absent}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := rewritten(ctx, sd, storeOf(sd.Records), dropInstance(first))
		if err != nil {
			return nil, err
		}
		return undoing(one(interruptedRecord, measure(ctx, sd)), nil, undo)
	})
}

// holdLease sets a holder on a lock Lease behind the engine's back and
// returns the undo. A sabotaged BREAK holds nothing.
func holdLease(ctx context.Context, sd *Side, s recordstore.Store) (func() error, error) {
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	undo := func() error { return recordstore.SetHolder(ctx, cs, s, "", "") }
	return undo, corrupt(ctx, func() error { return recordstore.SetHolder(ctx, cs, s, "gauntlet-break", "") })
}

// rewritten corrupts a side's record through recordstore.Rewrite (nothing
// in a sabotaged run) and returns the undo.
func rewritten(ctx context.Context, sd *Side, s recordstore.Store, edit func(map[string]any) error) (func() error, error) {
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	restore := func(context.Context) error { return nil }
	err = corrupt(ctx, func() error {
		var err error
		restore, err = recordstore.Rewrite(ctx, cs, s, edit)
		return err
	})
	return func() error { return restore(ctx) }, err
}

// annotated writes a stray annotation on a state Secret - a write into
// the records that changes nothing the engine reads - and returns the
// undo.
func annotated(ctx context.Context, sd *Side, s recordstore.Store) (func() error, error) {
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	annotate := func(v string) error {
		_, err := cs.CoreV1().Secrets(s.Namespace).Patch(ctx, s.SecretName(), types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"gauntlet-break":`+v+`}}}`), metav1.PatchOptions{})
		return err
	}
	return func() error { return annotate("null") }, corrupt(ctx, func() error { return annotate(`"yes"`) })
}

// takeNamespaces snapshots the namespaces holding the given roots' records.
func takeNamespaces(ctx context.Context, sd *Side, roots []recordRoot) (map[string]recordstore.Snapshot, error) {
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	out := map[string]recordstore.Snapshot{}
	for _, rr := range roots {
		if _, ok := out[rr.store.Namespace]; ok {
			continue
		}
		snap, err := recordstore.Take(ctx, cs, rr.store.Namespace)
		if err != nil {
			return nil, err
		}
		out[rr.store.Namespace] = snap
	}
	return out, nil
}
