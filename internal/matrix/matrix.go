// Package matrix runs one estate with many engine versions as the subject
// against one oracle and compares them: a parity table of stage x engine
// in which every cell says why it is what it is, the changes between
// consecutive versions of an engine, and whether the oracle said the same
// thing in every run.
//
// The oracle runs once. The first engine's run records the oracle's side
// (gauntlet.OracleTape: its engine calls, what they left and sent, and
// gauntlet's own requests to its cluster), and every other engine's run
// replays it, starting only the subject's cluster. A replay asked anything
// the recording did not hold (a subject that took the stages down another
// path) is run again with a live oracle, and the page says which and why.
// With Options.OracleLive every run has a live oracle of its own, and the
// oracle's BREAK outcomes and exact figures must then agree across the
// runs: any stage where they do not is reported as a gauntlet defect
// (OracleDrift), never hidden.
package matrix

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/oneline"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Matrix is the outcome of one estate run with each engine.
type Matrix struct {
	Estate    result.Estate `json:"estate"`
	Oracle    string        `json:"oracle"`
	Substrate string        `json:"substrate"`
	Commit    string        `json:"commit,omitempty"`
	StartedAt time.Time     `json:"started_at"`
	Duration  time.Duration `json:"duration_ns"`
	Columns   []Column      `json:"columns"`
	Reproduce string        `json:"reproduce,omitempty"`
	// Jobs is how many engine runs went at once.
	Jobs int `json:"jobs,omitempty"`
}

// Column is one engine's run.
type Column struct {
	// Engine is the pinned engine, "tofu@1.9.4".
	Engine string `json:"engine"`
	// Tool is its pin's name, the folder of its evidence page.
	Tool string `json:"tool"`
	// Run is its gauntlet run; nil when the run could not happen (Error).
	Run   *result.Run `json:"-"`
	Error string      `json:"error,omitempty"`
	// Reused: Run is an earlier run of the same commit, binaries and
	// stages (matrix --reuse), not run again.
	Reused bool `json:"reused,omitempty"`
	// Oracle says how the run's oracle side ran: "recorded" (live, and
	// the tape the others replay), "replayed", or "live" with the reason
	// when it was not replayed.
	Oracle string `json:"oracle,omitempty"`
}

// Subject is one column's engine, given as it is: a pinned engine or a
// binary by path, under a label of the caller's choosing.
type Subject struct {
	// Label names the column ("build #2").
	Label string
	// Tool is the folder of the column's evidence; unique in a matrix.
	Tool string
	// Pin is a pinned engine spec ("tofu@1.12.6"), built on demand.
	Pin string
	// Path, when set, runs the binary at Path instead of a pinned one.
	Path string
	// ReattachProviders reattaches this column's providers as
	// Options.ReattachProviders does all columns': a column with and one
	// without measure its parity.
	ReattachProviders bool
}

// Options configure Run.
type Options struct {
	// Engines are pinned engine specs ("tofu@1.9.4"); see
	// toolchain.Pins.Engine.
	Engines []string
	// Subjects, when set, are the columns instead of Engines, in the
	// order given, the same engine any number of times (repetitions);
	// the first one run records the oracle's side. Default: Engines.
	Subjects []Subject
	// Oracle is a pinned engine spec; default "terraform" (the pinned
	// terraform).
	Oracle    string
	Substrate string
	CacheDir  string
	Offline   bool
	Stages    []string
	Commit    string
	Reproduce string
	Logger    log.Logger
	// Reuse, when set, offers an earlier run of an engine (by pin name);
	// it is taken instead of running again only when Reusable says so.
	Reuse func(tool string) *result.Run
	// Jobs is how many engine runs go at once, each with its own two
	// clusters; 0 is DefaultJobs(Substrate).
	Jobs int
	// OracleLive runs the oracle's side live in every run instead of
	// once (default false: recorded once, replayed for the rest).
	OracleLive bool
	// ReattachProviders starts each run's provider plugins once and
	// reattaches its engine calls to them (gauntlet.WithReattachedProviders);
	// a replayed oracle makes no call, so it reaches the subjects and the
	// recording run's oracle. Default false: every call starts its own.
	ReattachProviders bool
	// Out, when set, is the folder WriteAll will write to: each run keeps
	// the log of every engine call that failed in its column's folder
	// (ColumnDir/logs), and its details cite it there rather than in the
	// work directory removed after the run. Default: no log kept.
	Out string
}

// ColumnDir is the folder of a column's evidence under the matrix's
// folder dir (WriteAll), where its failed calls' logs are kept too.
func ColumnDir(dir, tool string) string { return filepath.Join(dir, tool) }

