package stage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The teardown of an estate whose roots keep their records in the
// cluster, and read each other's: the acted root goes first and must
// leave the records of the roots it stands on untouched; once those are
// destroyed too, the acted root's read of their outputs must be refused.

const (
	standsOnUntouched = "the records of the roots it stands on untouched by its destroy"
	readerRefused     = "its read of the destroyed roots' outputs is refused"
)

// takeStoodOn snapshots the namespaces holding the records of the roots
// the acted one stands on.
func takeStoodOn(ctx context.Context, sd *Side) (map[string]recordstore.Snapshot, error) {
	return takeNamespaces(ctx, sd, sd.stoodOn())
}

// checkStoodOnUntouched compares the snapshots before the acted root's
// destroy with now. Its BREAK writes into one of those records between.
func (r *Run) checkStoodOnUntouched(ctx context.Context, rec *Recorder, before map[string]map[string]recordstore.Snapshot) {
	if len(r.Subject.stoodOn()) == 0 {
		return
	}
	untouched := func(ctx context.Context, sd *Side) error {
		now, err := takeStoodOn(ctx, sd)
		if err != nil {
			return measure(sd, "read the records stood on", err)
		}
		var errs []error
		for ns, snap := range before[sd.Name] {
			errs = append(errs, snapshotFindings(ns, snap, now[ns], ""))
		}
		return errors.Join(errs...)
	}
	var names []string
	for _, rr := range r.Subject.stoodOn() {
		names = append(names, rr.store.String())
	}
	rec.Check(standsOnUntouched, r.both(ctx, untouched), "every Secret and Lease in "+strings.Join(names, ", ")+" by name and resourceVersion, before and after")
	v := r.Subject.stoodOn()[0]
	r.breakBoth(ctx, rec, Breaking{Name: "stood_on_written", Corruption: "annotates " + v.store.String() + " between the destroy and the comparison",
		Victim: "Secret/" + v.store.SecretName(), Covers: []string{standsOnUntouched}, Predict: []result.Prediction{secretMoved(v.store)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := annotated(ctx, sd, v.store)
		if err != nil {
			return nil, err
		}
		return undoing(one(standsOnUntouched, untouched(ctx, sd)), nil, undo)
	})
}

// checkReaderRefused plans the acted root once the roots it reads are
// destroyed: the plan must fail on the read, naming the data source. Its
// BREAK puts the destroyed root's outputs back into its record first.
func (r *Run) checkReaderRefused(ctx context.Context, rec *Recorder, outputs map[string]map[string]any) error {
	reads, err := r.Subject.Root.RemoteReads()
	if err != nil || len(reads) == 0 || len(r.Subject.stoodOn()) == 0 {
		return err
	}
	read := reads[0]
	source := "data.terraform_remote_state." + read.Name
	refused := func(ctx context.Context, sd *Side) error {
		call, err := sd.Engine.Run(ctx, []string{"plan", "-input=false", "-no-color"})
		if err == nil {
			return &result.Finding{Address: source, Field: fieldReaderPlan, Want: refusedOnRead, Got: "ran", Detail: "answered with the destroyed root's outputs"}
		}
		// The engine's own account of why the plan failed is the check's
		// subject: an error diagnostic whose value is the data source's
		// (every plan that reads it also prints "<source>: Reading...",
		// so the output merely naming it proves nothing).
		ce := &engine.CallError{Call: call, Err: err}
		if !slices.ContainsFunc(ce.Diagnostics(), func(d string) bool { return valueOf(d, source) }) {
			return &result.Finding{Address: source, Field: fieldReaderPlan, Want: refusedOnRead, Got: "failed elsewhere", Detail: fmt.Sprintf("exit %d, log %s", call.ExitCode, call.Log)}
		}
		return nil
	}
	rec.Check(readerRefused, r.both(ctx, refused), fmt.Sprintf("%s reads %s, which the teardown emptied", source, read.Records))
	r.breakBoth(ctx, rec, Breaking{Name: "outputs_back", Corruption: "writes the destroyed root's outputs back into " + read.Records.String() + "'s record",
		Victim: source, Covers: []string{readerRefused}, Predict: []result.Prediction{{Address: source, Field: fieldReaderPlan, Got: "ran"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		undo, err := rewritten(ctx, sd, storeOf(&read.Records), func(st map[string]any) error {
			st["outputs"] = outputs[sd.Name]
			return nil
		})
		if err != nil {
			return nil, err
		}
		return undoing(one(readerRefused, refused(ctx, sd)), nil, undo)
	})
	return nil
}

// What the reader's plan does once the roots it reads are destroyed.
const (
	fieldReaderPlan = "plan of the reading root"
	refusedOnRead   = "refused on this read"
)

// stoodOnOutputs reads the outputs of the first root the acted one reads,
// before the teardown empties it.
func (r *Run) stoodOnOutputs(ctx context.Context, sd *Side) (map[string]any, error) {
	reads, err := sd.Root.RemoteReads()
	if err != nil || len(reads) == 0 {
		return nil, err
	}
	cs, err := sd.Typed()
	if err != nil {
		return nil, err
	}
	st, err := recordstore.ReadState(ctx, cs, storeOf(&reads[0].Records))
	if err != nil {
		return nil, err
	}
	out, _ := st["outputs"].(map[string]any)
	return out, nil
}

// valueOf reports whether a diagnostic is about an expression's value
// rooted at address: the engines print the values an error involves
// under its source line ("│ data.terraform_remote_state.network.outputs
// is object with no attributes").
func valueOf(diagnostic, address string) bool {
	for _, l := range strings.Split(diagnostic, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "│"))
		if strings.HasPrefix(l, address+".") || strings.HasPrefix(l, address+" ") {
			return true
		}
	}
	return false
}
