package stage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/derive"
	"github.com/gauntlet-k8s/gauntlet/internal/errtree"
	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/internal/tape"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Side is one cluster with the engines that act on it.
type Side struct {
	// Name is "subject" or "oracle".
	Name    string
	Cluster cluster.Cluster
	// Proxy stands between the engines and the cluster; gauntlet's own
	// reads go to the cluster directly.
	Proxy *wire.Proxy
	// Root is the root the stages act on (an estate of ordered roots
	// names it, else its last root).
	Root *estate.Root
	// Others are the estate's other roots, in apply order: applied around
	// Root at cold deploy, left applied while the stages act, destroyed
	// in reverse at teardown.
	Others []*OtherRoot
	// Stock is the oracle CLI in this side's root: it cold-deploys both
	// clusters, so the subject has stock state to migrate from.
	Stock *engine.Workspace
	// Engine is this side's engine: the engine under test on the subject
	// side, the oracle CLI on the oracle side.
	Engine *engine.Workspace

	// Records is where Root keeps its state on the kubernetes backend
	// (nil for a root on local state). Until the migrate stage moves it
	// there, every root of the side is kept on local state.
	Records *estate.Records

	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper

	// Tape, on the oracle's side of a matrix run, records the side or
	// replays it (gauntlet.OracleTape); nil otherwise.
	Tape *tape.Side

	// DeleteWait bounds how long an out-of-band delete waits for the
	// object to go (Side.Delete); 0 means two minutes.
	DeleteWait time.Duration

	mu          sync.Mutex
	extra       []*engine.Workspace
	recordsLive bool
	engineInit  bool
	typed       kubernetes.Interface
}

