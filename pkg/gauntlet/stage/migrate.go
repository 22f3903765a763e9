package stage

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func migrate() Stage {
	return &migrateStage{Described{Info{ID: "migrate", Title: "Migrate", Headline: true, Requirements: []string{"GAUNT-MIG-01"}, RecordsRequirements: []string{"GAUNT-RECORDS-01"}, After: []string{"cold_deploy"}}}}
}

type migrateStage struct{ Described }

// Run has each side's engine take over the stock state in its root: the
// engine under test adopts terraform's state file on the subject cluster.
//
// An estate on the kubernetes backend was cold-deployed on local state:
// here each side's engine moves every root's state into the cluster with
// its own init -migrate-state, in apply order, and acts on every root
// from then on.
func (s *migrateStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	lists := map[string][]string{}
	moved := map[string]map[string]*recordstore.Record{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if r.RecordsEstate() {
			local, err := sd.migrateRecords(ctx)
			if err != nil {
				return err
			}
			r.noteLocal(sd.Name, local)
			r.mu.Lock()
			moved[sd.Name] = local
			r.mu.Unlock()
		}
		if err := sd.initEngine(ctx); err != nil {
			return err
		}
		l, err := sd.Engine.StateList(ctx)
		r.mu.Lock()
		lists[sd.Name] = l
		r.mu.Unlock()
		return err
	}); err != nil {
		return err
	}
	var want []string
	for _, o := range r.Objects {
		want = append(want, o.Address)
	}
	slices.Sort(want)
	const (
		accounted = "every stock address accounted for"
		isEmpty   = "plan is empty"
		same      = "same as the oracle"
	)
	accountFor := func(list []string) error { return missingFrom(kubernetesOnly(list), want) }
	rec.Check(accounted, r.both(ctx, func(ctx context.Context, sd *Side) error { return accountFor(lists[sd.Name]) }),
		fmt.Sprintf("%d of %d addresses listed by name on both sides", len(want), len(want)))
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	plans := map[string]*engine.Plan{"subject": subj, "oracle": orc}
	rec.Check(isEmpty, sides(isEmpty, empty(subj), empty(orc)), "the engine's first plan over the stock state proposes nothing, nor does stock's")
	rec.Check(same, onSubject(sameShape(subj, orc)), "the oracle's own plan is the same")
	rec.Claim([]string{accounted, isEmpty, same}, "%s took over %s's state on the subject cluster: %d of %d addresses accounted for by name (%s), and its first plan is empty (%s), as stock's is on the oracle cluster",
		r.Subject.Engine.Engine.Profile, r.Subject.Stock.Engine.Profile, len(want), len(want), strings.Join(want, ", "), subj.Counts)
	if r.RecordsEstate() {
		var roots []string
		for _, rr := range r.Subject.recordRoots() {
			if l := moved["subject"][rr.name]; l != nil {
				roots = append(roots, fmt.Sprintf("%s (%d addresses, serial %d) into %s", rr.name, len(l.Managed), l.Serial, rr.store))
			}
		}
		rec.Say("each side's engine moved every root's local state into the cluster with init -migrate-state -force-copy, in apply order: %s; the local files the move leaves behind were set aside out of the roots",
			strings.Join(roots, ", "))
	}

	victim := r.Objects[0].Address
	r.breakBoth(ctx, rec, Breaking{Name: "state_rm", Corruption: "removes " + victim + " from the adopted state",
		Victim: victim, Covers: []string{accounted, isEmpty, same},
		Predict: []result.Prediction{{Check: accounted, Address: victim, Field: fieldState, Got: absent}, {Check: isEmpty, Address: victim, Field: fieldPlan, Got: "create"}, {Check: same, Address: victim, Field: fieldPlan, Got: "create"}}}, func(ctx context.Context, sd *Side) (Measured, error) {
		return sd.unbound(ctx, victim, func() (Measured, error) {
			l, err := sd.Engine.StateList(ctx)
			if err != nil {
				return nil, err
			}
			p, err := sd.plan(ctx, planDefaults())
			if err != nil {
				return nil, err
			}
			return Measured{accounted: accountFor(l), isEmpty: empty(p), same: sameShape(p, plans[otherSide(sd)])}, nil
		})
	})
	return nil
}

// otherSide names the side a comparison measures against.
func otherSide(sd *Side) string {
	if sd.Name == "subject" {
		return "oracle"
	}
	return "subject"
}

// missingFrom names every wanted address the list lacks or adds.
func missingFrom(got, want []string) error {
	var fs []*result.Finding
	for _, w := range want {
		if !slices.Contains(got, w) {
			fs = append(fs, &result.Finding{Address: w, Field: fieldState, Want: present, Got: absent})
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fs = append(fs, &result.Finding{Address: g, Field: fieldState, Want: absent, Got: present})
		}
	}
	return result.Findings(fs...)
}

func kubernetesOnly(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		if isKubernetes(a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// modulePath matches the module.NAME[KEY]. prefixes of a resource address.
var modulePath = regexp.MustCompile(`^(module\.[^.\[]+(\[[^\]]*\])?\.)*`)

// isKubernetes says whether an address (or an "address: action" line) is
// a managed resource of the kubernetes provider, in any module: the
// objects the stages follow. Other providers' resources (a null_resource,
// a terraform_data) hold no cluster object.
func isKubernetes(addr string) bool {
	return strings.HasPrefix(modulePath.ReplaceAllString(addr, ""), "kubernetes_")
}

// splitActed parts an apply's acted lines into the kubernetes provider's
// and the rest.
func splitActed(acted []string) (kube, other []string) {
	for _, a := range acted {
		if isKubernetes(a) {
			kube = append(kube, a)
		} else {
			other = append(other, a)
		}
	}
	return kube, other
}
