package stage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/rawstate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func day2CBDChain() Stage {
	return &cbdChainStage{Described{Info{ID: "day2_cbd_chain", Title: "An inherited create_before_destroy through a replace",
		Requirements: []string{"GAUNT-DAY2-CBD-02"}, After: []string{"day2_replace"}}}}
}

type cbdChainStage struct{ Described }

const (
	cbdChainFileName = "gauntlet_cbd_chain.tf"
	chainBase        = "kubernetes_config_map_v1.chain_base"
	chainMid         = "kubernetes_config_map_v1.chain_mid"
	chainTop         = "kubernetes_config_map_v1.chain_top"
	// fieldStateCBD is an instance's create_before_destroy as its state
	// records it: "true" or "false".
	fieldStateCBD = "create_before_destroy in state"
	// fieldPlanError is a plan that failed: its first error's summary.
	fieldPlanError = "plan error"
)

// Run builds base <- mid <- top, base and top create_before_destroy: the
// flag is forced onto mid, and kept in its state so that removing it later
// orders right. mid is replaced; then the configuration is trimmed to a
// new base alone. Engines before 1.10 dropped the inherited flag from
// mid's state when they replaced it, and the trimmed plan failed with
// "Error: Cycle" (opentofu#2398, terraform#35959). base's own flag is
// written out: with base only inheriting it, the trimmed plan cycles on
// every engine pinned here (terraform#36154, open), a bug of its own.
func (s *cbdChainStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	write := func(tf string) error {
		return r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.WriteFile(cbdChainFileName, tf) })
	}
	for _, mid := range []int{0, 1} {
		if err := write(chainFile(r, 0, mid, true)); err != nil {
			return err
		}
		if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
			return err
		}
	}
	const (
		carried = "the replaced dependency keeps its inherited create_before_destroy in state"
		trimmed = "the trimmed chain plans: base replaced create first, the rest destroyed"
		alone   = "the new base alone remains"
		next    = "next plan empty"
	)
	carriedOn := func(ctx context.Context, sd *Side) error {
		doc, err := sd.Engine.StatePull(ctx)
		if err != nil {
			return measure(sd, "state pull", err)
		}
		cbd, err := rawstate.CreateBeforeDestroy(doc, chainMid)
		if err != nil {
			return measure(sd, "read the pulled state", err)
		}
		if !cbd {
			return &result.Finding{Address: chainMid, Field: fieldStateCBD, Want: "true", Got: "false",
				Detail: "inherited from " + chainTop + ", which depends on it"}
		}
		return nil
	}
	rec.Check(carried, r.both(ctx, carriedOn), "on both sides, after "+chainMid+" was replaced")
	if err := write(chainFile(r, 1, 0, false)); err != nil {
		return err
	}
	planTrimmed := func(ctx context.Context, sd *Side) (*engine.Plan, error) {
		p, err := sd.plan(ctx, planDefaults())
		if d := callDiagnostic(err); d != "" {
			return nil, &result.Finding{Address: "(the plan)", Field: fieldPlanError, Want: "a plan", Got: planErrorSummary(d), Detail: d}
		}
		if err != nil {
			return nil, measure(sd, "plan", err)
		}
		return p, trimmedShape(p)
	}
	errs, _ := gather(ctx, r, func(ctx context.Context, sd *Side) (error, error) {
		_, err := planTrimmed(ctx, sd)
		return err, nil
	})
	rec.Check(trimmed, sides(trimmed, errs["subject"], errs["oracle"]), "on both sides")
	rec.Claim([]string{carried}, "%s, replaced, still carries the create_before_destroy it inherits from %s (which depends on it) in both states", chainMid, chainTop)

	// The flag cleared from mid's state, as the engines before 1.10 left
	// it: the state check must see it, and the trimmed plan must fail
	// with the cycle users hit.
	r.breakBoth(ctx, rec, Breaking{Name: "inherited_flag_dropped", Corruption: "clears create_before_destroy from " + chainMid + " in the state (state push)",
		Victim: chainMid, Covers: []string{carried, trimmed},
		Predict: []result.Prediction{{Address: chainMid, Field: fieldStateCBD, Got: "false"}, {Address: "(the plan)", Field: fieldPlanError, Got: "Error: Cycle"}}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			orig, err := sd.Engine.StatePull(ctx)
			if err != nil {
				return nil, err
			}
			if err := corrupt(ctx, func() error {
				doc, err := rawstate.SetCreateBeforeDestroy(orig, chainMid, false)
				if err != nil {
					return err
				}
				_, err = sd.Engine.StatePush(ctx, doc)
				return err
			}); err != nil {
				return nil, err
			}
			m := Measured{carried: carriedOn(ctx, sd)}
			_, m[trimmed] = planTrimmed(ctx, sd)
			return undoing(m, nil, func() error {
				_, err := sd.Engine.StatePush(ctx, orig)
				return err
			})
		})
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		// A side that cannot apply the trimmed chain (the cycle) would
		// fail every later plan: the chain leaves its state and cluster
		// by hand, and the stage ends with what it found.
		if derr := r.dropChain(ctx); derr != nil {
			return errors.Join(err, derr)
		}
		rec.Say("the trimmed chain was not applied on both sides, so its objects were taken out of both states (state rm) and deleted out of band, and later stages see the estate alone")
		return err
	}
	oldBase, newBase := chainObject(r, "base", 0), chainObject(r, "base", 1)
	if err := r.checkReplaced(ctx, rec, alone, oldBase, newBase); err != nil {
		return err
	}
	r.CheckPlanEmpty(ctx, rec, next, newBase)
	rec.Claim([]string{trimmed, alone, next}, "trimmed to a new base alone, the plan replaces %s create first and destroys %s and %s on both sides; %s alone remains and the next plan is empty",
		chainBase, chainMid, chainTop, newBase.Ref.Name)
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error { return sd.Root.RemoveFile(cbdChainFileName) }); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	rec.Say("the chain is removed from both roots afterwards")
	return nil
}