// initEngine has the side's engine init its root, once: migrate does it
// when it runs, and a stage that acts with the engine in a run that did
// not select migrate (teardown after cold deploy alone) does it first -
// else the engine meets stock's lock file, which names no provider it
// can select.
func (s *Side) initEngine(ctx context.Context) error {
	s.mu.Lock()
	done := s.engineInit
	s.mu.Unlock()
	if done {
		return nil
	}
	if _, err := s.Engine.Init(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.engineInit = true
	s.mu.Unlock()
	return nil
}

// OtherRoot is a root the stages do not act on, with the stock workspace
// that applies and destroys it on its side.
type OtherRoot struct {
	Root  *estate.Root
	Stock *engine.Workspace
	// Engine is this side's engine in the root: it takes the root over
	// with the acted one when the migrate stage moves the estate's state
	// into the cluster, and then destroys it at teardown.
	Engine *engine.Workspace
	// Records is where the root keeps its state on the kubernetes
	// backend, nil for local state.
	Records *estate.Records
	// Before says it comes before the acted root in apply order (a CRD
	// before its custom resources); the rest come after it.
	Before bool
}

// Workspace opens another workspace of this side's engine (greenfield's
// fresh root), counted with the side's calls.
func (s *Side) Workspace(dir string) (*engine.Workspace, error) {
	// Its own log folder: call numbers restart per workspace.
	return s.openWorkspace(dir, s.Engine.Kubeconfig, filepath.Join(s.Engine.LogDir, filepath.Base(dir)))
}

// openWorkspace opens a workspace of the side's engine, counted with the
// side's calls and on its tape if it has one.
func (s *Side) openWorkspace(dir, kubeconfig, logDir string) (*engine.Workspace, error) {
	ws, err := s.Engine.Engine.Workspace(dir, kubeconfig, logDir)
	if err != nil {
		return nil, err
	}
	if s.Tape != nil {
		ws.SetTape(s.Tape)
	}
	s.mu.Lock()
	s.extra = append(s.extra, ws)
	s.mu.Unlock()
	return ws, nil
}

// UseTape puts the side on t: every workspace it has and opens records
// its calls into it, or replays them from it.
func (s *Side) UseTape(t *tape.Side) {
	s.Tape = t
	for _, ws := range s.workspaces() {
		ws.SetTape(t)
	}
}

// workspaces are every workspace of this side, each once: its engine and
// stock CLI in every root, and the extra ones opened since.
func (s *Side) workspaces() []*engine.Workspace {
	var out []*engine.Workspace
	add := func(ws *engine.Workspace) {
		if ws != nil && !slices.Contains(out, ws) {
			out = append(out, ws)
		}
	}
	add(s.Engine)
	add(s.Stock)
	for _, o := range s.Others {
		add(o.Stock)
		add(o.Engine)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ws := range s.extra {
		add(ws)
	}
	return out
}

// Calls counts every engine call made on this side so far.
func (s *Side) Calls() int {
	n := 0
	for _, ws := range s.workspaces() {
		n += len(ws.Calls())
	}
	return n
}

// CallTime sums the durations of every engine call made on this side so
// far: the floor under any stage's wall time, whatever gauntlet adds.
func (s *Side) CallTime() time.Duration {
	var d time.Duration
	for _, ws := range s.workspaces() {
		for _, c := range ws.Calls() {
			d += c.Duration
		}
	}
	return d
}

// CallsBy tallies every engine call made on this side so far by
// subcommand: where the engine-seconds of a stage go.
func (s *Side) CallsBy() map[string]result.CallTally {
	d := map[string]time.Duration{}
	n := map[string]int{}
	for _, ws := range s.workspaces() {
		for _, c := range ws.Calls() {
			k := subcommand(c.Args)
			n[k]++
			d[k] += c.Duration
		}
	}
	out := make(map[string]result.CallTally, len(n))
	for k := range n {
		out[k] = result.CallTally{N: n[k], MS: int(d[k].Milliseconds())}
	}
	return out
}

// subcommand names a call by its subcommand, with the second word of
// those that have one ("state list", "workspace new").
func subcommand(args []string) string {
	if len(args) == 0 {
		return "(none)"
	}
	switch args[0] {
	case "state", "workspace", "providers":
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			return args[0] + " " + args[1]
		}
	}
	return args[0]
}

// Run is what every stage works with.
type Run struct {
	Spec      *estate.Spec
	Subject   *Side
	Oracle    *Side
	Log       log.Logger
	Substrate cluster.Capabilities

	// Observations later stages build on.
	Objects []Object
	// Kinds are the kinds of the cold-deployed objects, derived from the
	// state and discovery.
	Kinds     []estate.Kind
	Baselines map[string]any
	// Sabotage skips every BREAK's corruption and keeps its measurement
	// (a test of the BREAKs themselves: each must then come out unproved).
	Sabotage bool

	// Fresh materialises the estate's original root (by name) in a new
	// directory on a side (greenfield applies it with no state).
	Fresh func(side *Side, root, name string) (*estate.Root, error)

	// Choices are the stage plans the run used, derived or written; the
	// runner puts them in the result for the evidence page.
	Choices []result.Choice

	mu          sync.Mutex
	derived     *derive.Plans
	driftTried  *driftTrial
	coldOracle  *inventory.Inventory
	coldObjects []Object
	// counterpart is the oracle's object for each of the subject's the
	// oracle names otherwise (a generated name), paired by address at
	// cold deploy (pairSides).
	counterpart map[estate.Object]estate.Object
	// generated are each side's provider-generated values, each mapped
	// to a placeholder naming its source (generatedValues).
	generated map[string]map[string]string
	// records are the records the last record-store check read, by side
	// and root.
	records map[string]recordsSeen
	// derivedObjects is how many objects the derivation of the stage
	// plans read (notDerived).
	derivedObjects int
}

// Sides returns subject then oracle.
func (r *Run) Sides() []*Side { return []*Side{r.Subject, r.Oracle} }

// both runs f on the two sides at once and joins their errors, each
// prefixed with its side's name.
func (r *Run) both(ctx context.Context, f func(ctx context.Context, s *Side) error) error {
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range r.Sides() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = &result.MeasurementError{Side: s.Name, Op: "measure", Err: fmt.Errorf("panic: %v", p), Stack: string(debug.Stack())}
				}
			}()
			if err := f(ctx, s); err != nil {
				// Findings and measurement errors learn their side here,
				// so a joined failure says which side failed.
				errs[i] = &result.SideError{Side: s.Name, Err: result.Stamp(err, "", s.Name)}
			}
		}()
	}
	wg.Wait()
	return joinSides(errs[0], errs[1])
}

