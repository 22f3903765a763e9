package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Proof is how far a requirement is proven in a cell, right now.
type Proof string

const (
	// Proven: every check of every stage verifying it passed, each backed
	// by a BREAK that made it fail (or a stated reason none exists), in a
	// run whose inputs are byte for byte the tree's now.
	Proven Proof = "proven"
	// Partial: it passed, but some of its checks did not run here (e.g.
	// the APIService checks on a substrate without containers).
	Partial Proof = "partial"
	// NotRun: no recorded run in the cell, or the run did not run it.
	NotRun Proof = "not-run"
	// Unprovable: no pinned engine has a capability a verifying stage
	// needs (live mode): no run here can prove it.
	Unprovable Proof = "unprovable"
	// Unbacked: it passed, but some check passed without a BREAK proving
	// it - a run recorded before check-level proof.
	Unbacked Proof = "unbacked"
	// Stale: a run proved or ran it, but something it ran has changed.
	Stale Proof = "stale"
	// Failed: a run with the tree's current inputs failed it. A later
	// pass at the same inputs does not hide it (a flaky check is not a
	// proof); a change that makes it pass makes the failure stale.
	Failed Proof = "failed"
)

// rank orders proofs worst first: a requirement is as proven as its
// weakest stage and its weakest required cell.
var rank = map[Proof]int{Failed: 0, Stale: 1, Unbacked: 2, Partial: 3, Unprovable: 4, NotRun: 5, Proven: 6}

// Blocking reports whether the proof fails a gate outright (exit 1);
// Partial, NotRun and Unprovable only keep it waiting (exit 4).
func (p Proof) Blocking() bool { return p == Failed || p == Stale || p == Unbacked }

// Cell is where a proof holds: estate, substrate, engine and oracle.
type Cell struct {
	Estate    string `json:"estate"`
	Substrate string `json:"substrate"`
	Engine    string `json:"engine"`
	Oracle    string `json:"oracle"`
}

func (c Cell) String() string {
	return c.Estate + " / " + c.Substrate + " / " + c.Engine + " / " + c.Oracle
}

// CellProof is a requirement's proof in one cell.
type CellProof struct {
	Cell  Cell   `json:"cell"`
	Proof Proof  `json:"proof"`
	Why   string `json:"why"`
	// Required: the pinned engine and oracle on one of the requirement's
	// substrates, for an estate that exercises it - one the registry
	// lists, or one whose recorded run claimed it in a verifying stage
	// and does not decline it. Other cells are shown and never count.
	Required bool `json:"required"`
	// Declined is why the estate's estate.yaml says the verifying stages
	// do not apply to it (a skip, a section it does not declare).
	Declined string `json:"declined,omitempty"`
}

// EstateProof is a requirement's proof on one estate: its worst required
// cell, or why none is required there.
type EstateProof struct {
	Estate string `json:"estate"`
	Proof  Proof  `json:"proof"`
	Why    string `json:"why"`
	// Required: the estate exercises the requirement (see CellProof).
	Required bool `json:"required"`
}

// Status is one requirement's derived state.
type Status struct {
	ID        string      `json:"id"`
	Statement string      `json:"statement"`
	Gap       string      `json:"gap,omitempty"`
	Stages    []string    `json:"stages"`
	Proof     Proof       `json:"proof"`
	Why       string      `json:"why"`
	Cells     []CellProof `json:"cells"`
	// Estates is the requirement across every estate: the corpus's, the
	// registry's and every recorded one.
	Estates []EstateProof `json:"estates"`
}

// PinnedCLI is a CLI as the pins name it.
type PinnedCLI struct {
	Name, Version string
	// SHA256 is the exact binary when the pin has it (a reproducible build).
	SHA256 string
}

// Matches reports whether an identity is this pin: pinned, the version,
// a hashed binary, and the pinned hash when there is one.
func (p PinnedCLI) Matches(i Identity) bool {
	return i.Pinned != "" && i.Name == p.Name && i.Version == p.Version && i.Pinned == p.Version && i.SHA256 != "" &&
		(p.SHA256 == "" || p.SHA256 == i.SHA256)
}

func (p PinnedCLI) String() string { return p.Name + " " + p.Version + " (pinned)" }

// Current answers what a run would run from the tree now.
type Current interface {
	// Inputs of a run on estate and substrate; clis are the pin keys of
	// its two engines (none: today's pinned pair).
	Inputs(estate, substrate string, stages []string, clis ...string) (*Inputs, error)
	// CLIKey names the pin an engine identity came from, "" if none.
	CLIKey(engine, version string) string
}

