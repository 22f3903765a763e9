package stage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/wire"
)

func day2Crash() Stage {
	return &crashStage{info{id: "day2_crash", title: "Crash mid-apply", headline: true, reqs: []string{"GAUNT-DAY2-CRASH-01"}, after: []string{"migrate"}}}
}

type crashStage struct{ info }

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
	exits := map[string]int{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		code, err := interruptedApply(ctx, sd, first)
		r.mu.Lock()
		exits[sd.Name] = code
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	world := func(ctx context.Context, sd *Side) error {
		if code := exits[sd.Name]; code == 0 {
			return fmt.Errorf("the interrupted apply exited 0")
		}
		if u, err := sd.Get(ctx, first.Ref); err != nil || u == nil {
			return fmt.Errorf("%s does not exist after the interrupt (%v)", first.Ref, err)
		}
		if u, err := sd.Get(ctx, second.Ref); err != nil || u != nil {
			return fmt.Errorf("%s exists: the walker went past the interrupt (%v)", second.Ref, err)
		}
		l, err := sd.Engine.StateList(ctx)
		if err != nil {
			return err
		}
		if !slices.Contains(l, first.Address) || slices.Contains(l, second.Address) {
			return fmt.Errorf("state lists %v, want %s and not %s", l, first.Address, second.Address)
		}
		return nil
	}
	if !rec.Check("first exists, second does not, state holds the first", r.both(ctx, world), "on both clusters") {
		return nil
	}
	remainder := map[string]string{second.Address: "create"}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("next plan proposes exactly the remainder", exactly(subj, remainder), subj.Counts.String()) {
		return nil
	}
	rec.Check("same as the oracle", sameShape(subj, orc), "stock's plan from the same position")
	if err := rec.Break("unbound", "removes "+first.Address+" from the state, so the first object is no longer bound", func() (error, error) {
		p, err := r.planUnbound(ctx, first.Address)
		if err != nil {
			return nil, err
		}
		return exactly(p, remainder), nil
	}); err != nil {
		return err
	}
	a, _, err := r.applyBoth(ctx, engine.ApplyOptions{})
	if err != nil {
		return err
	}
	rec.Check("the recovery apply adds exactly one", func() error {
		if a.Added != 1 || a.Changed != 0 || a.Destroyed != 0 {
			return fmt.Errorf("applied %s", a)
		}
		return nil
	}(), a.String())
	err = r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.planEmpty(ctx) })
	rec.Check("next plan empty", err, "")
	r.Objects = append(r.Objects, first, second)
	rec.Say("a Secret/ConfigMap pair added in %s beside the estate, the ConfigMap reading the Secret's name: the apply creating both at -parallelism=1 was interrupted by a real SIGTERM (exit %d), which the wire proxy delivered the instant %s's create response had been sent; %s exists and %s does not, the state holds the first only; the next plan proposed exactly the remainder (%s), matching stock's plan from the same position on the oracle cluster (exit %d there); the recovery apply added exactly one (%s) and the plan after it is empty",
		r.Spec.Namespace, exits["subject"], first.Ref.Name, first.Ref.Name, second.Ref.Name, subj.Counts, exits["oracle"], a)
	return nil
}

// interruptedApply applies with a wire trigger that SIGTERMs the engine
// right after first's create response and holds the engine's traffic
// until it has taken the interrupt. It returns the engine's exit code.
func interruptedApply(ctx context.Context, sd *Side, first Object) (int, error) {
	intr := engine.NewInterrupter()
	var ackErr error
	cancel := sd.Proxy.After(wire.Match{Verb: "create", Resource: "secrets", Namespace: first.Ref.Namespace, Name: first.Ref.Name}, func(wire.Request) {
		ackErr = intr.Interrupt(30 * time.Second)
	})
	defer cancel()
	_, err := sd.Engine.Apply(ctx, engine.ApplyOptions{Parallelism: 1}, intr.RunOptions()...)
	if !intr.Sent() {
		return engine.ExitCode(err), fmt.Errorf("the trigger on %s's create never fired (apply: %v)", first.Ref, err)
	}
	if ackErr != nil {
		return engine.ExitCode(err), ackErr
	}
	if err == nil {
		return 0, nil
	}
	return engine.ExitCode(err), nil
}