// dropChain takes the chain out of each side's state and cluster
// without the engine's plan, and removes its file.
func (r *Run) dropChain(ctx context.Context) error {
	return r.both(ctx, func(ctx context.Context, sd *Side) error {
		if err := sd.Root.RemoveFile(cbdChainFileName); err != nil {
			return err
		}
		addrs, err := sd.Engine.StateList(ctx)
		if err != nil {
			return err
		}
		var in []string
		for _, a := range addrs {
			if a == chainBase || a == chainMid || a == chainTop {
				in = append(in, a)
			}
		}
		if len(in) > 0 {
			if _, err := sd.Engine.StateRm(ctx, in...); err != nil {
				return err
			}
		}
		for _, o := range []Object{chainObject(r, "base", 0), chainObject(r, "base", 1), chainObject(r, "mid", 0), chainObject(r, "mid", 1), chainObject(r, "top", 0)} {
			// Delete takes a missing object as gone.
			if err := sd.Delete(ctx, o.Ref); err != nil {
				return err
			}
		}
		return nil
	})
}

// trimmedShape asserts the trimmed chain's plan: base replaced create
// first, mid and top destroyed, nothing else.
func trimmedShape(p *engine.Plan) error {
	return exactly(p, map[string]string{chainBase: "create+delete", chainMid: "delete", chainTop: "delete"})
}

// callDiagnostic is the first diagnostic a failed engine call printed,
// whole, or "" when err is no engine call's failure or printed none.
func callDiagnostic(err error) string {
	if ce := (*engine.CallError)(nil); errors.As(err, &ce) {
		if d := ce.Diagnostics(); len(d) > 0 {
			return d[0]
		}
	}
	return ""
}

// planErrorSummary is a diagnostic's first line up to its own colon:
// "Error: Cycle: a, b" -> "Error: Cycle", what a prediction can name. A
// boxed diagnostic's frame is left out.
func planErrorSummary(d string) string {
	for _, l := range strings.Split(d, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "│"))
		if l == "" || l == "╷" {
			continue
		}
		kind, rest, ok := strings.Cut(l, ": ")
		if !ok {
			return l
		}
		summary, _, _ := strings.Cut(rest, ":")
		return kind + ": " + strings.TrimSpace(summary)
	}
	return ""
}

// chainFile is the chain at base version b and mid version m; with
// whole, mid and top are there too.
func chainFile(r *Run, b, m int, whole bool) string {
	tf := fmt.Sprintf(`# Written by gauntlet's create_before_destroy chain stage.
resource "kubernetes_config_map_v1" "chain_base" {
  metadata {
    name      = "%[1]s-chain-base-%[3]d"
    namespace = %[2]q
  }
  data = {
    version = "%[3]d"
  }
  lifecycle {
    create_before_destroy = true
  }
}
`, r.Spec.Prefix, r.Spec.Namespace, b)
	if !whole {
		return tf
	}
	return tf + fmt.Sprintf(`
resource "kubernetes_config_map_v1" "chain_mid" {
  metadata {
    name      = "%[1]s-chain-mid-%[3]d"
    namespace = %[2]q
  }
  data = {
    base = kubernetes_config_map_v1.chain_base.metadata[0].name
  }
}

resource "kubernetes_config_map_v1" "chain_top" {
  metadata {
    name      = "%[1]s-chain-top-0"
    namespace = %[2]q
  }
  data = {
    role = "top"
  }
  depends_on = [kubernetes_config_map_v1.chain_mid]
  lifecycle {
    create_before_destroy = true
  }
}
`, r.Spec.Prefix, r.Spec.Namespace, m)
}

// chainObject is the chain's ConfigMap of role at version v.
func chainObject(r *Run, role string, v int) Object {
	o := countedObject(r, "chain-"+role, v)
	o.Address = "kubernetes_config_map_v1.chain_" + role
	return o
}
