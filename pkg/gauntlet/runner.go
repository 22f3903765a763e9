package gauntlet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster/kind"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster/kubeconfig"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster/local"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/wire"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// Run runs the estate's gauntlet. Everything that can be checked without a
// cluster is checked first; once clusters start, they are torn down
// however Run ends - error, cancellation or panic. The returned error is
// for runs that could not happen; a run whose stages fail returns its
// result with ExitCode 1 and a nil error.
func Run(ctx context.Context, spec *estate.Spec, opts ...Option) (res *result.Run, err error) {
	o := &options{substrate: "local", logger: log.Discard()}
	for _, opt := range opts {
		opt.apply(o)
	}
	start := time.Now()
	pre, err := check(ctx, spec, o)
	if err != nil {
		return nil, err
	}
	work := o.workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "gauntlet-run-"+spec.Name+"-"); err != nil {
			return nil, err
		}
		if !o.keep {
			defer os.RemoveAll(work)
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	// Engines run in other directories: every path they get is absolute.
	if work, err = filepath.Abs(work); err != nil {
		return nil, err
	}

	td := &teardown{log: o.logger}
	defer func() {
		if p := recover(); p != nil {
			td.run()
			panic(fmt.Sprintf("%v\n%s", p, debug.Stack()))
		}
		td.run()
	}()

	prov, err := provider(o, pre, work)
	if err != nil {
		return nil, err
	}
	sides, err := startSides(ctx, prov, td, o)
	if err != nil {
		return nil, err
	}
	r := &stage.Run{Spec: spec, Log: o.logger, Substrate: sides[0].Cluster.Capabilities(), Sabotage: o.sabotage}
	for i, name := range []string{"subject", "oracle"} {
		if err := prepareSide(ctx, sides[i], spec, pre, work, name, o); err != nil {
			return nil, err
		}
	}
	r.Subject, r.Oracle = sides[0], sides[1]
	r.Fresh = func(sd *stage.Side, name string) (*estate.Root, error) {
		return spec.Materialise(filepath.Join(work, sd.Name+"-"+name), pre.sourceFile, o.substrate, providersTF(pre.tc.Pins))
	}
	res = &result.Run{
		Estate:    estateResult(spec),
		Subject:   engineResult(pre.subject, pre.tc, "tofu", o.enginePath != ""),
		Oracle:    engineResult(pre.oracle, pre.tc, "terraform", false),
		Substrate: sides[0].Cluster.Substrate(),
		Commit:    o.commit,
		StartedAt: start.UTC(),
		Reproduce: o.reproduce,
		Sabotaged: o.sabotage,
	}
	runStages(ctx, r, res, o)
	res.Duration = time.Since(start)
	if !res.Clear() {
		res.ExitCode = 1
	}
	return res, nil
}

// teardown is a stack of cleanups run once, in reverse, whatever happens.
type teardown struct {
	mu  sync.Mutex
	fns []func(context.Context) error
	log log.Logger
}

func (t *teardown) push(f func(context.Context) error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fns = append(t.fns, f)
}

func (t *teardown) run() {
	t.mu.Lock()
	fns := t.fns
	t.fns = nil
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := len(fns) - 1; i >= 0; i-- {
		if err := fns[i](ctx); err != nil {
			t.log.Warnf("teardown: %v", err)
		}
	}
}

func provider(o *options, pre *preflight, work string) (func(i int) cluster.Provider, error) {
	switch o.substrate {
	case "local":
		p := local.New(pre.tc, local.WithLogger(o.logger), local.WithParentDir(work))
		return func(int) cluster.Provider { return p }, nil
	case "kind":
		opts := []kind.Option{kind.WithLogger(o.logger), kind.WithOffline(o.offline)}
		if o.cacheDir != "" {
			opts = append(opts, kind.WithCacheDir(o.cacheDir))
		}
		p := kind.New(pre.tc.Pins, opts...)
		return func(int) cluster.Provider { return p }, nil
	case "kubeconfig":
		return func(i int) cluster.Provider { return kubeconfig.New(o.kubeconfigs[i]) }, nil
	}
	return nil, fmt.Errorf("substrate %q", o.substrate)
}