// joinSides joins the subject's and the oracle's errors, each naming its
// side. When both sides' engines failed with the same diagnostics the
// joined error says so: two engines print the same errors in any order,
// and two long texts compared by eye look different.
func joinSides(subject, oracle error) error {
	err := errors.Join(subject, oracle)
	if subject == nil || oracle == nil {
		return err
	}
	a, b := diagnosticsIn(subject), diagnosticsIn(oracle)
	if len(a) == 0 || !slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))) {
		return err
	}
	note := fmt.Sprintf("the subject and the oracle printed the same %d %s", len(a), map[bool]string{true: "error", false: "errors"}[len(a) == 1])
	if !slices.Equal(a, b) {
		note += ", in another order"
	}
	return &sameOnBoth{err: err, note: note}
}

// sameOnBoth is both sides' errors, with the note that they are the same.
type sameOnBoth struct {
	err  error
	note string
}

// SameOnBoth reports whether err, a stage's abort, is the subject and
// the oracle failing one step with the same diagnostics, through every
// wrap and join: the engine under test did what stock did, so the stop is
// not the engine's fail (the runner makes it a limitation).
func SameOnBoth(err error) bool {
	return errtree.Every(err, func(e error) (bool, bool) {
		_, ok := e.(*sameOnBoth)
		return ok, ok
	})
}

// Error leads with the note: a page shows a long error's first line.
func (s *sameOnBoth) Error() string { return s.note + ":\n" + s.err.Error() }
func (s *sameOnBoth) Unwrap() error { return s.err }

// diagnosticsIn lists the diagnostics of every failed engine call in
// err's tree, in order.
func diagnosticsIn(err error) []string {
	var out []string
	var visit func(error)
	visit = func(e error) {
		if ce, ok := e.(*engine.CallError); ok {
			out = append(out, ce.Diagnostics()...)
			return
		}
		switch x := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range x.Unwrap() {
				visit(c)
			}
		case interface{ Unwrap() error }:
			if c := x.Unwrap(); c != nil {
				visit(c)
			}
		}
	}
	visit(err)
	return out
}

func (r *Run) coldInventory() *inventory.Inventory {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.coldOracle
}

// applyOthers applies, in order, the side's other roots that come before
// the acted one (before) or after it, each with its stock workspace.
func (s *Side) applyOthers(ctx context.Context, before bool) error {
	for _, o := range s.Others {
		if o.Before != before {
			continue
		}
		if _, err := o.Stock.Init(ctx); err != nil {
			return fmt.Errorf("root %s: %w", o.Root.Name, err)
		}
		if _, err := o.Stock.Apply(ctx, engine.ApplyOptions{}); err != nil {
			return fmt.Errorf("root %s: %w", o.Root.Name, err)
		}
	}
	return nil
}

// destroyOthers destroys, in reverse order, the side's other roots that
// come before the acted one (before) or after it.
func (s *Side) destroyOthers(ctx context.Context, before bool) error {
	for i := len(s.Others) - 1; i >= 0; i-- {
		o := s.Others[i]
		if o.Before != before {
			continue
		}
		if _, err := s.otherWorkspace(o).Apply(ctx, engine.ApplyOptions{Destroy: true}); err != nil {
			return fmt.Errorf("destroy root %s: %w", o.Root.Name, err)
		}
	}
	return nil
}

// otherNames lists the other roots for a detail sentence.
func otherNames(others []*OtherRoot) string {
	var names []string
	for _, o := range others {
		names = append(names, "root "+o.Root.Name)
	}
	return strings.Join(names, ", ")
}

// otherWorkspace is the workspace that acts on another root now: stock
// until the migrate stage moved the estate's records into the cluster,
// this side's engine after (it wrote the records last; an older stock
// refuses a state a newer engine wrote).
func (s *Side) otherWorkspace(o *OtherRoot) *engine.Workspace {
	if s.live() && o.Engine != nil {
		return o.Engine
	}
	return o.Stock
}

// live reports whether the side's records are in the cluster.
func (s *Side) live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordsLive
}

// Typed is a clientset for the side's cluster (gauntlet's own reads of
// the records; not through the wire proxy).
func (s *Side) Typed() (kubernetes.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.typed == nil {
		cs, err := kubernetes.NewForConfig(s.Cluster.RESTConfig())
		if err != nil {
			return nil, fmt.Errorf("%s: clientset: %w", s.Name, err)
		}
		s.typed = cs
	}
	return s.typed, nil
}