// World is everything Derive reads besides the ledger.
type World struct {
	Registry *Registry
	Coverage Coverage
	// Needs maps a stage to the subject capabilities it needs.
	Needs map[string][]string
	// SubjectHas reports whether the pinned subject has a capability.
	SubjectHas     func(capability string) bool
	Engine, Oracle PinnedCLI
	Current        Current
	// Estates are the corpus's estates, each shown for every requirement
	// even before its first recorded run.
	Estates []string
	// Declines says why an estate's estate.yaml declares that a stage
	// does not apply to it, or "" (nil: no estate declines anything).
	Declines func(estate, stage string) string
	// Judge lists what in a recorded run of an estate is not what its
	// estate.yaml expects now (expect.Judge on the run folder's run.json),
	// one line each; none when it is. nil: a run is judged by its rows
	// alone (every stage passed, was not run or not applicable).
	Judge func(estate, run string) ([]string, error)
}

// declined says why estate declines every stage verifying a requirement,
// or "" when one of them applies to it.
func (w World) declined(estate string, stages []string) string {
	if w.Declines == nil || len(stages) == 0 {
		return ""
	}
	var why []string
	for _, s := range stages {
		d := w.Declines(estate, s)
		if d == "" {
			return ""
		}
		why = append(why, s+": "+d)
	}
	return strings.Join(why, "; ")
}

// Report is the derived state of every requirement.
type Report struct {
	Requirements []Status `json:"requirements"`
	// Estates are the estate cells: every estate on every substrate of the
	// registry's every_estate, and each other cell of the pinned pair whose
	// latest run is not what its estate expects.
	Estates []EstateCell `json:"estates"`
	// Columns are the cells of the matrix, required ones first.
	Columns  []Cell    `json:"columns"`
	Problems []Problem `json:"ledger_problems"`
	Rows     int       `json:"ledger_rows"`
	History  int       `json:"history_rows"`
}