// startSides starts the subject's and the oracle's clusters in parallel,
// each with its wire proxy.
func startSides(ctx context.Context, prov func(int) cluster.Provider, td *teardown, o *options) ([]*stage.Side, error) {
	sides := []*stage.Side{{Name: "subject"}, {Name: "oracle"}}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, sd := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started := time.Now()
			c, err := prov(i).Start(ctx, sd.Name)
			if err != nil {
				errs[i] = err
				return
			}
			td.push(c.Stop)
			sd.Cluster = c
			o.logger.Infof("%s cluster ready in %s (%s)", sd.Name, time.Since(started).Round(100*time.Millisecond), c.Substrate())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, sd := range sides {
		p, err := wire.Start(ctx, sd.Cluster.RESTConfig())
		if err != nil {
			return nil, fmt.Errorf("%s: wire proxy: %w", sd.Name, err)
		}
		td.push(p.Close)
		sd.Proxy = p
		dc, err := discovery.NewDiscoveryClientForConfig(sd.Cluster.RESTConfig())
		if err != nil {
			return nil, err
		}
		sd.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
		if sd.Dynamic, err = dynamic.NewForConfig(sd.Cluster.RESTConfig()); err != nil {
			return nil, err
		}
	}
	return sides, nil
}

// prepareSide materialises the side's root and its two workspaces, both
// talking to the cluster through the side's wire proxy.
func prepareSide(ctx context.Context, sd *stage.Side, spec *estate.Spec, pre *preflight, work, name string, o *options) error {
	dir := filepath.Join(work, name)
	root, err := spec.Materialise(filepath.Join(dir, "root"), pre.sourceFile, o.substrate, providersTF(pre.tc.Pins))
	if err != nil {
		return err
	}
	sd.Root = root
	kc := filepath.Join(dir, "engine.kubeconfig")
	if err := sd.Proxy.WriteKubeconfig(kc); err != nil {
		return err
	}
	logs := filepath.Join(dir, "logs")
	if sd.Stock, err = pre.oracle.Workspace(root.Dir, kc, logs); err != nil {
		return err
	}
	if name != "subject" {
		// The oracle's engine is the oracle CLI: one workspace for both.
		sd.Engine = sd.Stock
		return nil
	}
	sd.Engine, err = pre.subject.Workspace(root.Dir, kc, logs)
	return err
}

// runStages runs every stage in order and records its result.
func runStages(ctx context.Context, r *stage.Run, res *result.Run, o *options) {
	verdicts := map[string]result.Verdict{}
	byID := map[string]result.Stage{}
	for _, st := range stage.All() {
		sr := result.Stage{ID: st.ID(), Title: st.Title(), Headline: st.Headline(), Requirements: st.Requirements()}
		if reason := notRunReason(st, r, verdicts, o); reason != "" {
			sr.Verdict, sr.Reason = result.NotRun, reason
			o.logger.Infof("stage %-20s not run: %s", st.ID(), reason)
		} else {
			sr = runOne(ctx, st, r, sr, o)
		}
		verdicts[st.ID()] = sr.Verdict
		byID[st.ID()] = sr
		res.RunOrder = append(res.RunOrder, st.ID())
	}
	for _, id := range stage.Canonical() {
		if sr, ok := byID[id]; ok {
			res.Stages = append(res.Stages, sr)
		}
	}
}

func notRunReason(st stage.Stage, r *stage.Run, verdicts map[string]result.Verdict, o *options) string {
	if why, ok := r.Spec.Skip[st.ID()]; ok {
		return "the estate skips it: " + why
	}
	if len(o.only) > 0 && !slices.Contains(o.only, st.ID()) && !needed(st.ID(), o.only) {
		return "not selected for this run"
	}
	prof := r.Subject.Engine.Engine.Profile
	for _, c := range st.Needs() {
		if !prof.Has(c) {
			return fmt.Sprintf("engine %s %s has no %s", prof.Name, prof.Version, c)
		}
	}
	for _, dep := range st.After() {
		if v := verdicts[dep]; v != result.Pass && !(o.sabotage && v == result.Fail) {
			return fmt.Sprintf("%s did not pass (%s)", dep, v)
		}
	}
	return ""
}

