package stage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func cliContract() Stage {
	return &contractStage{Described{Info{ID: "cli_contract", Title: "Exit codes and parallelism", Headline: true,
		Requirements: []string{"GAUNT-CLI-EXITCODE-01", "GAUNT-CLI-PARALLEL-01"}, After: []string{"migrate"}}}}
}

type contractStage struct{ Described }

const (
	contractFileName = "gauntlet_contract.tf"
	// contractCount ConfigMaps nothing orders: an engine that ignores
	// -parallelism=1 creates them at once.
	contractCount = 6
)

// What the contract's checks find.
const (
	fieldExitCode    = "exit code of plan -detailed-exitcode"
	detailedPlanName = "the plan -detailed-exitcode"
	fieldInFlight    = "creates in flight at once"
	fieldSeen        = "creates seen on the wire"
	oneAtATime       = "one at a time"
	overlapping      = "overlapping"
	applyAtOne       = "the apply at -parallelism=1"
)

// Run holds the engine to two promises pipelines and the crash stages
// lean on: plan -detailed-exitcode exits 2 when the plan has changes and
// 0 when it has none, and at -parallelism=1 an apply acts on one object
// at a time - no two of its creates are in flight on the wire together.
func (s *contractStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	objs := make([]Object, contractCount)
	want := map[string]string{}
	for i := range objs {
		objs[i] = contractObject(r, i)
		want[objs[i].Address] = "create"
	}
	write := func(ctx context.Context, sd *Side) error { return sd.Root.WriteFile(contractFileName, contractFile(r)) }
	if err := r.both(ctx, write); err != nil {
		return err
	}
	const (
		changes = "a plan with changes exits 2 under -detailed-exitcode"
		serial  = "at -parallelism=1 no two creates of the apply overlap on the wire"
		quiet   = "a plan without changes exits 0 under -detailed-exitcode"
	)
	detailed := func(ctx context.Context, sd *Side, out string) (*engine.Plan, error) {
		return sd.Engine.Plan(ctx, engine.PlanOptions{Out: out, DetailedExitcode: true})
	}
	withChanges := func(p *engine.Plan) error { return errors.Join(exactly(p, want), exitCode(p, 2)) }
	first, err := gather(ctx, r, func(ctx context.Context, sd *Side) (*engine.Plan, error) { return detailed(ctx, sd, "contract.tfplan") })
	if err != nil {
		return err
	}
	rec.Check(changes, sides(changes, withChanges(first["subject"]), withChanges(first["oracle"])),
		fmt.Sprintf("exit %d (%s)", first["subject"].ExitCode, first["subject"].Counts))
	// Without the file there is nothing to change: a sound engine exits 0.
	r.breakBoth(ctx, rec, Breaking{Name: "no_changes", Corruption: "removes " + contractFileName + " before the plan, so it has nothing to change",
		Victim: contractFileName, Covers: []string{changes}, Predict: []result.Prediction{{Object: detailedPlanName, Field: fieldExitCode, Got: "0"}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			if err := corrupt(ctx, func() error { return sd.Root.RemoveFile(contractFileName) }); err != nil {
				return nil, err
			}
			p, err := detailed(ctx, sd, "contract-break.tfplan")
			if err != nil {
				return undoing(nil, err, func() error { return write(ctx, sd) })
			}
			return undoing(one(changes, withChanges(p)), nil, func() error { return write(ctx, sd) })
		})

	// Each side applies at -parallelism=1; its proxy saw the creates.
	overlaps, err := gather(ctx, r, func(ctx context.Context, sd *Side) (error, error) {
		return appliedOneAtATime(ctx, sd, r, 1)
	})
	if err != nil {
		return err
	}
	rec.Check(serial, sides(serial, overlaps["subject"], overlaps["oracle"]), fmt.Sprintf("%d ConfigMaps, each create sent after the one before was answered", contractCount))
	// The corruption is of the engine's input: the same creates again at
	// -parallelism=10 (the engine's default) must overlap. Deleting the
	// objects first is the set-up, kept in a sabotaged run, which applies
	// at 1 again.
	r.breakBoth(ctx, rec, Breaking{Name: "parallel_apply", Corruption: "applies the same creates at -parallelism=10",
		Victim: applyAtOne, Covers: []string{serial}, Predict: []result.Prediction{{Object: applyAtOne, Field: fieldInFlight, Got: overlapping}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			for _, o := range objs {
				if err := sd.Delete(ctx, o.Ref); err != nil {
					return nil, err
				}
			}
			n := 1
			if err := corrupt(ctx, func() error { n = 10; return nil }); err != nil {
				return nil, err
			}
			found, err := appliedOneAtATime(ctx, sd, r, n)
			return one(serial, found), err
		})

	noChanges := func(p *engine.Plan) error { return errors.Join(empty(p), exitCode(p, 0)) }
	second, err := gather(ctx, r, func(ctx context.Context, sd *Side) (*engine.Plan, error) { return detailed(ctx, sd, "contract.tfplan") })
	if err != nil {
		return err
	}
	rec.Check(quiet, sides(quiet, noChanges(second["subject"]), noChanges(second["oracle"])), fmt.Sprintf("exit %d", second["subject"].ExitCode))
	r.breakBoth(ctx, rec, Breaking{Name: "delete_one", Corruption: "deletes " + objs[0].Ref.String() + " out of band before the plan",
		Victim: objs[0].Ref.String(), Covers: []string{quiet}, Predict: []result.Prediction{{Object: detailedPlanName, Field: fieldExitCode, Got: "2"}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			return sd.deleted(ctx, objs[0].Ref, func() (Measured, error) {
				p, err := detailed(ctx, sd, "contract-break.tfplan")
				if err != nil {
					return nil, err
				}
				return one(quiet, noChanges(p)), nil
			})
		})

	// gauntlet's own objects go again, so later stages see the estate alone.
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.RemoveFile(contractFileName) }); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return fmt.Errorf("destroy the stage's own ConfigMaps: %w", err)
	}
	rec.Say("%d ConfigMaps nothing orders, added in %s beside the estate (gauntlet's own file, destroyed again at the end of the stage)", contractCount, r.Spec.Namespace)
	rec.Claim([]string{changes, quiet}, "plan -detailed-exitcode exited %d with %s and %d once applied, as stock's did (%d and %d)",
		first["subject"].ExitCode, first["subject"].Counts, second["subject"].ExitCode, first["oracle"].ExitCode, second["oracle"].ExitCode)
	rec.Claim([]string{serial}, "at -parallelism=1 each of the %d creates reached the API server after the one before was answered, on both sides", contractCount)
	return nil
}