// Derive computes every requirement's proof in every cell from the
// verified ledger.
func Derive(w World, l *Ledger) (*Report, error) {
	rep := &Report{Problems: l.Problems, Rows: len(l.Rows), History: len(l.History)}
	type key struct{ estate, substrate, clis string }
	now := map[key]*Inputs{}
	// A cell's inputs now are those of a run of its estate on its
	// substrate with the same two engine pins: another engine version's
	// cell is stale when its own pin moves, not when today's does.
	current := func(estate, substrate string, rows []Row) (*Inputs, error) {
		var clis []string
		if len(rows) > 0 {
			e := w.Current.CLIKey(rows[0].Engine.Name, rows[0].Engine.Pinned)
			o := w.Current.CLIKey(rows[0].Oracle.Name, rows[0].Oracle.Pinned)
			// Today's pair is what Inputs takes when given none.
			today := strings.HasPrefix(e, "cli:") && strings.HasPrefix(o, "cli:") && e != o
			if e != "" && o != "" && !today {
				clis = []string{e, o}
			}
		}
		k := key{estate, substrate, strings.Join(clis, ",")}
		if in, ok := now[k]; ok {
			return in, nil
		}
		in, err := w.Current.Inputs(estate, substrate, nil, clis...)
		if err != nil {
			return nil, err
		}
		now[k] = in
		return in, nil
	}
	recorded := map[Cell]bool{}
	var cells []Cell
	for _, r := range l.Rows {
		c := Cell{r.Estate, r.Substrate, r.Engine.Key(), r.Oracle.Key()}
		if !recorded[c] {
			recorded[c] = true
			cells = append(cells, c)
		}
	}
	// A cell is required when it is the pinned pair on one of q's
	// substrates and its estate exercises q: the registry lists it, or a
	// run of it claimed q in a verifying stage and the estate does not
	// decline every such stage. So a requirement is proven only when every
	// estate that exercises it is - not just the estates someone listed.
	required := func(q Requirement, stages []string, c Cell, rows []Row) bool {
		if len(rows) == 0 || !slices.Contains(q.Substrates, c.Substrate) || !w.Engine.Matches(rows[0].Engine) || !w.Oracle.Matches(rows[0].Oracle) {
			return false
		}
		if slices.Contains(q.Estates, c.Estate) {
			return true
		}
		// A stage that did not run there (not derived, not applicable,
		// skipped, behind a listed finding) or that stock fails alike
		// exercises nothing: the estate's cell judges whether that is what
		// the estate expects.
		claimed := slices.ContainsFunc(rows, func(r Row) bool {
			return slices.Contains(stages, r.Stage) && slices.Contains(r.Requirements, q.ID) && ran(r.Verdict)
		})
		return claimed && w.declined(c.Estate, stages) == ""
	}
	byCell := map[Cell][]Row{}
	for _, r := range l.Rows {
		c := Cell{r.Estate, r.Substrate, r.Engine.Key(), r.Oracle.Key()}
		byCell[c] = append(byCell[c], r)
	}
	columns := map[Cell]bool{}
	for _, q := range w.Registry.Requirements {
		st := Status{ID: q.ID, Statement: q.Statement, Gap: q.Gap, Stages: w.Coverage.Stages[q.ID]}
		for _, c := range cells {
			in, err := current(c.Estate, c.Substrate, byCell[c])
			if err != nil {
				in = nil // the estate is gone: nothing it ran is current
			}
			p, why := cellProof(q, st.Stages, byCell[c], l.Inputs, in)
			st.Cells = append(st.Cells, CellProof{Cell: c, Proof: p, Why: why, Required: required(q, st.Stages, c, byCell[c]),
				Declined: w.declined(c.Estate, st.Stages)})
		}
		for _, e := range q.Estates {
			for _, s := range q.Substrates {
				found := false
				for _, cp := range st.Cells {
					found = found || (cp.Required && cp.Cell.Estate == e && cp.Cell.Substrate == s)
				}
				if !found {
					st.Cells = append(st.Cells, CellProof{
						Cell:  Cell{e, s, w.Engine.String(), w.Oracle.String()},
						Proof: NotRun, Required: true, Declined: w.declined(e, st.Stages),
						Why: fmt.Sprintf("no run of %s on %s with the pinned %s %s and %s %s is recorded", e, s,
							w.Engine.Name, w.Engine.Version, w.Oracle.Name, w.Oracle.Version),
					})
				}
			}
		}
		st.Proof, st.Why = Proven, ""
		worst := -1
		for i, cp := range st.Cells {
			if cp.Required && (worst < 0 || rank[cp.Proof] < rank[st.Proof]) {
				st.Proof, st.Why, worst = cp.Proof, cp.Cell.Estate+" on "+cp.Cell.Substrate+": "+cp.Why, i
			}
			if cp.Required || cp.Proof != NotRun {
				columns[cp.Cell] = true
			}
		}
		// Name every other required cell that is not proven either, so a
		// gate says exactly what is missing.
		var also []string
		for i, cp := range st.Cells {
			if cp.Required && i != worst && cp.Proof != Proven {
				also = append(also, cp.Cell.Estate+" on "+cp.Cell.Substrate+": "+string(cp.Proof))
			}
		}
		if len(also) > 0 {
			st.Why += " (also " + strings.Join(also, "; ") + ")"
		}
		if len(st.Stages) == 0 {
			st.Proof, st.Why = NotRun, "no stage verifies it"
		}
		if why := unprovable(st.Stages, w); why != "" && !st.Proof.Blocking() {
			st.Proof, st.Why = Unprovable, why
			for i := range st.Cells {
				if st.Cells[i].Required && st.Cells[i].Proof == NotRun {
					st.Cells[i].Proof, st.Cells[i].Why = Unprovable, why
				}
			}
		}
		st.Estates = estatesOf(w, q, st)
		rep.Requirements = append(rep.Requirements, st)
	}
	rep.Estates = estateCells(w, l, cells, byCell, current, rep.Requirements)
	for c := range columns {
		rep.Columns = append(rep.Columns, c)
	}
	sort.Slice(rep.Columns, func(i, j int) bool {
		a, b := rep.Columns[i], rep.Columns[j]
		return a.String() < b.String()
	})
	return rep, nil
}

// estatesOf is a requirement across every estate: the worst of each
// estate's required cells, or why it has none.
func estatesOf(w World, q Requirement, st Status) []EstateProof {
	names := append(append([]string{}, w.Estates...), q.Estates...)
	for _, cp := range st.Cells {
		names = append(names, cp.Cell.Estate)
	}
	sort.Strings(names)
	names = slices.Compact(names)
	var out []EstateProof
	for _, e := range names {
		ep := EstateProof{Estate: e, Proof: NotRun}
		recorded := false
		for _, cp := range st.Cells {
			if cp.Cell.Estate != e {
				continue
			}
			recorded = true
			if cp.Required && (!ep.Required || rank[cp.Proof] < rank[ep.Proof]) {
				ep.Proof, ep.Why, ep.Required = cp.Proof, cp.Cell.Substrate+": "+cp.Why, true
			}
		}
		switch {
		case ep.Required:
		case len(st.Stages) == 0:
			ep.Why = "no stage verifies it"
		case w.declined(e, st.Stages) != "":
			ep.Why = "declined by estate.yaml: " + w.declined(e, st.Stages)
		case recorded:
			ep.Why = fmt.Sprintf("not exercised here: no run of it with the pinned %s and %s on %s claimed it",
				w.Engine.Name, w.Oracle.Name, strings.Join(q.Substrates, " or "))
		default:
			ep.Why = "no run of this estate is recorded"
		}
		out = append(out, ep)
	}
	return out
}