// Want is what a run of a matrix column is: Reusable compares an earlier
// run against it.
type Want struct {
	Estate, Commit, Substrate string
	Subject, Oracle           toolchain.EngineRef
	// SubjectSHA is the subject binary's sha256.
	SubjectSHA string
	// Stages is the stage selection; nil is every stage.
	Stages []string
	// ReattachProviders is Options.ReattachProviders.
	ReattachProviders bool
}

// Reusable says why an earlier run can stand for a new one, or returns an
// error: it must be of this gauntlet commit (clean), this estate and
// substrate, the same subject binary (sha256 and pin) and oracle pin,
// not cancelled or sabotaged, of the same stage selection, and with its
// providers reattached or not as asked.
func Reusable(r *result.Run, w Want) error {
	switch {
	case r == nil:
		return fmt.Errorf("no earlier run")
	case w.Commit == "" || strings.HasSuffix(w.Commit, "-dirty") || r.Commit != w.Commit:
		return fmt.Errorf("earlier run at %q, now %q (a dirty tree reuses nothing)", r.Commit, w.Commit)
	case r.Estate.Name != w.Estate:
		return fmt.Errorf("earlier run of %s", r.Estate.Name)
	case !strings.HasPrefix(r.Substrate, w.Substrate):
		return fmt.Errorf("earlier run on %s", r.Substrate)
	case r.Subject.Name != w.Subject.Engine || r.Subject.Pinned != w.Subject.Version || r.Subject.SHA256 != w.SubjectSHA:
		return fmt.Errorf("earlier subject %s %s (sha256 %s)", r.Subject.Name, r.Subject.Pinned, r.Subject.SHA256)
	case r.Oracle.Name != w.Oracle.Engine || r.Oracle.Pinned != w.Oracle.Version:
		return fmt.Errorf("earlier oracle %s %s", r.Oracle.Name, r.Oracle.Pinned)
	case r.Cancelled != nil || r.Sabotaged:
		return fmt.Errorf("earlier run cancelled or sabotaged")
	case (r.ReattachedProviders != "") != w.ReattachProviders:
		return fmt.Errorf("earlier run with providers reattached %t, now %t", r.ReattachedProviders != "", w.ReattachProviders)
	}
	if len(w.Stages) == 0 {
		for _, st := range r.Stages {
			// (A run recorded before causes says it in its reason only.)
			if st.Cause == result.CauseNotSelected || st.Reason == "not selected for this run" {
				return fmt.Errorf("earlier run selected stages")
			}
		}
	} else if !strings.Contains(r.Reproduce, "--stages "+strings.Join(w.Stages, ",")) {
		return fmt.Errorf("earlier run selected other stages")
	}
	return nil
}

// Resolve checks the engine list against the pins before anything runs:
// an unpinned or unbuildable engine costs a second, not a run.
func Resolve(pins *toolchain.Pins, specs []string, oracle string) ([]toolchain.EngineRef, toolchain.EngineRef, error) {
	if oracle == "" {
		oracle = "terraform"
	}
	orc, err := pins.Engine(oracle)
	if err != nil {
		return nil, toolchain.EngineRef{}, fmt.Errorf("oracle: %w", err)
	}
	seen := map[string]bool{}
	var out []toolchain.EngineRef
	for _, s := range specs {
		e, err := pins.Engine(s)
		if err != nil {
			return nil, toolchain.EngineRef{}, err
		}
		if seen[e.Tool] {
			return nil, toolchain.EngineRef{}, fmt.Errorf("engine %s is named twice", e)
		}
		seen[e.Tool] = true
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, toolchain.EngineRef{}, fmt.Errorf("no engine to run: name them with --engines")
	}
	// Columns in pins order (tofu, then terraform, each by version), so
	// that consecutive columns of one engine are consecutive versions.
	rank := map[string]int{}
	for i, e := range pins.Engines() {
		rank[e.Tool] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Tool] < rank[out[j].Tool] })
	return out, orc, nil
}

