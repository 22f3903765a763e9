package stage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func planNoLocalState() Stage {
	return &noLocalStateStage{Described{Info{ID: "plan_no_local_state", Title: "Plan with no local state", LocalRequirements: []string{"GAUNT-LIVE-NOSTATE-01"}, RecordsRequirements: []string{"GAUNT-PAIR-NOSTATE-01"}, HeadlineOnRecords: true, After: []string{"migrate"}}}}
}

type noLocalStateStage struct{ Described }

const (
	freshEmpty     = "a fresh copy with no local state plans empty"
	plansReadOnly  = "the plans change no record"
	noLocalFreshTF = "nolocal"
)

// Run plans the acted root from a fresh copy - its configuration as it
// stands, no .terraform, no state file: only the records in the cluster
// tell the engine what it manages - and counts that plan's API requests
// beside the ordinary plan's. Neither plan may change a record.
func (s *noLocalStateStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	if !r.RecordsLive() {
		if r.Subject.Engine.Engine.Profile.Has(engine.LiveMode) {
			return fmt.Errorf("stage %s is not implemented for live-mode engines yet: its verdict cannot be a pass", s.About.ID)
		}
		return &NotApplicable{Reason: "needs the estate's state kept in the cluster (a kubernetes backend) or live mode, which " +
			r.Subject.Engine.Engine.Profile.String() + " does not declare; this estate keeps local state", Cause: result.CauseCapability}
	}
	type measured struct {
		fresh              *engine.Workspace
		ordinary, freshReq int
		before             map[string]recordstore.Snapshot
	}
	m, err := gather(ctx, r, func(ctx context.Context, sd *Side) (measured, error) {
		var out measured
		var err error
		if out.before, err = takeRecords(ctx, sd); err != nil {
			return out, err
		}
		n0 := sd.Proxy.Total()
		if err := sd.planEmpty(ctx); err != nil {
			return out, fmt.Errorf("the ordinary plan before the fresh copy: %w", err)
		}
		out.ordinary = sd.Proxy.Total() - n0
		dir := filepath.Join(filepath.Dir(sd.Root.Dir), sd.Root.Name+"-"+noLocalFreshTF)
		if err := copyConfig(sd.Root.Dir, dir); err != nil {
			return out, err
		}
		if out.fresh, err = sd.Workspace(dir); err != nil {
			return out, err
		}
		if _, err := out.fresh.Init(ctx); err != nil {
			return out, err
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	plansFresh := map[string]*engine.Plan{}
	planFresh := func(ctx context.Context, sd *Side) error {
		n0 := sd.Proxy.Total()
		p, err := m[sd.Name].fresh.Plan(ctx, planDefaults())
		if err != nil {
			return err
		}
		r.mu.Lock()
		plansFresh[sd.Name] = p
		mm := m[sd.Name]
		mm.freshReq = sd.Proxy.Total() - n0
		m[sd.Name] = mm
		r.mu.Unlock()
		return nil
	}
	if err := r.both(ctx, planFresh); err != nil {
		return err
	}
	rec.Check(freshEmpty, sides(freshEmpty, empty(plansFresh["subject"]), empty(plansFresh["oracle"])),
		fmt.Sprintf("init and plan in a copy of root %s with no .terraform and no state file, on both sides", r.Subject.Root.Name))
	readOnly := func(ctx context.Context, sd *Side) error {
		now, err := takeRecords(ctx, sd)
		if err != nil {
			return measure(sd, "read the records", err)
		}
		var errs []error
		for ns, snap := range m[sd.Name].before {
			// A plan takes the lock and gives it back: the Leases move.
			errs = append(errs, snapshotFindings(ns, snap, now[ns], "Secret/"))
		}
		return errors.Join(errs...)
	}
	rec.Check(plansReadOnly, r.both(ctx, readOnly), "every state Secret in the records namespaces by name and resourceVersion, before both plans and after")
	for _, sd := range r.Sides() {
		rec.Figure(sd.Name+".plan_requests_ordinary", m[sd.Name].ordinary)
		rec.Figure(sd.Name+".plan_requests_no_local_state", m[sd.Name].freshReq)
	}
	subj := m["subject"]
	rec.Claim([]string{freshEmpty, plansReadOnly}, "a fresh copy of %s's configuration with no .terraform and no state file planned empty (%s) from the records in the cluster alone, as stock's on the oracle cluster; Kubernetes API requests on the wire: %d for that plan against %d for the ordinary plan in the root (%s), and neither plan changed a record",
		r.Subject.Root.Name, plansFresh["subject"].Counts, subj.freshReq, subj.ordinary, ratio(subj.freshReq, subj.ordinary))

	store := storeOf(r.Subject.Records)
	victim := r.victim()
	r.breakBoth(ctx, rec, Breaking{Name: "record_taken", Corruption: "empties " + store.String() + " before the fresh plan",
		Victim: victim.Address, Covers: []string{freshEmpty}, Predict: []result.Prediction{planPredict(victim.Address, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := rewritten(ctx, sd, storeOf(sd.Records), func(st map[string]any) error {
			st["resources"] = []any{}
			return nil
		})
		if err != nil {
			return nil, err
		}
		p, err := m[sd.Name].fresh.Plan(ctx, planDefaults())
		var out Measured
		if err == nil {
			out = one(freshEmpty, empty(p))
		}
		return undoing(out, err, undo)
	})
	r.breakBoth(ctx, rec, Breaking{Name: "record_written", Corruption: "annotates " + store.String() + " between the snapshots",
		Victim: "Secret/" + store.SecretName(), Covers: []string{plansReadOnly}, Predict: []result.Prediction{secretMoved(store)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := annotated(ctx, sd, storeOf(sd.Records))
		if err != nil {
			return nil, err
		}
		return undoing(one(plansReadOnly, readOnly(ctx, sd)), nil, undo)
	})
	return nil
}

// takeRecords snapshots every records namespace of a side.
func takeRecords(ctx context.Context, sd *Side) (map[string]recordstore.Snapshot, error) {
	return takeNamespaces(ctx, sd, sd.recordRoots())
}

// copyConfig copies a root's configuration - its .tf files, variables
// file, lock file and local modules - into a new directory, leaving out
// .terraform, the CLI's home, logs and any state file.
func copyConfig(from, to string) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		base := d.Name()
		if rel != "." && d.IsDir() && strings.HasPrefix(base, ".") {
			return filepath.SkipDir
		}
		if strings.HasPrefix(base, "terraform.tfstate") {
			return nil
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasPrefix(base, ".") && base != ".terraform.lock.hcl" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

func ratio(a, b int) string {
	if b == 0 {
		return "no ordinary requests to compare"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}
