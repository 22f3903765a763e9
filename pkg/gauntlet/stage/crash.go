package stage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func day2Crash() Stage {
	return &crashStage{Described{Info{ID: "day2_crash", Title: "Crash mid-apply", Headline: true, Requirements: []string{"GAUNT-DAY2-CRASH-01"}, After: []string{"migrate"}}}}
}

type crashStage struct{ Described }

const crashFileName = "gauntlet_crash.tf"

// Run interrupts an apply of two dependent objects with a real SIGTERM,
// delivered by the wire proxy the instant the first object's create
// response has been sent: the first exists, the second does not, the
// state holds the first only, and the next plan proposes exactly the
// remainder.
func (s *crashStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	first, second := crashObjects(r)
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.WriteFile(crashFileName, crashFile(r)) }); err != nil {
		return err
	}
	exits, err := gather(ctx, r, func(ctx context.Context, sd *Side) (interrupted, error) {
		return interruptedApply(ctx, sd, wire.Match{Verb: "create", Resource: "secrets", Namespace: first.Ref.Namespace, Name: first.Ref.Name}, first.Ref)
	})
	if err != nil {
		return err
	}
	const (
		position  = "first exists, second does not, state holds the first"
		remainder = "next plan proposes exactly the remainder"
		same      = "same as the oracle"
		recovery  = "the recovery apply creates exactly the remainder"
		next      = "next plan empty"
	)
	world := func(ctx context.Context, sd *Side) error {
		if err := exits[sd.Name].taken(sd.Name); err != nil {
			return err
		}
		var fs []*result.Finding
		l, err := sd.Engine.StateList(ctx)
		if err != nil {
			return measure(sd, "state list", err)
		}
		for _, o := range []struct {
			obj  Object
			want string
		}{{first, present}, {second, absent}} {
			u, err := sd.Get(ctx, o.obj.Ref)
			if err != nil {
				return err
			}
			if got := presence(exists(u)); got != o.want {
				fs = append(fs, &result.Finding{Address: o.obj.Address, Object: o.obj.Ref.String(), Field: fieldExists, Want: o.want, Got: got})
			}
			if got := presence(slices.Contains(l, o.obj.Address)); got != o.want {
				fs = append(fs, &result.Finding{Address: o.obj.Address, Field: fieldState, Want: o.want, Got: got})
			}
		}
		return result.Findings(fs...)
	}
	rec.Check(position, r.both(ctx, world), "on both clusters")
	r.breakBoth(ctx, rec, Breaking{Name: "second_exists", Corruption: "creates " + second.Ref.String() + " out of band",
		Victim: second.Ref.String(), Covers: []string{position}, Predict: []result.Prediction{existsPredict(second, present)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": second.Ref.Name, "namespace": second.Ref.Namespace}}}
		if err := corrupt(ctx, func() error { return sd.Recreate(ctx, second.Ref, u) }); err != nil {
			return nil, err
		}
		return undoing(one(position, world(ctx, sd)), nil, func() error { return sd.Delete(ctx, second.Ref) })
	})
	if r.RecordsLive() {
		r.checkInterruptedRecord(ctx, rec, first.Address, second.Address)
	}
	want := map[string]string{second.Address: "create"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	rec.Check(remainder, sides(remainder, exactly(subj, want), exactly(orc, want)), subj.Counts.String())
	rec.Check(same, onSubject(sameShape(subj, orc)), "stock's plan from the same position")
	r.breakBoth(ctx, rec, Breaking{Name: "unbound", Corruption: "removes " + first.Address + " from the state, so the first object is no longer bound",
		Victim: first.Address, Covers: []string{remainder, same}, Predict: []result.Prediction{planPredict(first.Address, "create")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.unbound(ctx, first.Address, func() (Measured, error) {
			p, err := sd.plan(ctx, planDefaults())
			if err != nil {
				return nil, err
			}
			return Measured{remainder: exactly(p, want), same: sameShape(p, plans[otherSide(sd)])}, nil
		})
	})
	a, o, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	createdRemainder := func(a engine.Applied) error { return actedExactly(a, map[string]string{second.Address: "creation"}) }
	rec.Check(recovery, sides(recovery, createdRemainder(a), createdRemainder(o)), a.String())
	// The check's predicate belongs to the recovery position (the remainder
	// missing), so the BREAK first puts the world back there - deleting the
	// remainder is the set-up, kept in a sabotaged run - and its corruption
	// deletes the first object too: the apply must then create both.
	r.breakBoth(ctx, rec, Breaking{Name: "delete_both", Corruption: "deletes " + first.Ref.String() + " out of band as well as the remainder " + second.Ref.String() + ", then applies",
		Victim: first.Address, Covers: []string{recovery}, Predict: []result.Prediction{appliedPredict(first.Address, "creation")}}, func(ctx context.Context, sd *Side) (Measured, error) {
		if err := sd.Delete(ctx, second.Ref); err != nil {
			return nil, err
		}
		if err := corrupt(ctx, func() error { return sd.Delete(ctx, first.Ref) }); err != nil {
			return nil, err
		}
		// The apply measures and recreates what is missing.
		a, err := sd.Engine.Apply(ctx, engine.ApplyOptions{})
		return one(recovery, createdRemainder(a)), err
	})
	r.Objects = append(r.Objects, first, second)
	r.CheckPlanEmpty(ctx, rec, next, second)
	rec.Say("a Secret/ConfigMap pair added in %s beside the estate, the ConfigMap reading the Secret's name: the apply creating both at -parallelism=1 was interrupted by a real SIGTERM (exit %d), which the wire proxy delivered the instant %s's create response had been sent",
		r.Spec.Namespace, exits["subject"].exit, first.Ref.Name)
	rec.Claim([]string{position, remainder, same}, "%s exists and %s does not, the state holds the first only; the next plan proposed exactly the remainder (%s), matching stock's plan from the same position on the oracle cluster (exit %d there)",
		first.Ref.Name, second.Ref.Name, subj.Counts, exits["oracle"].exit)
	rec.Claim([]string{recovery, next}, "the recovery apply created exactly %s (%s) and the plan after it is empty", second.Address, a)
	return s.renameWindow(ctx, r, rec)
}

// interrupted is how an engine took the SIGTERM of interruptedApply.
type interrupted struct {
	exit int
	// ignored is set when the engine never acknowledged the signal: a
	// finding about the engine (it must stop between operations), which the
	// stage's checks report, never a failure of gauntlet's machinery.
	ignored error
}

// taken asserts the engine took the interrupt and exited non-zero.
func (i interrupted) taken(side string) error {
	if i.ignored != nil {
		return &result.Finding{Address: "(the interrupted apply)", Field: "SIGTERM", Want: "taken", Got: "ignored", Detail: i.ignored.Error()}
	}
	if i.exit == 0 {
		return &result.Finding{Address: "(the interrupted apply)", Field: "exit code", Want: "non-zero", Got: "0"}
	}
	return nil
}

// interruptedApply applies with a wire trigger that SIGTERMs the engine
// right after the matched request's response and holds the engine's
// traffic until it has taken the interrupt (30 s at most).
func interruptedApply(ctx context.Context, sd *Side, m wire.Match, obj estate.Object) (interrupted, error) {
	intr := engine.NewInterrupter()
	var ackErr error
	cancel := sd.Proxy.After(m, func(wire.Request) {
		ackErr = intr.Interrupt(30 * time.Second)
	})
	defer cancel()
	_, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Parallelism: 1}, intr.RunOptions()...)
	if !intr.Sent() {
		return interrupted{exit: engine.ExitCode(err)}, fmt.Errorf("the trigger on %s's create never fired (apply: %v)", obj, err)
	}
	out := interrupted{ignored: ackErr}
	if err != nil {
		out.exit = engine.ExitCode(err)
	}
	return out, nil
}
