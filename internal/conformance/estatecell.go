package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// EstateCell is an estate's own cell: one substrate, the pinned pair. It
// is proven by its latest recorded run when that run is at the tree's
// inputs now and is everything the estate's estate.yaml expects - every
// stage passed and backed, or not run, not applicable or failing exactly
// where estate.yaml says so. A stage the estate cannot run proves nothing
// there and fails nothing; Proves names what the run did prove.
type EstateCell struct {
	Estate    string `json:"estate"`
	Substrate string `json:"substrate"`
	Proof     Proof  `json:"proof"`
	Why       string `json:"why"`
	// Run is the latest recorded run of the cell ("" when none).
	Run string `json:"run,omitempty"`
	// Required: the registry's every_estate names the substrate, or the
	// cell's latest run failed - a failure is cleared only by a later run
	// of the same cell that does not fail, never by narrowing where a
	// requirement must hold or by estate.yaml declining the stage.
	Required bool `json:"required"`
	// Proves lists the requirements this cell proves.
	Proves []string `json:"proves,omitempty"`
}

// ran reports whether a stage's verdict says it ran and was judged on the
// engine: a pass or a fail.
func ran(v result.Verdict) bool {
	return v != result.NotRun && v != result.NotApplicable && v != result.Limitation
}

// estateCells judges every estate cell: each estate of the corpus on each
// every_estate substrate, and every other recorded cell of the pinned pair.
func estateCells(w World, l *Ledger, cells []Cell, byCell map[Cell][]Row, current func(string, string, []Row) (*Inputs, error), reqs []Status) []EstateCell {
	type pair struct{ estate, substrate string }
	var order []pair
	rowsOf := map[pair][]Row{}
	for _, c := range cells {
		rows := byCell[c]
		if !w.Engine.Matches(rows[0].Engine) || !w.Oracle.Matches(rows[0].Oracle) {
			continue
		}
		p := pair{c.Estate, c.Substrate}
		if rowsOf[p] == nil {
			order = append(order, p)
		}
		rowsOf[p] = append(rowsOf[p], rows...)
	}
	every := map[pair]bool{}
	for _, e := range w.Estates {
		for _, s := range w.Registry.EveryEstate.Substrates {
			p := pair{e, s}
			every[p] = true
			if rowsOf[p] == nil {
				order = append(order, p)
			}
		}
	}
	slices.SortFunc(order, func(a, b pair) int {
		return strings.Compare(a.estate+"/"+a.substrate, b.estate+"/"+b.substrate)
	})
	var out []EstateCell
	for _, p := range order {
		ec := EstateCell{Estate: p.estate, Substrate: p.substrate, Required: every[p]}
		rows := rowsOf[p]
		if len(rows) == 0 {
			ec.Proof = NotRun
			ec.Why = fmt.Sprintf("no run of %s on %s with the pinned %s %s and %s %s is recorded: `gauntlet record --stale` records it",
				p.estate, p.substrate, w.Engine.Name, w.Engine.Version, w.Oracle.Name, w.Oracle.Version)
			out = append(out, ec)
			continue
		}
		ec.Run = rows[len(rows)-1].Run
		var latest []Row
		for _, r := range rows {
			if r.Run == ec.Run {
				latest = append(latest, r)
			}
		}
		problems, err := judge(w, p.estate, ec.Run, latest)
		now, nerr := current(p.estate, p.substrate, latest)
		var changed []string
		if then := l.Inputs[ec.Run]; nerr != nil || then == nil {
			changed = []string{"the estate is gone"}
		} else {
			changed = Changed(then, now)
		}
		switch {
		case err != nil && len(changed) == 0:
			ec.Proof, ec.Why = Failed, fmt.Sprintf("run %s cannot be judged: %v", ec.Run, err)
		case len(problems) > 0:
			// Failed, fresh or stale: it stays until a later run clears it.
			ec.Proof, ec.Required = Failed, ec.Required || nerr == nil
			ec.Why = fmt.Sprintf("run %s is not what estate.yaml expects: %s", ec.Run, strings.Join(problems, "; "))
			if len(changed) > 0 {
				ec.Why += " (recorded at another tree: re-prove it, `gauntlet record --stale`)"
			}
		case len(changed) > 0:
			ec.Proof, ec.Why = Stale, fmt.Sprintf("run %s is about another tree: changed since: %s", ec.Run, summarise(changed))
		default:
			ec.Proof = Proven
			ec.Why = fmt.Sprintf("run %s: every stage is what estate.yaml expects", ec.Run)
		}
		if ec.Proof == Proven {
			for _, st := range reqs {
				for _, cp := range st.Cells {
					if cp.Required && cp.Proof == Proven && cp.Cell.Estate == p.estate && cp.Cell.Substrate == p.substrate {
						ec.Proves = append(ec.Proves, st.ID)
						break
					}
				}
			}
		}
		out = append(out, ec)
	}
	return out
}

// judge asks w.Judge about a run, or judges its rows when there is none:
// every stage passed with its checks backed, or did not run.
func judge(w World, estate, run string, rows []Row) ([]string, error) {
	if w.Judge != nil {
		return w.Judge(estate, run)
	}
	var out []string
	for _, r := range rows {
		if why := failing(r); why != "" {
			out = append(out, r.Stage+": "+why)
		} else if r.Verdict == result.Limitation {
			out = append(out, r.Stage+": a limitation")
		}
	}
	return out, nil
}

// EveryEstateSubstrates are the substrates of the required estate cells.
func (r *Report) EveryEstateSubstrates() []string {
	var out []string
	for _, e := range r.Estates {
		if e.Required && !slices.Contains(out, e.Substrate) {
			out = append(out, e.Substrate)
		}
	}
	return out
}