// exitCode is a finding when a plan's -detailed-exitcode is not want.
func exitCode(p *engine.Plan, want int) error {
	if p.ExitCode == want {
		return nil
	}
	return &result.Finding{Object: detailedPlanName, Field: fieldExitCode, Want: strconv.Itoa(want), Got: strconv.Itoa(p.ExitCode),
		Detail: "the saved plan: " + p.Counts.String()}
}

// appliedOneAtATime applies at -parallelism=n and returns the finding
// that its contract ConfigMap creates overlapped on the side's proxy, or
// that the proxy did not see them all; the error is the apply's.
func appliedOneAtATime(ctx context.Context, sd *Side, r *Run, n int) (found, err error) {
	mark := sd.Proxy.Seq()
	if _, err = sd.Engine.Apply(ctx, engine.ApplyOptions{Parallelism: n}); err != nil {
		return nil, err
	}
	prefix := r.Spec.Prefix + "-contract-"
	var creates []wire.Request
	for _, q := range sd.Proxy.Since(mark) {
		if q.Verb == "create" && q.Resource == "configmaps" && q.Namespace == r.Spec.Namespace && strings.HasPrefix(q.Name, prefix) {
			creates = append(creates, q)
		}
	}
	if len(creates) != contractCount {
		return &result.Finding{Object: applyAtOne, Field: fieldSeen, Want: strconv.Itoa(contractCount), Got: strconv.Itoa(len(creates))}, nil
	}
	var pairs []string
	for i := range creates {
		for j := i + 1; j < len(creates); j++ {
			if wire.Overlap(creates[i], creates[j]) {
				pairs = append(pairs, creates[i].Name+" with "+creates[j].Name)
			}
		}
	}
	if len(pairs) > 0 {
		return &result.Finding{Object: applyAtOne, Field: fieldInFlight, Want: oneAtATime, Got: overlapping, Detail: strings.Join(pairs, "; ")}, nil
	}
	return nil, nil
}
