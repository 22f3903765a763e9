package conformance

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Need is a cell the registry requires that has no proof at the tree's
// inputs now: a run of Estate on Substrate with the pinned engine and
// oracle would prove (or fail) it again.
type Need struct {
	Estate    string `json:"estate"`
	Substrate string `json:"substrate"`
	// Missing: no run of the pair is recorded for some stage the cell
	// needs; otherwise every such run is about another tree (stale).
	Missing bool   `json:"missing"`
	Why     string `json:"why"`
}

// Name is the cell as sharding sorts it, "estate/substrate".
func (n Need) Name() string { return n.Estate + "/" + n.Substrate }

// StaleCells lists the required cells (estate x substrate, with the pinned
// engine and oracle) where a stage that verifies a requirement there has
// no recorded run at the tree's inputs now - never recorded, or recorded
// from inputs that have changed - sorted by name. A cell whose run at the
// current inputs failed is not listed: running it again at the same inputs
// proves nothing new (a later pass would be a flake, not a proof).
func StaleCells(w World, l *Ledger) ([]Need, error) {
	type pair struct{ estate, substrate string }
	stages := map[pair]map[string]bool{}
	// reqs are the requirements that want a stage in a cell: a run of it
	// is fresh only under each one's registry entry now, as status judges.
	type at struct {
		pair
		stage string
	}
	reqs := map[at][]Requirement{}
	for _, q := range w.Registry.Requirements {
		for _, e := range q.Estates {
			for _, s := range q.Substrates {
				p := pair{e, s}
				if stages[p] == nil {
					stages[p] = map[string]bool{}
				}
				for _, st := range w.Coverage.Stages[q.ID] {
					stages[p][st] = true
					reqs[at{p, st}] = append(reqs[at{p, st}], q)
				}
			}
		}
	}
	var needs []Need
	for p, want := range stages {
		if len(want) == 0 {
			continue
		}
		now, err := w.Current.Inputs(p.estate, p.substrate, nil)
		if err != nil {
			return nil, fmt.Errorf("cell %s on %s: %w", p.estate, p.substrate, err)
		}
		var missing, stale []string
		staleWhy := ""
		for _, st := range slices.Sorted(maps.Keys(want)) {
			var ran []Row
			fresh := false
			for _, r := range l.Rows {
				if r.Estate != p.estate || r.Substrate != p.substrate || r.Stage != st || !w.Engine.Matches(r.Engine) || !w.Oracle.Matches(r.Oracle) {
					continue
				}
				ran = append(ran, r)
				if in := l.Inputs[r.Run]; in != nil && len(staleBecause(in, now, reqs[at{p, st}]...)) == 0 {
					fresh = true
				}
			}
			switch {
			case len(ran) == 0:
				missing = append(missing, st)
			case !fresh:
				stale = append(stale, st)
				if staleWhy == "" {
					last := ran[len(ran)-1]
					staleWhy = fmt.Sprintf("run %s is about another tree: changed since: %s", last.Run, summarise(staleBecause(l.Inputs[last.Run], now, reqs[at{p, st}]...)))
				}
			}
		}
		switch {
		case len(missing) > 0:
			needs = append(needs, Need{Estate: p.estate, Substrate: p.substrate, Missing: true,
				Why: fmt.Sprintf("no run with the pinned %s %s and %s %s recorded for %s", w.Engine.Name, w.Engine.Version, w.Oracle.Name, w.Oracle.Version, strings.Join(missing, ", "))})
		case len(stale) > 0:
			needs = append(needs, Need{Estate: p.estate, Substrate: p.substrate,
				Why: fmt.Sprintf("stale for %s: %s", strings.Join(stale, ", "), staleWhy)})
		}
	}
	// Then every other cell the gates require that a run would renew: a
	// requirement's cell required because a run claimed it (not only
	// because the registry lists it), and every estate cell - so what
	// `status --require-all` waits for is exactly what this re-proves.
	rep, err := Derive(w, l)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, n := range needs {
		listed[n.Name()] = true
	}
	add := func(n Need) {
		if !listed[n.Name()] {
			listed[n.Name()] = true
			needs = append(needs, n)
		}
	}
	for _, st := range rep.Requirements {
		for _, cp := range st.Cells {
			if cp.Required && cp.Proof == Stale {
				add(Need{Estate: cp.Cell.Estate, Substrate: cp.Cell.Substrate, Why: "stale for " + st.ID + ": " + cp.Why})
			}
		}
	}
	for _, e := range rep.Estates {
		switch {
		case !e.Required:
		case e.Run == "":
			add(Need{Estate: e.Estate, Substrate: e.Substrate, Missing: true, Why: "the estate's own cell: " + e.Why})
		case e.Proof == Stale:
			add(Need{Estate: e.Estate, Substrate: e.Substrate, Why: "the estate's own cell: " + e.Why})
		}
	}
	sort.Slice(needs, func(i, j int) bool { return needs[i].Name() < needs[j].Name() })
	return needs, nil
}

// staleBecause lists why a run recorded with inputs then is no proof of
// qs now: a registry entry of one of them changed since (see
// RequirementChanged), or something the run ran did (see Changed). Empty
// means it still speaks for them.
func staleBecause(then, now *Inputs, qs ...Requirement) []string {
	var out []string
	for _, q := range qs {
		if why := RequirementChanged(then, q); why != "" {
			out = append(out, why)
		}
	}
	return append(out, Changed(then, now)...)
}
