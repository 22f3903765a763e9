// Package compare answers a maintainer's question about an engine build:
// what does it change? Given runs of each estate with the build and with a
// baseline engine (the same oracle, recorded once and replayed), it sorts
// every estate x stage into the same, a new difference the build
// introduced, a difference the build removed, a difference both share, or
// unsteady (the repetitions of one side disagreed), and compares the
// requests each side sent to the API server and the time its engine took.
//
// Compare is a pure function of result.Run values: it runs nothing and
// reads no clock, so a report can be rebuilt from run.json files.
package compare

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// Input is what Compare reads: the runs of every estate on each side.
type Input struct {
	// Engine and Baseline name the build and the baseline
	// ("./bin/tofu", "tofu@1.12.6"); Oracle names stock.
	Engine, Baseline, Oracle string
	Estates                  []EstateRuns
	// Shard is "I/N" when the estates are one shard of a larger set.
	Shard string
}

// EstateRuns are one estate's repetitions on each side.
type EstateRuns struct {
	Name, Title string
	// Findings are estate.yaml's findings: stages where stock misbehaves
	// too, with what it does wrong.
	Findings        map[string]string
	Build, Baseline []Rep
}

// Rep is one repetition of one side.
type Rep struct {
	// Run is nil when the run could not happen (Error says why).
	Run   *result.Run
	Error string
	// Dir is where its evidence is written, relative to the report.
	Dir string
}

// Evidence is the rep's evidence page, relative to the report.
func (r Rep) Evidence() string {
	if r.Run == nil || r.Dir == "" {
		return ""
	}
	return r.Dir + "/evidence.md"
}

// Outcome sorts one estate x stage.
type Outcome string

const (
	// Same: both sides did the same (both passed, or did not run alike).
	Same Outcome = "same"
	// New: the build introduced a difference - a stage that passed on the
	// baseline does not on the build, a failing check's finding changed,
	// or the requests it sent changed.
	New Outcome = "new"
	// Removed: a stage that did not pass on the baseline passes on the
	// build.
	Removed Outcome = "removed"
	// Shared: both sides fail the same way (a limitation when the estate
	// records that stock does it too).
	Shared Outcome = "shared"
	// Unsteady: the repetitions of one side disagreed with each other, so
	// nothing is concluded about the build.
	Unsteady Outcome = "unsteady"
)

// Report is the comparison.
type Report struct {
	Engine   string `json:"engine"`
	Baseline string `json:"baseline"`
	Oracle   string `json:"oracle"`
	Shard    string `json:"shard,omitempty"`
	// Repetitions is the most runs of one side of one estate.
	Repetitions int            `json:"repetitions"`
	Estates     []EstateReport `json:"estates"`
	// New lists every new difference, verdicts and checks first, then
	// requests and figures; Removed every removed one; Slower the engine
	// times outside their spread.
	New     []Difference `json:"new"`
	Removed []Difference `json:"removed"`
	// Unconfirmed lists request counts that differ where a side ran
	// once: with no spread to judge them by, a wait loop's extra poll
	// looks the same as a new request, so they are not new differences.
	Unconfirmed []Difference    `json:"unconfirmed,omitempty"`
	Timing      []Difference    `json:"timing"`
	Counts      map[Outcome]int `json:"counts"`
}

// EstateReport is one estate's stages.
type EstateReport struct {
	Name   string     `json:"name"`
	Title  string     `json:"title,omitempty"`
	Stages []StageRow `json:"stages"`
	// Errors are runs that could not happen.
	Errors []string `json:"errors,omitempty"`
	// Evidence lists every run's evidence page, build then baseline.
	Evidence []Link `json:"evidence"`
}

// Link is a labelled relative link.
type Link struct {
	Label string `json:"label"`
	Href  string `json:"href"`
}

