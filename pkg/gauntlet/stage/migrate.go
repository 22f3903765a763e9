package stage

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

func migrate() Stage {
	return &migrateStage{info{id: "migrate", title: "Migrate", headline: true, reqs: []string{"GAUNT-MIG-01"}, after: []string{"cold_deploy"}}}
}

type migrateStage struct{ info }

// Run has each side's engine take over the stock state in its root: the
// engine under test adopts terraform's state file on the subject cluster.
func (s *migrateStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	lists := map[string][]string{}
	if err := r.both(ctx, func(ctx context.Context, sd *Side) error {
		if _, err := sd.Engine.Init(ctx); err != nil {
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
	var accounted error
	if got := kubernetesOnly(lists["subject"]); !slices.Equal(got, want) {
		accounted = fmt.Errorf("%s lists %v, the stock state held %v", r.Subject.Engine.Engine.Profile.Name, got, want)
	}
	rec.Check("every stock address accounted for", accounted, fmt.Sprintf("%d of %d addresses listed by name", len(want), len(want)))
	subj, orc, err := r.planBoth(ctx, planDefaults())
	if err != nil {
		return err
	}
	if !rec.Check("plan is empty", empty(subj), "the engine's first plan over the stock state proposes nothing") {
		return nil
	}
	rec.Check("same as the oracle", sameShape(subj, orc), "the oracle's own plan is empty too")
	rec.Say("%s took over %s's state on the subject cluster: %d of %d addresses accounted for by name (%s), and its first plan is empty (%s), as stock's is on the oracle cluster",
		r.Subject.Engine.Engine.Profile, r.Subject.Stock.Engine.Profile, len(want), len(want), strings.Join(want, ", "), subj.Counts)

	victim := r.Objects[0].Address
	return rec.Break("state_rm", "removes "+victim+" from the adopted state", func() (error, error) {
		p, err := r.planUnbound(ctx, victim)
		if err != nil {
			return nil, err
		}
		return empty(p), nil
	})
}

func kubernetesOnly(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		if strings.HasPrefix(a, "kubernetes_") {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}