// unprovable says which capability no pinned engine has, if any.
func unprovable(stages []string, w World) string {
	if w.SubjectHas == nil {
		return ""
	}
	for _, s := range stages {
		for _, c := range w.Needs[s] {
			if !w.SubjectHas(c) {
				return fmt.Sprintf("unprovable here: stage %s needs capability %q, which the pinned %s %s does not have", s, c, w.Engine.Name, w.Engine.Version)
			}
		}
	}
	return ""
}

// cellProof is a requirement's proof in one cell from that cell's rows:
// for each verifying stage, the rows whose inputs are the tree's now.
func cellProof(q Requirement, stages []string, rows []Row, inputs map[string]*Inputs, now *Inputs) (Proof, string) {
	best, why := Proven, ""
	first := true
	for _, s := range stages {
		p, w := stageProof(q, s, rows, inputs, now)
		if first || rank[p] < rank[best] {
			best, why = p, w
		}
		first = false
	}
	if first {
		return NotRun, "no stage verifies it"
	}
	return best, why
}

// stageProof judges a stage's rows in one cell as proof of req. Only rows
// whose run claimed req count: a stage verifies some requirements only on
// some estates (the records in the cluster), and its pass elsewhere is
// about something else.
//
// A row is fresh when everything its run ran is the tree's now and the
// requirement's registry entry is the one it was recorded under: a
// reworded statement or a narrowed set of cells is another claim.
func stageProof(q Requirement, stage string, rows []Row, inputs map[string]*Inputs, now *Inputs) (Proof, string) {
	req := q.ID
	changed := func(r Row) []string {
		then := inputs[r.Run]
		if then == nil || now == nil {
			return nil
		}
		return staleBecause(then, now, q)
	}
	var all, fresh []Row
	unclaimed := ""
	for _, r := range rows {
		if r.Stage != stage {
			continue
		}
		if !slices.Contains(r.Requirements, req) {
			unclaimed = r.Run
			continue
		}
		all = append(all, r)
		if now != nil && inputs[r.Run] != nil && len(changed(r)) == 0 {
			fresh = append(fresh, r)
		}
	}
	if len(all) == 0 {
		if unclaimed != "" {
			return NotRun, fmt.Sprintf("run %s (%s) did not verify %s: the stage verifies it only on an estate that calls for it", unclaimed, stage, req)
		}
		return NotRun, "stage " + stage + " has no recorded run here"
	}
	if len(fresh) == 0 {
		last := all[len(all)-1]
		what := "the estate is gone"
		if now != nil {
			what = summarise(changed(last))
		}
		return Stale, fmt.Sprintf("run %s (%s, %s) is about another tree: changed since: %s", last.Run, stage, last.Verdict, what)
	}
	for _, r := range fresh {
		if why := failing(r); why != "" {
			return Failed, fmt.Sprintf("run %s (%s) %s", r.Run, stage, why)
		}
	}
	r := fresh[len(fresh)-1]
	at := fmt.Sprintf("run %s (%s)", r.Run, stage)
	switch {
	case r.Verdict == result.NotRun:
		return NotRun, at + " did not run it: " + r.Reason
	case r.Verdict == result.NotApplicable:
		// The estate's shape cannot carry the stage: no proof, no fail.
		return NotRun, at + " is not applicable to this estate: " + r.Reason
	case r.Verdict == result.Limitation:
		// Stock fails it the same way: no proof, and not the engine's fail.
		return NotRun, at + " is a limitation: the subject and stock fail it the same way"
	case r.Checks == 0:
		return Unbacked, at + " passed with no checks recorded: nothing backs it"
	case r.ChecksUnbacked > 0 || r.BreaksLegacy > 0:
		return Unbacked, fmt.Sprintf("%s passed, but %d of %d check(s) passed with no BREAK proving them (recorded before check-level proof)",
			at, r.ChecksUnbacked, r.Checks)
	case r.ChecksNotRun > 0:
		return Partial, fmt.Sprintf("%s passed, but %d of %d check(s) did not run on %s", at, r.ChecksNotRun, r.Checks, r.Substrate)
	}
	return Proven, fmt.Sprintf("%s: %d check(s), each proved by a BREAK, at %s", at, r.Checks, shortHash(r.Commit))
}