// Run runs the estate once per engine, Options.Jobs runs at a time, and
// returns the matrix with its columns in pins order whatever order the
// runs finish in. A run that could not happen (an engine that does not
// build) is a column with its error; a cancelled context starts no
// further run and says so in the columns it left.
func Run(ctx context.Context, spec *estate.Spec, o Options) (*Matrix, error) {
	if o.Logger == nil {
		o.Logger = log.Discard()
	}
	if o.Substrate == "" {
		o.Substrate = "local"
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return nil, err
	}
	engines, orc, err := subjects(pins, o)
	if err != nil {
		return nil, err
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs(o.Substrate)
	}
	if jobs > 1 && o.Substrate == "kind" {
		// The node containers' processes are the container daemon's
		// children, not a run's: side by side, one run's clean-up could
		// not tell the other's apart.
		return nil, fmt.Errorf("%d runs at once need the local substrate: on kind the matrix runs one engine at a time (--jobs 1)", jobs)
	}
	start := time.Now()
	m := &Matrix{Oracle: orc.String(), Substrate: o.Substrate, Commit: o.Commit, StartedAt: start.UTC(), Reproduce: o.Reproduce, Jobs: jobs}
	m.Columns = make([]Column, len(engines))
	var mu sync.Mutex // guards m.Estate and m.Substrate
	note := func(res *result.Run) {
		mu.Lock()
		defer mu.Unlock()
		m.Estate = res.Estate
		if m.Substrate == "" || res.Substrate != "" {
			m.Substrate = res.Substrate
		}
	}
	var orcTape *gauntlet.OracleTape
	if !o.OracleLive {
		orcTape = gauntlet.NewOracleTape()
	}
	// run runs one column, replaying the oracle when the tape is recorded
	// and running it again live if the replay diverged.
	liveWhy := "live" // how a column without the tape has its oracle
	run := func(i int, e Subject, t *gauntlet.OracleTape) {
		col := &m.Columns[i]
		col.Oracle = liveWhy
		switch {
		case t != nil && t.Recorded():
			col.Oracle = "replayed"
		case t != nil:
			col.Oracle = "recorded"
		}
		o.Logger.Infof("matrix %d/%d: %s against %s (oracle %s)", i+1, len(engines), e.Label, orc, col.Oracle)
		res, err := runOne(ctx, spec, o, e, orc, t)
		if err != nil && errors.Is(err, gauntlet.ErrOracleDiverged) && ctx.Err() == nil {
			o.Logger.Warnf("matrix: %s: %v; running it again with a live oracle", e.Label, err)
			col.Oracle = "live: the replay diverged (" + oneline.First(err.Error(), 240) + ")"
			res, err = runOne(ctx, spec, o, e, orc, nil)
		}
		if err != nil {
			col.Error = err.Error()
			o.Logger.Warnf("matrix: %s could not run: %v", e.Label, err)
			return
		}
		col.Run = res
		note(res)
	}
	todo := []int{}
	for i, e := range engines {
		col := &m.Columns[i]
		*col = Column{Engine: e.Label, Tool: e.Tool}
		if o.Reuse != nil {
			if prev := o.Reuse(e.Tool); prev != nil {
				col.Run, col.Reused = prev, true
				note(prev)
				o.Logger.Infof("matrix %d/%d: %s: the earlier run stands (same commit, binaries and stages)", i+1, len(engines), e.Label)
				continue
			}
		}
		todo = append(todo, i)
	}
	// The recording run goes first and alone: the engine that can do the
	// most, so that the fewest stages are left out of the recording.
	if orcTape != nil && len(todo) > 1 {
		first := todo[0]
		if len(o.Subjects) == 0 {
			first = recorder(refs(pins, engines), todo)
		}
		if ctx.Err() == nil {
			run(first, engines[first], orcTape)
		}
		todo = slices.DeleteFunc(todo, func(i int) bool { return i == first })
		if !orcTape.Recorded() {
			// A tape is recorded once: the others must not try again.
			o.Logger.Warnf("matrix: the recording run did not finish whole: every other engine runs with a live oracle")
			orcTape, liveWhy = nil, "live: no whole recording to replay"
		} else {
			o.Logger.Infof("matrix: the oracle's side is recorded (%d answers) in the run with %s; the other %d run(s) replay it", orcTape.Entries(), engines[first].Label, len(todo))
		}
	} else {
		orcTape = nil
	}
	if orcTape != nil && orcTape.Recorded() && o.Jobs <= 0 {
		jobs = ReplayJobs(o.Substrate)
		m.Jobs = jobs
	}
	slots := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, i := range todo {
		col := &m.Columns[i]
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			col.Error = "not run: the matrix was cancelled"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			run(i, engines[i], orcTape)
		}()
	}
	wg.Wait()
	m.Duration = time.Since(start)
	if m.Estate.Name == "" {
		m.Estate = result.Estate{Name: spec.Name, Title: spec.Title}
	}
	return m, nil
}

// DefaultJobs is how many engine runs Run keeps going at once when
// Options.Jobs is 0: one per two cores on the local substrate, because
// one run keeps about two cores busy (measured on 2 cores: 380 CPU
// seconds in 205 s of wall time for corpus-k8s-metrics-server, its two
// sides' engines, providers and control planes working at once), and one
// on kind, whose node containers are the heavy part.
func DefaultJobs(substrate string) int {
	if substrate == "kind" {
		return 1
	}
	return max(1, runtime.NumCPU()/2)
}