// StageRow is one stage on both sides and stock.
type StageRow struct {
	Stage   string  `json:"stage"`
	Title   string  `json:"title,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Change is "verdict" or "check" when the build's verdict, or the
	// findings of its failing checks, differ from the baseline's.
	Change   string `json:"change,omitempty"`
	Build    Side   `json:"build"`
	Baseline Side   `json:"baseline"`
	Stock    Stock  `json:"stock"`
	// Requests are the request kinds whose counts changed.
	Requests []RequestDelta `json:"requests,omitempty"`
	// Figures are the exact figures (engine calls, plans, planned
	// changes) that changed in a stage both sides passed.
	Figures []string `json:"figures,omitempty"`
	Time    Timing   `json:"time"`
	// Why says in one line why the row has its outcome.
	Why string `json:"why"`
}

// Side is one engine's stage, from its first repetition, with the
// figures of every repetition.
type Side struct {
	Verdict result.Verdict `json:"verdict"`
	// Summary is the verdict with why, one line.
	Summary string `json:"summary"`
	// Findings are its checks that did not pass (and engine-finding
	// BREAKs), each with its detail.
	Findings []Finding `json:"findings,omitempty"`
	Evidence string    `json:"evidence,omitempty"`
	// EngineMS and Requests hold one value per repetition that ran.
	EngineMS []int `json:"engine_ms,omitempty"`
	Requests []int `json:"api_requests,omitempty"`
}

// Finding is one check that did not pass.
type Finding struct {
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// Stock is the oracle's side of the stage and what the estate says
// stock does wrong there.
type Stock struct {
	EngineMS   int    `json:"engine_ms"`
	Requests   int    `json:"api_requests"`
	Limitation string `json:"limitation,omitempty"`
}

// RequestDelta is one kind of request whose count changed: the range of
// counts over each side's repetitions.
type RequestDelta struct {
	Request  string `json:"request"`
	Baseline [2]int `json:"baseline"`
	Build    [2]int `json:"build"`
	// Confirmed: each side ran the stage at least twice, so the ranges
	// are spreads and they do not overlap. A count from one run cannot
	// tell a behaviour change from a provider's wait loop polling once
	// more on a slower run (soak shows such counts as ranges for that
	// reason).
	Confirmed bool `json:"confirmed"`
	// Likely: not confirmed, but no wait loop explains it - the count
	// moved by more than PollTolerance, or the build sends more requests
	// in most of the stages compared. A new difference, said as likely
	// until more repetitions confirm it.
	Likely bool `json:"likely,omitempty"`
}

// PollTolerance is how far one kind of request may move between two single
// runs and still be read as a wait loop's extra polls: one request, or a
// tenth of the count. The 20-run soak of corpus-k8s-metrics-server saw
// only a rollout poll move, by one; a build that reads twice (39 -> 74
// requests in one stage) is far outside it.
func PollTolerance(baseline int) int { return max(1, baseline/10) }

// within reports whether a one-repetition change of one kind is within
// the poll tolerance.
func (d RequestDelta) within() bool {
	diff := d.Build[0] - d.Baseline[0]
	return max(diff, -diff) <= PollTolerance(d.Baseline[0])
}

func (d RequestDelta) String() string {
	return fmt.Sprintf("%s %s -> %s", d.Request, span(d.Baseline), span(d.Build))
}

func span(r [2]int) string {
	if r[0] == r[1] {
		return fmt.Sprint(r[0])
	}
	return fmt.Sprintf("%d-%d", r[0], r[1])
}

// Timing is the build's engine time over the baseline's in one stage.
type Timing struct {
	// Ratio is the build's median over the baseline's; 0 when either
	// side has no time.
	Ratio float64 `json:"ratio"`
	// Low and High bound the ratio over the repetitions: the build's
	// fastest over the baseline's slowest, and the other way round.
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Samples is the fewest repetitions timed on one side.
	Samples int `json:"samples"`
	// Flagged: the spreads do not overlap and the ratio is off 1 by
	// more than TimeTolerance.
	Flagged bool `json:"flagged"`
}

// TimeTolerance is how far the ratio of medians must be from 1, beyond
// spreads that do not overlap, for a stage's engine time to be flagged:
// with three repetitions a side, non-overlapping spreads alone happen by
// chance one time in ten.
const TimeTolerance = 0.10

// Difference is one line of the report's lists.
type Difference struct {
	Estate string `json:"estate"`
	Stage  string `json:"stage"`
	// Kind is "verdict", "check", "requests", "figures" or "time".
	Kind string `json:"kind"`
	What string `json:"what"`
	// Build and Baseline are each side's findings, side by side.
	Build    []Finding `json:"build,omitempty"`
	Baseline []Finding `json:"baseline,omitempty"`
	// Evidence links each side's evidence page.
	BuildEvidence    string `json:"build_evidence,omitempty"`
	BaselineEvidence string `json:"baseline_evidence,omitempty"`
}

// Compare builds the report. It reads the runs only.
func Compare(in Input) Report {
	rep := Report{Engine: in.Engine, Baseline: in.Baseline, Oracle: in.Oracle, Shard: in.Shard, Counts: map[Outcome]int{}}
	var estates []EstateReport
	for _, e := range in.Estates {
		rep.Repetitions = max(rep.Repetitions, len(e.Build), len(e.Baseline))
		estates = append(estates, compareEstate(e))
	}
	judgeLikely(estates)
	for _, er := range estates {
		for _, row := range er.Stages {
			rep.Counts[row.Outcome]++
			rep.New = append(rep.New, newDifferences(er.Name, row)...)
			if d, ok := unconfirmed(er.Name, row); ok {
				rep.Unconfirmed = append(rep.Unconfirmed, d)
			}
			if row.Outcome == Removed {
				rep.Removed = append(rep.Removed, difference(er.Name, row, "verdict", row.Why))
			}
			if row.Time.Flagged {
				rep.Timing = append(rep.Timing, difference(er.Name, row, "time", timeWhat(row.Time)))
			}
		}
		rep.Estates = append(rep.Estates, er)
	}
	kind := map[string]int{"verdict": 0, "check": 1, "requests": 2, "figures": 3}
	sort.SliceStable(rep.New, func(i, j int) bool { return kind[rep.New[i].Kind] < kind[rep.New[j].Kind] })
	return rep
}

// judgeLikely marks the one-repetition request changes that no wait loop
// explains: beyond PollTolerance, or - when the build sends more requests
// than the baseline in most of the stages both ran alike - every increase.
// Their rows become new differences.
func judgeLikely(estates []EstateReport) {
	compared, more := 0, 0
	for _, er := range estates {
		for _, row := range er.Stages {
			if row.Build.Verdict != row.Baseline.Verdict || row.Build.Verdict == result.NotApplicable || len(row.Build.Requests) == 0 || len(row.Baseline.Requests) == 0 {
				continue
			}
			compared++
			if slices.Min(row.Build.Requests) > slices.Max(row.Baseline.Requests) {
				more++
			}
		}
	}
	pattern := compared >= 3 && more*2 > compared
	for i := range estates {
		for j := range estates[i].Stages {
			row := &estates[i].Stages[j]
			n := 0
			for k := range row.Requests {
				d := &row.Requests[k]
				if d.Confirmed {
					continue
				}
				d.Likely = !d.within() || (pattern && d.Build[0] > d.Baseline[1])
				if d.Likely {
					n++
				}
			}
			if n > 0 && row.Outcome == Same {
				why := "beyond the poll tolerance"
				if pattern {
					why = fmt.Sprintf("the build sends more requests in %d of %d stages compared", more, compared)
				}
				row.Outcome, row.Why = New, fmt.Sprintf("the same verdict, but %d kind(s) of request likely changed in one repetition (%s)", n, why)
			}
		}
	}
}

func newDifferences(estate string, row StageRow) []Difference {
	var out []Difference
	if row.Change != "" {
		out = append(out, difference(estate, row, row.Change, row.Why))
	}
	if ds := requestsBy(row, true); len(ds) > 0 {
		out = append(out, difference(estate, row, "requests", "requests changed: "+totalWords(row)+deltaWords(ds)))
	}
	if ds := likely(row); len(ds) > 0 {
		out = append(out, difference(estate, row, "requests", "requests likely changed (one repetition; -n 3 confirms): "+totalWords(row)+deltaWords(ds)))
	}
	if len(row.Figures) > 0 {
		out = append(out, difference(estate, row, "figures", "same verdict, other figures: "+strings.Join(row.Figures, ", ")))
	}
	return out
}

// unconfirmed is the row's request counts that differ in a single
// repetition, as one line of the report's unconfirmed list.
func unconfirmed(estate string, row StageRow) (Difference, bool) {
	ds := requestsBy(row, false)
	if len(ds) == 0 {
		return Difference{}, false
	}
	return difference(estate, row, "requests", "requests differ in one repetition (unconfirmed): "+deltaWords(ds)), true
}

// requestsBy are the row's request deltas that are confirmed, or that are
// neither confirmed nor likely (within a wait loop's tolerance).
func requestsBy(row StageRow, confirmed bool) []RequestDelta {
	var out []RequestDelta
	for _, d := range row.Requests {
		if d.Confirmed == confirmed && !d.Likely {
			out = append(out, d)
		}
	}
	return out
}

// likely are the row's one-repetition request deltas no wait loop explains.
func likely(row StageRow) []RequestDelta {
	var out []RequestDelta
	for _, d := range row.Requests {
		if d.Likely {
			out = append(out, d)
		}
	}
	return out
}

func deltaWords(ds []RequestDelta) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

// totalWords is a stage's request total, baseline -> build (medians over
// the repetitions), with the percentage: the line a reviewer reads first.
func totalWords(row StageRow) string {
	a, b := medianInt(row.Baseline.Requests), medianInt(row.Build.Requests)
	return fmt.Sprintf("%.0f -> %.0f requests", a, b) + percent(a, b) + "; by kind: "
}

func difference(estate string, row StageRow, kind, what string) Difference {
	return Difference{Estate: estate, Stage: row.Stage, Kind: kind, What: what,
		Build: row.Build.Findings, Baseline: row.Baseline.Findings,
		BuildEvidence: row.Build.Evidence, BaselineEvidence: row.Baseline.Evidence}
}

func timeWhat(t Timing) string {
	return fmt.Sprintf("engine time x%.2f (spread x%.2f-x%.2f over %d repetitions)", t.Ratio, t.Low, t.High, t.Samples)
}

func compareEstate(e EstateRuns) EstateReport {
	er := EstateReport{Name: e.Name, Title: e.Title}
	for _, side := range []struct {
		name string
		reps []Rep
	}{{"build", e.Build}, {"baseline", e.Baseline}} {
		for i, r := range side.reps {
			label := fmt.Sprintf("%s #%d", side.name, i+1)
			if r.Run == nil {
				er.Errors = append(er.Errors, fmt.Sprintf("%s could not run: %s", label, oneline.First(r.Error, 300)))
				continue
			}
			if er.Title == "" {
				er.Title = r.Run.Estate.Title
			}
			er.Evidence = append(er.Evidence, Link{Label: label, Href: r.Evidence()})
		}
	}
	versions := engineWords(e)
	for _, id := range stageIDs(e) {
		er.Stages = append(er.Stages, compareStage(id, e, versions))
	}
	return er
}

// stageIDs are the stages of every run, in canonical order.
func stageIDs(e EstateRuns) []string {
	have := map[string]bool{}
	for _, r := range append(slices.Clone(e.Build), e.Baseline...) {
		if r.Run != nil {
			for _, s := range r.Run.Stages {
				have[s.ID] = true
			}
		}
	}
	var ids []string
	for _, id := range stage.Default().Shown() {
		if have[id] {
			ids = append(ids, id)
			delete(have, id)
		}
	}
	rest := make([]string, 0, len(have))
	for id := range have {
		rest = append(rest, id)
	}
	sort.Strings(rest)
	return append(ids, rest...)
}

// sideStages are one side's stage id in every repetition that ran.
type sideStages struct {
	stages   []result.Stage
	runs     []*result.Run
	evidence string
	missing  bool // a repetition ran without this stage, or none ran
}

func collect(reps []Rep, id string) sideStages {
	var s sideStages
	for _, r := range reps {
		if r.Run == nil {
			continue
		}
		st, ok := find(r.Run, id)
		if !ok {
			s.missing = true
			continue
		}
		if s.evidence == "" {
			s.evidence = r.Evidence()
		}
		s.stages, s.runs = append(s.stages, st), append(s.runs, r.Run)
	}
	s.missing = s.missing || len(s.stages) == 0
	return s
}

func compareStage(id string, e EstateRuns, versions []string) StageRow {
	b, a := collect(e.Build, id), collect(e.Baseline, id)
	row := StageRow{Stage: id, Build: side(b, versions), Baseline: side(a, versions)}
	for _, s := range append(slices.Clone(b.stages), a.stages...) {
		row.Title = s.Title
		row.Stock = Stock{EngineMS: s.Figures["oracle.engine_ms"], Requests: s.Figures["oracle.api_requests"]}
		break
	}
	row.Stock.Limitation = e.Findings[id]
	row.Time = timing(b, a)
	sigB, steadyB := steady(b, versions)
	sigA, steadyA := steady(a, versions)
	switch {
	case b.missing || a.missing:
		row.Outcome, row.Why = Unsteady, "the stage is missing from a run of one side (a run that could not happen, or ended early)"
		if b.missing && a.missing {
			row.Outcome, row.Why = Same, "no run of either side has the stage"
		}
		return row
	case !steadyB:
		row.Outcome, row.Why = Unsteady, "the build's repetitions disagree: "+verdicts(b)
		return row
	case !steadyA:
		row.Outcome, row.Why = Unsteady, "the baseline's repetitions disagree: "+verdicts(a)
		return row
	}
	pb, pa := row.Build.Verdict == result.Pass, row.Baseline.Verdict == result.Pass
	switch {
	case sigB == sigA:
		row.Outcome, row.Why = Same, "as the baseline: "+row.Build.Summary
		if !pb && row.Build.Verdict != result.NotRun && row.Build.Verdict != result.NotApplicable {
			row.Outcome, row.Why = Shared, "both fail the same way: "+row.Build.Summary
			if row.Stock.Limitation != "" {
				row.Why += "; stock does too (estate.yaml: " + oneline.First(row.Stock.Limitation, 160) + ")"
			}
		}
	case pa && !pb:
		row.Outcome, row.Change, row.Why = New, "verdict", fmt.Sprintf("passed on the baseline, %s on the build: %s", row.Build.Verdict, row.Build.Summary)
	case pb && !pa:
		row.Outcome, row.Why = Removed, fmt.Sprintf("%s on the baseline, passes on the build: %s", row.Baseline.Verdict, row.Baseline.Summary)
	case row.Build.Verdict != row.Baseline.Verdict:
		row.Outcome, row.Change, row.Why = New, "verdict", fmt.Sprintf("%s on the baseline, %s on the build: %s", row.Baseline.Verdict, row.Build.Verdict, changedChecks(row))
	default:
		row.Outcome, row.Change, row.Why = New, "check", fmt.Sprintf("%s on both, but not the same way: %s", row.Build.Verdict, changedChecks(row))
	}
	// Requests are compared where both sides reached the same verdict:
	// where the verdict changed, they follow from that change (a stage
	// run on one side only sent all of its requests there), which the row
	// already reports; a stage the estate's shape cannot carry did
	// nothing to compare (any request it counts is the derivation's).
	if row.Build.Verdict == row.Baseline.Verdict && row.Build.Verdict != result.NotApplicable {
		row.Requests = requestDeltas(b, a)
	}
	if n := len(requestsBy(row, true)); n > 0 && row.Outcome == Same {
		row.Outcome, row.Why = New, fmt.Sprintf("the same verdict, but %d kind(s) of request changed", n)
	}
	if pb && pa {
		row.Figures = figureDeltas(b, a)
		if len(row.Figures) > 0 && row.Outcome == Same {
			row.Outcome, row.Why = New, "the same verdict, other figures: "+strings.Join(row.Figures, ", ")
		}
	}
	return row
}

func verdicts(s sideStages) string {
	var vs []string
	for _, st := range s.stages {
		vs = append(vs, string(st.Verdict))
	}
	return strings.Join(vs, ", ")
}

func side(s sideStages, versions []string) Side {
	out := Side{Evidence: s.evidence}
	for _, st := range s.stages {
		out.EngineMS = append(out.EngineMS, st.Figures["subject.engine_ms"])
		out.Requests = append(out.Requests, st.Figures["subject.api_requests"])
	}
	if len(s.stages) == 0 {
		out.Verdict, out.Summary = result.NotRun, "no run has this stage"
		return out
	}
	st := s.stages[0]
	out.Verdict, out.Findings = st.Verdict, findings(st)
	switch {
	case st.Verdict == result.Pass:
		out.Summary = fmt.Sprintf("pass, %d checks", len(st.Checks))
	case st.Verdict == result.NotRun || st.Verdict == result.NotApplicable || st.Verdict == result.Cancelled:
		out.Summary = fmt.Sprintf("%s: %s", st.Verdict, oneline.First(orElse(st.Reason, st.Detail), 200))
	case len(out.Findings) > 0:
		var names []string
		for _, f := range out.Findings {
			names = append(names, f.Check)
		}
		out.Summary = fmt.Sprintf("%s: %s", st.Verdict, strings.Join(names, "; "))
	default:
		out.Summary = fmt.Sprintf("%s: %s", st.Verdict, oneline.Last(st.Detail, 300))
	}
	return out
}

// findings are a stage's checks that did not pass and its engine-finding
// BREAKs; a stage that failed with neither failed in its machinery (an
// engine call that errored), which its detail says last.
func findings(st result.Stage) []Finding {
	var out []Finding
	for _, c := range st.Checks {
		switch {
		case c.Verdict == result.OracleFinding:
			// The same oracle on both sides of a compare: said as stock's,
			// so a reader never takes it for the build's.
			out = append(out, Finding{Check: c.Name, Detail: "the oracle's finding (stock alone broke it, the engine kept it): " + oneline.First(c.Detail, 400)})
		case c.Verdict != result.Pass && c.Verdict != result.NotRun:
			out = append(out, Finding{Check: c.Name, Detail: fmt.Sprintf("%s: %s", c.Verdict, oneline.First(c.Detail, 400))})
		}
	}
	for _, br := range st.Breaks {
		if br.EngineFinding {
			out = append(out, Finding{Check: "BREAK " + br.Name, Detail: "engine finding: held on the subject, stock noticed it: " + oneline.First(br.Detail, 300)})
		}
	}
	if len(out) == 0 && st.Verdict != result.Pass && st.Verdict != result.NotRun && st.Verdict != result.NotApplicable && st.Verdict != result.Cancelled {
		out = append(out, Finding{Check: "(stage)", Detail: oneline.Last(st.Detail, 300)})
	}
	// Who stopped it: stock alone (the engine did its part) and both alike
	// (the engine stopped where stock did) are the same verdict, a
	// limitation, but not the same behaviour of the engine.
	if who := stoppedBy(st.StoppedBy); who != "" {
		out = append(out, Finding{Check: "who stopped the stage", Detail: who})
	}
	return out
}

// stoppedBy says in words which sides stopped a stage (result.SidesOf
// lists them, the subject first); "" when none did.
func stoppedBy(sides []string) string {
	switch strings.Join(sides, " ") {
	case "oracle":
		return "stock alone"
	case "subject":
		return "the engine alone"
	case "subject oracle":
		return "the engine and stock alike"
	}
	return ""
}

// steady reports whether every repetition of a side has the same
// signature, and returns it.
func steady(s sideStages, versions []string) (string, bool) {
	sig := ""
	for i, st := range s.stages {
		x := normalise(signature(st.Verdict, findings(st), st.Reason), versions)
		if i == 0 {
			sig = x
		} else if x != sig {
			return sig, false
		}
	}
	return sig, true
}

// signature is what must be equal for two sides to have done the same:
// the verdict, and each finding's check and detail; for a stage that did
// not run, its reason up to the first comma (a reason names the version
// that lacks a capability); for a stage the estate's shape cannot carry,
// the verdict alone (the shape is the estate's, whatever the engine).
func signature(v result.Verdict, fs []Finding, reason string) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.Check+"="+f.Detail)
	}
	sort.Strings(parts)
	switch v {
	case result.NotRun:
		reason, _, _ = strings.Cut(reason, ",")
	case result.NotApplicable:
		reason = ""
	}
	return string(v) + "|" + strings.Join(parts, "\x00") + "|" + reason
}

var durations = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b|\b\d+m\d+(\.\d+)?s\b`)

