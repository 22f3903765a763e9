package stage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/identity"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	tfjson "github.com/hashicorp/terraform-json"
)

const (
	crashRenameFile = "gauntlet_crash_rename.tf"
	crashRenameAddr = "kubernetes_config_map_v1.crash_rename"
)

// renameWindow interrupts a create_before_destroy replace in its window:
// the new object's create has committed, the old one is not yet destroyed.
// Both must exist, the state must hold the old one as the address's
// deposed object, the replan must destroy exactly that deposed object (as
// stock's does from the same position), and one apply must leave the new
// object alone with the next plan empty.
func (s *crashStage) renameWindow(ctx context.Context, r *Run, rec *Recorder) error {
	oldObj, newObj := crashRenameObject(r, "a"), crashRenameObject(r, "b")
	write := func(suffix string) error {
		return r.both(ctx, func(ctx context.Context, sd *Side) error {
			return sd.Root.WriteFile(crashRenameFile, crashRenameTF(r, suffix))
		})
	}
	if err := write("a"); err != nil {
		return err
	}
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	if err := write("b"); err != nil {
		return err
	}
	exits, err := gather(ctx, r, func(ctx context.Context, sd *Side) (interrupted, error) {
		return interruptedApply(ctx, sd, wire.Match{Verb: "create", Resource: "configmaps", Namespace: newObj.Ref.Namespace, Name: newObj.Ref.Name}, newObj.Ref)
	})
	if err != nil {
		return err
	}
	const (
		window   = "the interrupted replace leaves both objects, the old one deposed in state"
		deposed  = "the replan destroys exactly the deposed object"
		same     = "the replan is the same as the oracle's"
		finished = "one apply leaves the new object alone"
		next     = "the plan after it is empty"
	)
	inWindow := func(ctx context.Context, sd *Side) error {
		if err := exits[sd.Name].taken(sd.Name); err != nil {
			return err
		}
		var fs []error
		for _, o := range []Object{oldObj, newObj} {
			u, err := sd.Get(ctx, o.Ref)
			if err != nil {
				return err
			}
			if !exists(u) {
				fs = append(fs, &result.Finding{Address: o.Address, Object: o.Ref.String(), Field: fieldExists, Want: present, Got: absent})
			}
		}
		st, err := sd.Engine.State(ctx)
		if err != nil {
			return measure(sd, "state", err)
		}
		return errors.Join(append(fs, deposedIs(st, oldObj.Ref.Name))...)
	}
	rec.Check(window, r.both(ctx, inWindow), fmt.Sprintf("exit %d on the subject, %d on the oracle", exits["subject"].exit, exits["oracle"].exit))
	r.breakBoth(ctx, rec, Breaking{Name: "old_gone", Corruption: "deletes the old " + oldObj.Ref.String() + " out of band",
		Victim: oldObj.Ref.String(), Covers: []string{window}, Predict: []result.Prediction{existsPredict(oldObj, absent)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, oldObj.Ref, func() (Measured, error) { return one(window, inWindow(ctx, sd)), nil })
	})
	destroysDeposed := func(p *engine.Plan) error {
		got := planActions(p)
		var fs []*result.Finding
		if got[deposedAddr] != "delete" {
			fs = append(fs, planFinding(deposedAddr, "delete", got[deposedAddr]))
		}
		for addr, act := range got {
			if addr != deposedAddr {
				fs = append(fs, planFinding(addr, "", act))
			}
		}
		if len(fs) == 0 && (p.Counts != engine.Counts{Destroy: 1}) {
			fs = append(fs, &result.Finding{Address: deposedAddr, Field: fieldPlanCounts, Want: "1 to destroy", Got: p.Counts.String()})
		}
		sortFindings(fs)
		return result.Findings(fs...)
	}
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	rec.Check(deposed, sides(deposed, destroysDeposed(subj), destroysDeposed(orc)), subj.Counts.String())
	rec.Check(same, onSubject(sameShape(subj, orc)), "")
	r.breakBoth(ctx, rec, Breaking{Name: "deposed_gone", Corruption: "deletes the deposed " + oldObj.Ref.String() + " out of band before the replan",
		Victim: crashRenameAddr, Covers: []string{deposed, same}, Predict: []result.Prediction{planPredict(deposedAddr, nothing)}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.deleted(ctx, oldObj.Ref, func() (Measured, error) {
			p, err := sd.plan(ctx, planDefaults())
			if err != nil {
				return nil, err
			}
			return Measured{deposed: destroysDeposed(p), same: sameShape(p, plans[otherSide(sd)])}, nil
		})
	})
	if _, _, err := r.applyBoth(ctx, engine.ApplyOptions{}); err != nil {
		return err
	}
	if err := r.checkReplaced(ctx, rec, finished, oldObj, newObj); err != nil {
		return err
	}
	r.Objects = append(r.Objects, newObj)
	r.CheckPlanEmpty(ctx, rec, next, newObj)
	rec.Claim([]string{window, deposed, same, finished, next}, "the create_before_destroy rename window was interrupted too: %s renamed %s -> %s was killed by SIGTERM the instant the new object's create response went out (exit %d), leaving both objects and the old one deposed in state; the replan destroyed exactly the deposed object (%s), as stock's did from the same position, and one apply left %s alone with the next plan empty",
		crashRenameAddr, oldObj.Ref.Name, newObj.Ref.Name, exits["subject"].exit, subj.Counts, newObj.Ref.Name)
	return nil
}

// deposedIs asserts the state holds exactly one deposed object, named name.
func deposedIs(st *tfjson.State, name string) error {
	var deposed []string
	if st != nil && st.Values != nil && st.Values.RootModule != nil {
		for _, res := range st.Values.RootModule.Resources {
			if res.Address == crashRenameAddr && res.DeposedKey != "" {
				o, _, _ := identity.Of(res.Address, res.Type, res.AttributeValues)
				deposed = append(deposed, o.Name)
			}
		}
	}
	if len(deposed) != 1 || deposed[0] != name {
		got := strings.Join(deposed, ", ")
		if got == "" {
			got = nothing
		}
		return &result.Finding{Address: crashRenameAddr, Field: "deposed objects in state", Want: name, Got: got}
	}
	return nil
}

// crashRenameTF is a create_before_destroy ConfigMap whose name ends in
// suffix: a change of suffix is a replace, create first.
func crashRenameTF(r *Run, suffix string) string {
	return fmt.Sprintf(`# Written by gauntlet's crash stage (the create_before_destroy window).
resource "kubernetes_config_map_v1" "crash_rename" {
  metadata {
    name      = "%s-crash-rename-%s"
    namespace = %q
  }
  data = {
    window = "create_before_destroy"
  }
  lifecycle {
    create_before_destroy = true
  }
}
`, r.Spec.Prefix, suffix, r.Spec.Namespace)
}

func crashRenameObject(r *Run, suffix string) Object {
	return Object{Address: crashRenameAddr, Type: "kubernetes_config_map_v1", Ref: estate.Object{
		Version: "v1", Kind: "ConfigMap", Namespace: r.Spec.Namespace, Name: r.Spec.Prefix + "-crash-rename-" + suffix}}
}

// deposedAddr is the crash rename's deposed object as planActions names
// it (its random key aside).
const deposedAddr = crashRenameAddr + " (deposed object)"

// deposedKey matches the random key of a deposed object in an address.
var deposedKey = regexp.MustCompile(`\(deposed object [0-9a-f]+\)`)
