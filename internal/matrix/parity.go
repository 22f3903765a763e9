package matrix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// Table is the parity table: one row per stage, one cell per engine.
type Table struct {
	Engines []string `json:"engines"`
	Rows    []Row    `json:"rows"`
	// Changes are the cells that differ between consecutive versions of
	// the same engine: each is a behaviour change of the engine or a
	// defect of the gauntlet, and must be explained as one or the other.
	Changes []Change `json:"changes,omitempty"`
	// Figures are the subject's exact figures (engine calls, plans,
	// planned changes) that differ between consecutive versions of one
	// engine in a stage both passed: behaviour that moved without
	// changing a verdict.
	Figures []Change `json:"figures,omitempty"`
	// OracleDrift lists stages whose oracle side did not observe the
	// same thing in every run that passed it: a gauntlet defect.
	OracleDrift []Drift `json:"oracle_drift,omitempty"`
}

// Row is one stage across the engines.
type Row struct {
	Stage string `json:"stage"`
	Title string `json:"title"`
	Cells []Cell `json:"cells"`
}

// Cell is one stage of one engine's run, with why it is what it is.
type Cell struct {
	Engine  string         `json:"engine"`
	Verdict result.Verdict `json:"verdict"`
	// Why is one line: for a pass, what was proved; for a not_run or a
	// not_applicable, the reason; for a fail, the first differing check.
	Why string `json:"why"`
	// Differs names every check (or engine finding) that did not hold,
	// each with its one-line detail.
	Differs []Diff `json:"differs,omitempty"`
}