// normalise takes out of a signature what differs between runs of the
// same behaviour: durations, and the engines' own names and versions
// (a detail quoting "tofu 1.11.5" is the same finding as one quoting
// "tofu 1.12.6").
func normalise(sig string, versions []string) string {
	sig = durations.ReplaceAllString(sig, "<duration>")
	for _, v := range versions {
		sig = strings.ReplaceAll(sig, v, "<engine>")
	}
	return sig
}

// engineWords are the subjects' version strings and displays, longest
// first so that "tofu 1.12.6" goes before "1.12.6".
func engineWords(e EstateRuns) []string {
	seen := map[string]bool{}
	for _, r := range append(slices.Clone(e.Build), e.Baseline...) {
		if r.Run == nil {
			continue
		}
		for _, w := range []string{r.Run.Subject.Display, r.Run.Subject.Name + " " + r.Run.Subject.Version, r.Run.Subject.Version, r.Run.Subject.Path} {
			if strings.TrimSpace(w) != "" {
				seen[w] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}

func changedChecks(row StageRow) string {
	was := map[string]string{}
	for _, f := range row.Baseline.Findings {
		was[f.Check] = f.Detail
	}
	var parts []string
	for _, f := range row.Build.Findings {
		d, ok := was[f.Check]
		switch {
		case !ok:
			parts = append(parts, "now "+f.Check)
		case d != f.Detail:
			parts = append(parts, f.Check+" says otherwise")
		}
		delete(was, f.Check)
	}
	for _, f := range row.Baseline.Findings {
		if _, ok := was[f.Check]; ok {
			parts = append(parts, "no longer "+f.Check)
		}
	}
	if len(parts) == 0 {
		return row.Build.Summary
	}
	return strings.Join(parts, "; ")
}

// requestDeltas are the request kinds whose counts over the build's
// repetitions and over the baseline's do not overlap. Runs without the
// breakdown are compared by their total.
func requestDeltas(b, a sideStages) []RequestDelta {
	broken := true
	for _, r := range append(slices.Clone(b.runs), a.runs...) {
		broken = broken && hasBreakdown(r)
	}
	cb, ca := requestCounts(b.stages, broken), requestCounts(a.stages, broken)
	keys := map[string]bool{}
	for k := range cb {
		keys[k] = true
	}
	for k := range ca {
		keys[k] = true
	}
	spread := len(b.stages) >= 2 && len(a.stages) >= 2
	var out []RequestDelta
	for k := range keys {
		rb, ra := bounds(cb[k], len(b.stages)), bounds(ca[k], len(a.stages))
		if rb[1] < ra[0] || rb[0] > ra[1] {
			out = append(out, RequestDelta{Request: k, Baseline: ra, Build: rb, Confirmed: spread})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Request < out[j].Request })
	return out
}

// hasBreakdown reports whether a run recorded its requests by kind (a
// stage without requests has none to record, so one stage with them
// tells).
func hasBreakdown(r *result.Run) bool {
	for _, st := range r.Stages {
		if len(st.Requests) > 0 {
			return true
		}
	}
	return false
}

// requestCounts are each request kind's counts over the repetitions, or
// their totals when a run on either side has no breakdown.
func requestCounts(stages []result.Stage, broken bool) map[string][]int {
	out := map[string][]int{}
	for _, st := range stages {
		if !broken {
			out["(all requests)"] = append(out["(all requests)"], st.Figures["subject.api_requests"])
			continue
		}
		for k, n := range st.Requests["subject"] {
			out[k] = append(out[k], n)
		}
	}
	return out
}

// bounds is the range of counts over n repetitions; a repetition
// without the kind counted 0.
func bounds(counts []int, n int) [2]int {
	if len(counts) < n {
		counts = append(slices.Clone(counts), 0)
	}
	if len(counts) == 0 {
		return [2]int{}
	}
	return [2]int{slices.Min(counts), slices.Max(counts)}
}

// exactFigures repeat run after run for one engine (soak checks it).
var exactFigures = []string{"subject.engine_calls", "subject.plans", "subject.planned_changes"}

func figureDeltas(b, a sideStages) []string {
	var out []string
	for _, f := range exactFigures {
		vb, va := figure(b.stages, f), figure(a.stages, f)
		if rb, ra := bounds(vb, len(vb)), bounds(va, len(va)); rb[1] < ra[0] || rb[0] > ra[1] {
			out = append(out, fmt.Sprintf("%s %s -> %s", strings.TrimPrefix(f, "subject."), span(ra), span(rb)))
		}
	}
	return out
}

func figure(stages []result.Stage, name string) []int {
	var out []int
	for _, st := range stages {
		out = append(out, st.Figures[name])
	}
	return out
}

// timing compares the engine's time. A run whose oracle ran live beside
// it (the run that recorded the oracle) shared the machine with it, so
// it is left out of the times when its side has a replayed run.
func timing(b, a sideStages) Timing {
	tb, ta := times(b), times(a)
	t := Timing{Samples: min(len(tb), len(ta))}
	if t.Samples == 0 || median(ta) == 0 || slices.Min(ta) == 0 {
		return t
	}
	t.Ratio = median(tb) / median(ta)
	t.Low, t.High = slices.Min(tb)/slices.Max(ta), slices.Max(tb)/slices.Min(ta)
	disjoint := slices.Min(tb) > slices.Max(ta) || slices.Max(tb) < slices.Min(ta)
	t.Flagged = t.Samples >= 2 && disjoint && (t.Ratio > 1+TimeTolerance || t.Ratio < 1-TimeTolerance)
	return t
}

func times(s sideStages) []float64 {
	replayed := false
	for _, r := range s.runs {
		replayed = replayed || r.OracleReplay != ""
	}
	var out []float64
	for i, st := range s.stages {
		if replayed && s.runs[i].OracleReplay == "" {
			continue
		}
		out = append(out, float64(st.Figures["subject.engine_ms"]))
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func find(r *result.Run, id string) (result.Stage, bool) {
	for _, s := range r.Stages {
		if s.ID == id {
			return s, true
		}
	}
	return result.Stage{}, false
}

func orElse(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