// ReplayJobs is how many runs with a replayed oracle Run keeps going at
// once when Options.Jobs is 0: one per core on the local substrate, since
// such a run has one live side, whose engine calls follow one another
// (measured on 2 cores: about 1.45 cores busy in 151 s of wall time for
// corpus-k8s-metrics-server), and one on kind.
func ReplayJobs(substrate string) int {
	if substrate == "kind" {
		return 1
	}
	return max(1, runtime.NumCPU())
}

// runOne is one engine's gauntlet run (a panic in it is that engine's
// error, not the matrix's end).
func runOne(ctx context.Context, spec *estate.Spec, o Options, e Subject, orc toolchain.EngineRef, t *gauntlet.OracleTape) (res *result.Run, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	subject, engineFlag := gauntlet.WithEnginePin(e.Pin), e.Pin
	if e.Path != "" {
		subject, engineFlag = gauntlet.WithEngine(e.Path), e.Path
	}
	opts := []gauntlet.Option{
		subject, gauntlet.WithOraclePin(orc.String()),
		gauntlet.WithSubstrate(o.Substrate), gauntlet.WithOffline(o.Offline), gauntlet.WithCommit(o.Commit),
		gauntlet.WithLogger(log.Prefixed(o.Logger, e.Label+" ")),
	}
	if o.CacheDir != "" {
		opts = append(opts, gauntlet.WithCacheDir(o.CacheDir))
	}
	if o.Out != "" {
		opts = append(opts, gauntlet.WithFailedLogs(filepath.Join(ColumnDir(o.Out, e.Tool), "logs")))
	}
	if t != nil {
		opts = append(opts, gauntlet.WithOracleTape(t))
	}
	reproduce := fmt.Sprintf("go run ./tools/gauntlet run %s --engine %s --oracle %s --substrate %s", spec.Name, engineFlag, orc, o.Substrate)
	if len(o.Stages) > 0 {
		opts = append(opts, gauntlet.WithStages(o.Stages...))
		reproduce += " --stages " + strings.Join(o.Stages, ",")
	}
	if o.ReattachProviders || e.ReattachProviders {
		opts = append(opts, gauntlet.WithReattachedProviders(true))
		reproduce += " --reattach-providers"
	}
	opts = append(opts, gauntlet.WithReproduce(reproduce))
	return gauntlet.Run(ctx, spec, opts...)
}

// subjects are the matrix's columns: Options.Subjects as given, else
// Options.Engines resolved and in pins order.
func subjects(pins *toolchain.Pins, o Options) ([]Subject, toolchain.EngineRef, error) {
	if len(o.Subjects) == 0 {
		engines, orc, err := Resolve(pins, o.Engines, o.Oracle)
		if err != nil {
			return nil, orc, err
		}
		out := make([]Subject, len(engines))
		for i, e := range engines {
			out[i] = Subject{Label: e.String(), Tool: e.Tool, Pin: e.String()}
		}
		return out, orc, nil
	}
	orc, err := pins.Engine(orElse(o.Oracle, "terraform"))
	if err != nil {
		return nil, orc, fmt.Errorf("oracle: %w", err)
	}
	seen := map[string]bool{}
	for _, s := range o.Subjects {
		switch {
		case s.Label == "" || s.Tool == "":
			return nil, orc, fmt.Errorf("subject %+v: needs a label and a folder", s)
		case seen[s.Tool]:
			return nil, orc, fmt.Errorf("subject folder %s is named twice", s.Tool)
		case (s.Pin == "") == (s.Path == ""):
			return nil, orc, fmt.Errorf("subject %s: give a pin or a path, one of them", s.Label)
		}
		seen[s.Tool] = true
	}
	return o.Subjects, orc, nil
}

// refs are the pinned engines of subjects made from Options.Engines.
func refs(pins *toolchain.Pins, subjects []Subject) []toolchain.EngineRef {
	out := make([]toolchain.EngineRef, len(subjects))
	for i, s := range subjects {
		out[i], _ = pins.Engine(s.Pin)
	}
	return out
}

// recorder picks, among the columns to run, the engine whose pinned
// version has the most capabilities, the latest in pins order on a tie.
func recorder(engines []toolchain.EngineRef, todo []int) int {
	best, most := todo[0], -1
	for _, i := range todo {
		n := 0
		for _, ok := range engine.StockCapabilities(engines[i].Engine, engines[i].Version) {
			if ok {
				n++
			}
		}
		if n >= most {
			best, most = i, n
		}
	}
	return best
}

// Clear reports whether every engine ran and every run is clear.
func (m *Matrix) Clear() bool {
	for _, c := range m.Columns {
		if c.Run == nil || !c.Run.Clear() {
			return false
		}
	}
	return len(m.Columns) > 0
}