// Diff is one check that did not hold on this engine.
type Diff struct {
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// Change is a stage whose outcome changed between two consecutive pinned
// versions of one engine.
type Change struct {
	Stage string `json:"stage"`
	From  string `json:"from"`
	To    string `json:"to"`
	What  string `json:"what"`
}

// Drift is a stage whose oracle observations differed between runs.
type Drift struct {
	Stage string `json:"stage"`
	// ByEngine is the oracle's observation in the run of each engine.
	ByEngine map[string]string `json:"by_engine"`
}

// Parity builds the table from the matrix. It reads the model only.
func Parity(m *Matrix) Table {
	t := Table{}
	for _, c := range m.Columns {
		t.Engines = append(t.Engines, c.Engine)
	}
	for _, id := range stageOrder(m) {
		row := Row{Stage: id}
		for _, c := range m.Columns {
			cell := Cell{Engine: c.Engine}
			st, ok := findStage(c.Run, id)
			switch {
			case c.Run == nil:
				cell.Verdict, cell.Why = result.NotRun, "the run could not happen: "+oneline.First(c.Error, 200)
			case !ok:
				cell.Verdict, cell.Why = result.NotRun, "the run has no such stage"
			default:
				row.Title = st.Title
				cell = stageCell(c.Engine, st)
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Changes = changes(t)
	t.Figures = figureChanges(m)
	t.OracleDrift = drift(m)
	return t
}

// subjectFigures repeat exactly run after run (soak checks it).
var subjectFigures = []string{"subject.engine_calls", "subject.plans", "subject.planned_changes"}

func figureChanges(m *Matrix) []Change {
	var out []Change
	for _, id := range stageOrder(m) {
		prev := map[string]struct {
			engine string
			st     result.Stage
		}{}
		for _, c := range m.Columns {
			st, ok := findStage(c.Run, id)
			if !ok || st.Verdict != result.Pass {
				continue
			}
			name, _, _ := strings.Cut(c.Engine, "@")
			if p, ok := prev[name]; ok {
				var diffs []string
				for _, f := range subjectFigures {
					if a, b := p.st.Figures[f], st.Figures[f]; a != b {
						diffs = append(diffs, fmt.Sprintf("%s %d -> %d", strings.TrimPrefix(f, "subject."), a, b))
					}
				}
				if len(diffs) > 0 {
					out = append(out, Change{Stage: id, From: p.engine, To: c.Engine, What: strings.Join(diffs, ", ")})
				}
			}
			prev[name] = struct {
				engine string
				st     result.Stage
			}{c.Engine, st}
		}
	}
	return out
}

func stageOrder(m *Matrix) []string {
	seen := map[string]bool{}
	var ids []string
	for _, id := range stage.Default().Shown() {
		seen[id] = true
		ids = append(ids, id)
	}
	for _, c := range m.Columns {
		if c.Run == nil {
			continue
		}
		for _, s := range c.Run.Stages {
			if !seen[s.ID] {
				seen[s.ID] = true
				ids = append(ids, s.ID)
			}
		}
	}
	return ids
}

func findStage(r *result.Run, id string) (result.Stage, bool) {
	if r == nil {
		return result.Stage{}, false
	}
	for _, s := range r.Stages {
		if s.ID == id {
			return s, true
		}
	}
	return result.Stage{}, false
}

// stageCell explains one stage of one run.
func stageCell(engine string, s result.Stage) Cell {
	c := Cell{Engine: engine, Verdict: s.Verdict}
	var stocks []string
	for _, ch := range s.Checks {
		if ch.Verdict == result.OracleFinding {
			// Stock broke a promise this engine kept: stock's, said in the
			// cell's words, never a difference of the engine's.
			stocks = append(stocks, ch.Name)
			continue
		}
		// A limitation fails on stock the same way: no difference.
		if ch.Verdict != result.Pass && ch.Verdict != result.NotRun && ch.Verdict != result.Limitation {
			c.Differs = append(c.Differs, Diff{Check: ch.Name, Detail: fmt.Sprintf("%s: %s", ch.Verdict, oneline.First(ch.Detail, 200))})
		}
	}
	for _, br := range s.Breaks {
		if br.EngineFinding {
			c.Differs = append(c.Differs, Diff{Check: "BREAK " + br.Name, Detail: "engine finding: held on the subject, stock noticed it: " + oneline.First(br.Detail, 160)})
		}
	}
	switch s.Verdict {
	case result.Pass:
		proved, run := 0, 0
		for _, br := range s.Breaks {
			if br.Side == "subject" || br.Side == "" {
				run++
				if br.Outcome == result.Proved {
					proved++
				}
			}
		}
		c.Why = fmt.Sprintf("%d checks as stock; %d of %d BREAKs proved", passed(s.Checks), proved, run)
		if len(stocks) > 0 {
			c.Why += fmt.Sprintf("; the oracle's finding (stock alone broke it, this engine kept it): %s", strings.Join(stocks, "; "))
		}
	case result.NotRun, result.NotApplicable, result.Cancelled:
		c.Why = oneline.First(orElse(s.Reason, s.Detail), 200)
	case result.Limitation:
		c.Why = "stock fails it the same way: " + oneline.First(s.Detail, 200)
	default:
		if len(c.Differs) > 0 {
			c.Why = c.Differs[0].Check + ": " + c.Differs[0].Detail
		} else {
			// No check failed: the stage's machinery did (an engine call
			// that errored), which its detail says last.
			c.Why = oneline.Last(s.Detail, 200)
			c.Differs = append(c.Differs, Diff{Check: "(stage)", Detail: c.Why})
		}
	}
	return c
}

func passed(cs []result.Check) int {
	n := 0
	for _, c := range cs {
		if c.Verdict == result.Pass {
			n++
		}
	}
	return n
}

// signature is what must stay equal for two cells to be the same
// behaviour: the verdict, the checks that differ, and for not_run the
// reason's capability (a reason naming the version differs by design).
// A not_applicable cell is the estate's shape, whatever the engine: its
// verdict alone.
func signature(c Cell) string {
	var names []string
	for _, d := range c.Differs {
		names = append(names, d.Check)
	}
	sort.Strings(names)
	why := ""
	if c.Verdict == result.NotRun {
		why, _, _ = strings.Cut(c.Why, ",")
	}
	return string(c.Verdict) + "|" + strings.Join(names, ",") + "|" + why
}

// changes compares each engine's cell with the one of the previous pinned
// version of the same engine (columns of one engine in version order).
func changes(t Table) []Change {
	var out []Change
	for _, row := range t.Rows {
		prev := map[string]Cell{}
		for _, c := range row.Cells {
			name, _, _ := strings.Cut(c.Engine, "@")
			if p, ok := prev[name]; ok && signature(p) != signature(c) {
				out = append(out, Change{Stage: row.Stage, From: p.Engine, To: c.Engine,
					What: fmt.Sprintf("%s -> %s", short(p), short(c))})
			}
			prev[name] = c
		}
	}
	return out
}

func short(c Cell) string {
	switch {
	case c.Verdict == result.Pass:
		return "pass"
	case len(c.Differs) > 0:
		var names []string
		for _, d := range c.Differs {
			names = append(names, d.Check)
		}
		return fmt.Sprintf("%s (%s)", c.Verdict, strings.Join(names, "; "))
	}
	return fmt.Sprintf("%s (%s)", c.Verdict, oneline.First(c.Why, 80))
}

// oracleFigures are the oracle's figures that repeat exactly run after
// run (timings and API request counts do not).
var oracleFigures = []string{"oracle.engine_calls", "oracle.plans", "oracle.planned_changes"}

// oracleObservation is what the oracle's side of a stage observed: its
// BREAK outcomes and its exact figures.
func oracleObservation(s result.Stage) string {
	var parts []string
	for _, br := range s.Breaks {
		if br.Side == "oracle" {
			parts = append(parts, br.Name+"="+string(br.Outcome))
		}
	}
	sort.Strings(parts)
	for _, f := range oracleFigures {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimPrefix(f, "oracle."), s.Figures[f]))
	}
	return strings.Join(parts, " ")
}

// drift compares the oracle's observations of each stage across the runs
// in which the stage passed (a failing subject can end a stage early,
// and the oracle's side then did less).
func drift(m *Matrix) []Drift {
	var out []Drift
	for _, id := range stageOrder(m) {
		by := map[string]string{}
		distinct := map[string]bool{}
		for _, c := range m.Columns {
			s, ok := findStage(c.Run, id)
			if !ok || s.Verdict != result.Pass {
				continue
			}
			o := oracleObservation(s)
			by[c.Engine] = o
			distinct[o] = true
		}
		if len(distinct) > 1 {
			out = append(out, Drift{Stage: id, ByEngine: by})
		}
	}
	return out
}

func orElse(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