// needed reports whether a stage is a dependency of a selected one.
func needed(id string, only []string) bool {
	deps := map[string][]string{}
	for _, st := range stage.All() {
		deps[st.ID()] = st.After()
	}
	var walk func(string) bool
	walk = func(s string) bool {
		for _, d := range deps[s] {
			if d == id || walk(d) {
				return true
			}
		}
		return false
	}
	for _, s := range only {
		if walk(s) {
			return true
		}
	}
	return false
}

func runOne(ctx context.Context, st stage.Stage, r *stage.Run, sr result.Stage, o *options) (out result.Stage) {
	o.logger.Infof("stage %-20s started", st.ID())
	rec := stage.NewRecorder()
	calls0 := [2]int{r.Subject.Calls(), r.Oracle.Calls()}
	time0 := [2]time.Duration{r.Subject.CallTime(), r.Oracle.CallTime()}
	reqs0 := [2]int{r.Subject.Proxy.Total(), r.Oracle.Proxy.Total()}
	start := time.Now()
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		return st.Run(ctx, r, rec)
	}()
	sr.Duration = time.Since(start)
	rec.Figure("subject.engine_calls", r.Subject.Calls()-calls0[0])
	rec.Figure("oracle.engine_calls", r.Oracle.Calls()-calls0[1])
	rec.Figure("subject.engine_ms", int((r.Subject.CallTime() - time0[0]).Milliseconds()))
	rec.Figure("oracle.engine_ms", int((r.Oracle.CallTime() - time0[1]).Milliseconds()))
	rec.Figure("subject.api_requests", r.Subject.Proxy.Total()-reqs0[0])
	rec.Figure("oracle.api_requests", r.Oracle.Proxy.Total()-reqs0[1])
	var mismatch *engine.SummaryMismatch
	if errors.As(err, &mismatch) {
		// The engine's two accounts of one plan disagree: a finding about
		// the engine, recorded as the check it fails. No corruption of the
		// world makes a sound engine's two outputs disagree, so no BREAK.
		rec.Check("the plan's printed summary agrees with its JSON plan", mismatch, "")
		err = nil
	}
	rec.Fill(&sr)
	switch {
	case err != nil:
		sr.Verdict = result.Fail
		sr.Detail = fmt.Sprintf("%s The stage could not finish: %v", sr.Detail, err)
	case rec.Failed():
		sr.Verdict = result.Fail
	default:
		sr.Verdict = result.Pass
	}
	o.logger.Infof("stage %-20s %s in %s", st.ID(), sr.Verdict, sr.Duration.Round(100*time.Millisecond))
	return sr
}

func estateResult(s *estate.Spec) result.Estate {
	e := result.Estate{Name: s.Name, Title: s.Title, Description: s.Description, Lane: s.Lane, Set: s.Set}
	if src := s.Source; src != nil {
		e.SourceRepo, e.SourceCommit, e.SourcePath, e.SourceSHA256 = src.Repository, src.Commit, src.Path, src.SHA256
	}
	return e
}

// engineResult records an engine, the sha256 of its binary and, unless it
// was given by path, the version its pin says, so the page can say when a
// run is stale and a proof can name exactly which binary it is about.
func engineResult(e *engine.Engine, tc *toolchain.Toolchain, tool string, byPath bool) result.Engine {
	out := result.Engine{Name: e.Profile.Name, Version: e.Profile.Version, Display: e.Profile.Display, Path: e.Bin}
	if f, err := os.Open(e.Bin); err == nil {
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			out.SHA256 = hex.EncodeToString(h.Sum(nil))
		}
		f.Close()
	}
	if pin, ok := tc.Pins.Tool(tool); ok && !byPath {
		out.Pinned = pin.Version
	}
	return out
}