// failing says why a row is a failure, or "".
func failing(r Row) string {
	switch {
	case r.Verdict == result.Pass:
	case r.Verdict == result.NotRun, r.Verdict == result.NotApplicable, r.Verdict == result.Limitation:
		return ""
	default:
		return fmt.Sprintf("ended %s", r.Verdict)
	}
	switch {
	case r.ChecksFailed > 0:
		return fmt.Sprintf("passed with %d check(s) failed or unproven", r.ChecksFailed)
	case r.BreaksFailing > 0:
		return fmt.Sprintf("passed with %d BREAK(s) that did not prove: not load-bearing", r.BreaksFailing)
	}
	return ""
}

func summarise(changed []string) string {
	if len(changed) == 0 {
		return "nothing (the run folder's inputs are unreadable)"
	}
	if len(changed) > 4 {
		return strings.Join(changed[:4], ", ") + fmt.Sprintf(" and %d more", len(changed)-4)
	}
	return strings.Join(changed, ", ")
}

// Summary counts requirements by proof, e.g. "proven 16, not-run 2".
func (r *Report) Summary() string {
	count := map[Proof]int{}
	for _, s := range r.Requirements {
		count[s.Proof]++
	}
	var parts []string
	for _, p := range []Proof{Proven, Partial, NotRun, Unprovable, Unbacked, Stale, Failed} {
		if count[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p, count[p]))
		}
	}
	return strings.Join(parts, ", ")
}

// Exit codes of the gates. Waiting is 4, not 3: gauntlet's 3 means a
// command could not run at all (docs/cli.md).
const (
	ExitProven  = 0
	ExitFailed  = 1
	ExitWaiting = 4
)

// Gate is a gate's verdict over a set of requirements.
type Gate struct {
	Code int `json:"exit_code"`
	// Blocking names what fails it: requirements failed, stale or
	// unbacked, and ledger problems.
	Blocking []string `json:"blocking,omitempty"`
	// Waiting names what it still waits for: not run, partial, unprovable.
	Waiting []string `json:"waiting,omitempty"`
	// Gaps names the documented gaps it let through.
	Gaps []string `json:"gaps,omitempty"`
}

// Gate judges the requirements ids (all of them when ids is empty): exit
// 0 when every one is proven (or a documented gap), 1 when any failed, is
// stale or unbacked, a required estate cell's latest run failed or is
// stale, or the ledger has a problem, else 4 when only not-run, partial or
// unprovable ones (an estate cell never recorded among them) remain.
func (r *Report) Gate(ids []string) (Gate, error) {
	var g Gate
	byID := map[string]Status{}
	for _, s := range r.Requirements {
		byID[s.ID] = s
	}
	if len(ids) == 0 {
		for _, s := range r.Requirements {
			ids = append(ids, s.ID)
		}
	}
	for _, id := range ids {
		s, ok := byID[id]
		if !ok {
			return g, fmt.Errorf("requirement %s is not in the registry (conformance/requirements.yaml)", id)
		}
		line := fmt.Sprintf("%s %s: %s", id, s.Proof, s.Why)
		switch {
		case s.Proof == Proven:
		case s.Proof.Blocking():
			g.Blocking = append(g.Blocking, line)
		case s.Gap != "":
			g.Gaps = append(g.Gaps, fmt.Sprintf("%s (%s): documented gap: %s", id, s.Proof, s.Gap))
		default:
			g.Waiting = append(g.Waiting, line)
		}
	}
	for _, p := range r.Problems {
		g.Blocking = append(g.Blocking, "ledger "+p.String())
	}
	for _, e := range r.Estates {
		line := fmt.Sprintf("estate %s on %s %s: %s", e.Estate, e.Substrate, e.Proof, e.Why)
		switch {
		case !e.Required || e.Proof == Proven:
		case e.Proof == NotRun:
			// Never recorded: waited for, as a requirement's unrecorded
			// cell is. A recorded run that failed, or that speaks for
			// another tree, blocks.
			g.Waiting = append(g.Waiting, line)
		default:
			g.Blocking = append(g.Blocking, line)
		}
	}
	switch {
	case len(g.Blocking) > 0:
		g.Code = ExitFailed
	case len(g.Waiting) > 0:
		g.Code = ExitWaiting
	default:
		g.Code = ExitProven
	}
	return g, nil
}
