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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/expect"
	"github.com/gauntlet-k8s/gauntlet/internal/runstate"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate"
	"github.com/gauntlet-k8s/gauntlet/internal/tape"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Run runs the estate's gauntlet. Everything that can be checked without a
// cluster is checked first; once clusters start, they are torn down
// however Run ends - error, cancellation or panic. The returned error is
// for runs that could not happen; a run whose stages fail returns its
// result with ExitCode 1 and a nil error.
func Run(ctx context.Context, spec *estate.Spec, opts ...Option) (res *result.Run, err error) {
	o := &options{substrate: "local", logger: log.Discard(), stages: stage.Default()}
	for _, opt := range opts {
		opt.apply(o)
	}
	// No secret leaves the run: every log line, the result and the error
	// pass through one redactor (this defer runs last).
	red := newRedactor(spec)
	o.logger = redactingLogger{l: o.logger, r: red}
	kept := ""
	defer func() { res, err = red.finish(res, err, kept, o.logger) }()
	start := time.Now()
	SweepKilled(ctx, o.stateDir, o.logger)
	pre, err := check(ctx, spec, o)
	if err != nil {
		return nil, err
	}
	g, err := guard(o, spec.Name)
	if err != nil {
		return nil, err
	}
	defer g.end()
	plans, err := instrument(pre, o, red, g.track)
	if err != nil {
		return nil, err
	}
	work, kept, err := workFolder(spec, o, g)
	if err != nil {
		return nil, err
	}
	taped, err := openTape(o, work)
	if err != nil {
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
	res = newResult(spec, pre, o, start, taped)
	sides, err := bringUpSides(ctx, spec, pre, o, work, g, td, taped)
	if err != nil {
		if ctx.Err() == nil {
			return nil, err
		}
		return cancelledBeforeStages(ctx, res, o, start, err), nil
	}
	why := ""
	if o.reattach {
		if why, err = reattachProviders(sides, td, pre.subject, pre.oracle); err != nil {
			return nil, err
		}
	}
	r := newStageRun(spec, pre, o, work, sides)
	res.Substrate = sides[0].Cluster.Substrate()
	runStages(ctx, r, res, o, plans)
	if o.reattach {
		res.ReattachedProviders = reattachedSentence(why, pre.subject, pre.oracle)
	}
	res.Choices = r.Choices
	res.Duration = time.Since(start)
	if err := finishTape(taped, res, o); err != nil {
		return res, fmt.Errorf("%s: %w", spec.Name, err)
	}
	switch {
	case res.Cancelled != nil:
		res.ExitCode = cancelExitCode(ctx)
	case !res.Clear():
		res.ExitCode = 1
	}
	return res, nil
}

// finish scrubs a work folder that outlives the run once its clusters are
// gone, and redacts the result and the error. An error keeps its type
// (errors.Is: ErrOracleDiverged) unless it held a secret.
func (red *redactor) finish(res *result.Run, err error, kept string, l log.Logger) (*result.Run, error) {
	if kept != "" {
		if files, e := red.secrets.Scrub(kept); e != nil {
			l.Warnf("kept work folder %s: %v", kept, e)
		} else if len(files) > 0 {
			l.Infof("kept work folder %s: secret values replaced by their digests in %d file(s)", kept, len(files))
		}
	}
	if e := redactRun(red, res); e != nil && err == nil {
		res, err = nil, e
	}
	if err != nil {
		if t := red.text(err.Error()); t != err.Error() {
			err = errors.New(t)
		}
	}
	return res, err
}

// guarded is the run's record of everything it starts, so that if it is
// killed the next gauntlet process ends and removes what it left.
type guarded struct {
	state *runstate.State
	stop  context.CancelFunc
	log   log.Logger
}

// guard opens the run's record and starts reaping the processes
// orphaned under it.
func guard(o *options, estateName string) (*guarded, error) {
	state, err := runstate.Open(o.stateDir, "run "+estateName)
	if err != nil {
		return nil, err
	}
	reapCtx, stop := context.WithCancel(context.Background())
	if err := runstate.BecomeSubreaper(); err != nil {
		o.logger.Warnf("%v: provider plugins orphaned by a dead engine are only found by their process group", err)
	}
	go state.Reap(reapCtx)
	return &guarded{state: state, stop: stop, log: o.logger}, nil
}

// end ends what the teardown missed; it runs last, after the teardown
// stack.
func (g *guarded) end() {
	g.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := g.state.End(ctx)
	if err != nil {
		g.log.Warnf("teardown: %v", err)
	}
	if len(c.Killed)+len(c.Unmounted) > 0 {
		g.log.Warnf("teardown: %s", c)
	}
}

// track records a process group the run started.
func (g *guarded) track(pid int) {
	if err := g.state.Group(pid); err != nil {
		g.log.Warnf("%v", err)
	}
}

// mountRoot records a folder under which the run mounts.
func (g *guarded) mountRoot(dir string) {
	if err := g.state.MountRoot(dir); err != nil {
		g.log.Warnf("%v", err)
	}
}

// instrument hooks every engine call of both sides: its process group is
// tracked, its plans counted, the secrets it prints learnt, and a failed
// call's log kept where asked.
func instrument(pre *preflight, o *options, red *redactor, track func(int)) (*planTally, error) {
	pre.subject.OnEveryStart(track)
	pre.oracle.OnEveryStart(track)
	if o.failedLogs != "" {
		dir, err := filepath.Abs(o.failedLogs)
		if err != nil {
			return nil, err
		}
		o.failedLogs = dir
		pre.subject.KeepFailedLogs(filepath.Join(o.failedLogs, "subject"))
		pre.oracle.KeepFailedLogs(filepath.Join(o.failedLogs, "oracle"))
	}
	plans := &planTally{byKubeconfig: map[string]planCount{}}
	called := func(ws *engine.Workspace, c engine.Call) {
		plans.add(ws, c)
		red.secrets.Learn(c.Output)
	}
	pre.subject.OnEveryCall(called)
	pre.oracle.OnEveryCall(called)
	return plans, nil
}

// workFolder makes the run's folder, absolute (engines run in other
// directories). It is removed with the run unless the caller keeps it
// (kept is then its path).
func workFolder(spec *estate.Spec, o *options, g *guarded) (work, kept string, err error) {
	work = o.workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "gauntlet-run-"+spec.Name+"-"); err != nil {
			return "", "", err
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return "", "", err
	}
	if work, err = filepath.Abs(work); err != nil {
		return "", "", err
	}
	if o.keep || o.workDir != "" {
		return work, work, nil
	}
	if err := g.state.Dir(work); err != nil {
		os.RemoveAll(work)
		return "", "", err
	}
	return work, "", nil
}

// openTape records the oracle's side, or replays a recording.
func openTape(o *options, work string) (*tape.Side, error) {
	if o.oracleTape == nil {
		return nil, nil
	}
	if o.oracleTape.Recorded() {
		return o.oracleTape.t.Replay(work)
	}
	return o.oracleTape.t.Record(work)
}

// newResult is the run's result before any stage.
func newResult(spec *estate.Spec, pre *preflight, o *options, start time.Time, taped *tape.Side) *result.Run {
	res := &result.Run{
		Estate:    estateResult(spec),
		Subject:   engineResult(pre.subject, pre.tc, pre.subjectTool, o.enginePath != ""),
		Oracle:    engineResult(pre.oracle, pre.tc, pre.oracleTool, false),
		Commit:    o.commit,
		StartedAt: start.UTC(),
		Reproduce: o.reproduce,
		Sabotaged: o.sabotage,
	}
	if taped != nil && taped.Replaying() {
		res.OracleReplay = "the run with " + o.oracleTape.RecordedWith()
	}
	return res
}

// bringUpSides starts both clusters and readies each side's engine on
// its own (the oracle's through the tape when there is one).
func bringUpSides(ctx context.Context, spec *estate.Spec, pre *preflight, o *options, work string, g *guarded, td *teardown, taped *tape.Side) ([]*stage.Side, error) {
	prov, err := provider(ctx, o, pre, work, g.track, g.mountRoot)
	if err != nil {
		return nil, err
	}
	sides, err := startSides(ctx, prov, td, o, taped)
	if err != nil {
		return nil, err
	}
	for i, name := range []string{"subject", "oracle"} {
		if err := prepareSide(ctx, sides[i], spec, pre, work, name, o); err != nil {
			return nil, err
		}
		if name == "oracle" && taped != nil {
			taped.Proxy(sides[i].Engine.Kubeconfig, sides[i].Proxy)
			sides[i].UseTape(taped)
		}
	}
	return sides, nil
}

// cancelledBeforeStages is the result of a run stopped before its first
// stage: cancelled, not broken.
func cancelledBeforeStages(ctx context.Context, res *result.Run, o *options, start time.Time, err error) *result.Run {
	res.Cancelled = cancellation(ctx, "")
	o.logger.Infof("cancelled (%s) before the first stage: %v", res.Cancelled.Signal, err)
	for _, st := range o.stages.Stages() {
		in := st.Info()
		res.Stages = append(res.Stages, result.Stage{ID: in.ID, Title: in.Title, Headline: in.Headline,
			Requirements: in.AllRequirements(), Verdict: result.NotRun, Reason: cancelledReason, Cause: result.CauseCancelled})
	}
	res.Duration = time.Since(start)
	res.ExitCode = cancelExitCode(ctx)
	return res
}

// newStageRun is what every stage reads: the estate, both sides, and how
// to materialise a fresh copy of a root on a side.
func newStageRun(spec *estate.Spec, pre *preflight, o *options, work string, sides []*stage.Side) *stage.Run {
	r := &stage.Run{Spec: spec, Log: o.logger, Substrate: sides[0].Cluster.Capabilities(), Sabotage: o.sabotage}
	r.Subject, r.Oracle = sides[0], sides[1]
	r.Fresh = func(sd *stage.Side, root, name string) (*estate.Root, error) {
		return spec.Materialise(filepath.Join(work, sd.Name+"-"+name, root), root, pre.materials(root, o.substrate, sd.Engine.Kubeconfig))
	}
	return r
}

// finishTape ends the oracle's recording, or checks its replay: an
// oracle that answered otherwise than recorded is an error.
func finishTape(taped *tape.Side, res *result.Run, o *options) error {
	if taped == nil {
		return nil
	}
	if !taped.Replaying() {
		if res.Cancelled == nil {
			taped.Finish(res.Subject.Name + "@" + res.Subject.Pinned)
		}
		return nil
	}
	if err := taped.Diverged(); err != nil {
		return err
	}
	if left := taped.Unasked(); len(left) > 0 {
		// The subject cut a stage short: the oracle's answers after that
		// point are the recording's, as a reference should be.
		o.logger.Infof("oracle replay: %d recorded question(s) not asked, e.g. %s", len(left), left[0])
	}
	return nil
}

// SweepKilled ends and removes what gauntlet processes killed with
// SIGKILL left (see runstate.Sweep), saying what it cleaned. Every
// gauntlet command calls it first; Run does too. stateDir "" is
// runstate.DefaultDir(). Bounded to 30 s.
func SweepKilled(ctx context.Context, stateDir string, l log.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cleaned, err := runstate.Sweep(ctx, stateDir)
	for _, c := range cleaned {
		l.Warnf("cleaned up after gauntlet process %d (%s), which was killed: %s", c.Owner.PID, c.Command, c)
	}
	if err != nil {
		l.Warnf("cleaning up after killed gauntlet processes: %v", err)
	}
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

// callsSince is the calls of now not yet made at then, by subcommand.
func callsSince(now, then map[string]result.CallTally) map[string]result.CallTally {
	out := map[string]result.CallTally{}
	for k, t := range now {
		if n := t.N - then[k].N; n > 0 {
			out[k] = result.CallTally{N: n, MS: t.MS - then[k].MS}
		}
	}
	return out
}

func provider(ctx context.Context, o *options, pre *preflight, work string, track func(pid int), mountRoot func(string)) (func(i int) cluster.Provider, error) {
	if o.provider != nil {
		return func(int) cluster.Provider { return o.provider }, nil
	}
	c := substrate.Config{Logger: o.logger, Pins: pre.tc.Pins, ParentDir: work, Offline: o.offline, CacheDir: o.cacheDir, Track: track, MountRoot: mountRoot,
		Toolchain: func(context.Context) (*toolchain.Toolchain, error) { return pre.tc, nil }}
	if o.substrate != "kubeconfig" {
		p, err := substrate.New(ctx, o.substrate, c)
		return func(int) cluster.Provider { return p }, err
	}
	// Each side on its own existing cluster.
	ps := make([]cluster.Provider, len(o.kubeconfigs))
	for i, k := range o.kubeconfigs {
		c.Kubeconfig = k
		p, err := substrate.New(ctx, o.substrate, c)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return func(i int) cluster.Provider { return ps[i] }, nil
}

// startSides starts the subject's and the oracle's clusters in parallel,
// each with its wire proxy.
// With a tape, the oracle's cluster is recorded, or stands in for the
// recorded one and nothing starts.
func startSides(ctx context.Context, prov func(int) cluster.Provider, td *teardown, o *options, taped *tape.Side) ([]*stage.Side, error) {
	sides := []*stage.Side{{Name: "subject"}, {Name: "oracle"}}
	// The proxies reach the clusters directly: the engine's traffic is
	// recorded with its calls, never as gauntlet's own requests.
	direct := make([]func() *rest.Config, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, sd := range sides {
		if i == 1 && taped != nil && taped.Replaying() {
			sd.Cluster = taped.Cluster(nil)
			direct[i] = func() *rest.Config { c := sd.Cluster.RESTConfig(); c.WrapTransport = nil; return c }
			o.logger.Infof("%s cluster not started: its side is replayed from the run with %s", sd.Name, o.oracleTape.RecordedWith())
			continue
		}
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
			sd.Cluster, direct[i] = c, c.RESTConfig
			if i == 1 && taped != nil {
				sd.Cluster = taped.Cluster(c)
			}
			o.logger.Infof("%s cluster ready in %s (%s)", sd.Name, time.Since(started).Round(100*time.Millisecond), c.Substrate())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, sd := range sides {
		p, err := wire.Start(ctx, direct[i]())
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

// prepareSide materialises the side's roots - the acted one with its two
// workspaces, every other one with a stock workspace - all talking to the
// cluster through the side's wire proxy.
func prepareSide(ctx context.Context, sd *stage.Side, spec *estate.Spec, pre *preflight, work, name string, o *options) error {
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kc := filepath.Join(dir, "engine.kubeconfig")
	if err := sd.Proxy.WriteKubeconfig(kc); err != nil {
		return err
	}
	logs := filepath.Join(dir, "logs")
	acted := spec.ActedRoot(spec.StageRoot())
	specs := spec.RootSpecs()
	before := true
	for _, rs := range specs {
		rootDir := filepath.Join(dir, "root")
		if len(specs) > 1 {
			rootDir = filepath.Join(dir, "roots", rs.Name)
		}
		root, err := spec.Materialise(rootDir, rs.Name, pre.materials(rs.Name, o.substrate, kc))
		if err != nil {
			return err
		}
		records, err := root.Records()
		if err != nil {
			return err
		}
		if rs.Name != acted {
			ws, err := pre.oracle.Workspace(root.Dir, kc, filepath.Join(logs, rs.Name))
			if err != nil {
				return err
			}
			other := &stage.OtherRoot{Root: root, Stock: ws, Engine: ws, Before: before, Records: records}
			if name == "subject" {
				if other.Engine, err = pre.subject.Workspace(root.Dir, kc, filepath.Join(logs, rs.Name)); err != nil {
					return err
				}
			}
			sd.Others = append(sd.Others, other)
			continue
		}
		before = false
		sd.Root, sd.Records = root, records
		if sd.Stock, err = pre.oracle.Workspace(root.Dir, kc, logs); err != nil {
			return err
		}
		if name != "subject" {
			// The oracle's engine is the oracle CLI: one workspace for both.
			sd.Engine = sd.Stock
			continue
		}
		if sd.Engine, err = pre.subject.Workspace(root.Dir, kc, logs); err != nil {
			return err
		}
	}
	return keepLocal(ctx, sd)
}

// keepLocal prepares an estate whose roots keep their state on the
// kubernetes backend: the namespaces the records go to are made (the
// backend needs them before init; they are gauntlet's, part of the
// baseline, and stay), and every root is kept on local state until the
// migrate stage, its remote reads pointed at the local state files.
func keepLocal(ctx context.Context, sd *stage.Side) error {
	type rootRecords struct {
		root    *estate.Root
		records *estate.Records
	}
	all := []rootRecords{{sd.Root, sd.Records}}
	for _, o := range sd.Others {
		all = append(all, rootRecords{o.Root, o.Records})
	}
	cs, err := sd.Typed()
	if err != nil {
		return err
	}
	for _, rr := range all {
		reads, err := rr.root.RemoteReads()
		if err != nil {
			return err
		}
		local := map[string]string{}
		for _, rd := range reads {
			for _, from := range all {
				if from.records != nil && *from.records == rd.Records {
					local[rd.Name] = filepath.Join(from.root.Dir, "terraform.tfstate")
				}
			}
			if _, ok := local[rd.Name]; !ok {
				return fmt.Errorf("root %s: data.terraform_remote_state.%s reads %s, which no root of the estate keeps", rr.root.Name, rd.Name, rd.Records)
			}
		}
		if rr.records == nil && len(local) == 0 {
			continue
		}
		if rr.records != nil {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rr.records.Namespace}}
			if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("root %s: the records namespace %s: %w", rr.root.Name, rr.records.Namespace, err)
			}
		}
		if err := rr.root.WriteLocalOverride(local); err != nil {
			return fmt.Errorf("root %s: %w", rr.root.Name, err)
		}
	}
	return nil
}

// runStages runs every stage in order and records its result. Once ctx
// is cancelled the stage it interrupted is cancelled and every later one
// is not_run "cancelled": a stopped run is not a failed engine.
func runStages(ctx context.Context, r *stage.Run, res *result.Run, o *options, plans *planTally) {
	verdicts := map[string]result.Verdict{}
	byID := map[string]result.Stage{}
	stopped, notBack := "", ""
	for _, st := range o.stages.Stages() {
		in := st.Info()
		sr := result.Stage{ID: in.ID, Title: in.Title, Headline: in.HeadlineIn(r), Requirements: in.RequirementsIn(r)}
		nr := notRunReason(in, r, verdicts, o, res.Cancelled != nil)
		if nr.reason == "" && stopped != "" {
			nr = notRun{result.CauseStopped, "stopped early after " + stopped, ""}
		}
		if nr.reason == "" && notBack != "" && actsOnDeployed(o.stages, in.ID) {
			nr = notRun{result.CauseStopped, notBack, ""}
		}
		switch {
		case nr.reason != "":
			sr.Verdict, sr.Reason, sr.Cause, sr.BlockedBy = result.NotRun, nr.reason, nr.cause, nr.blockedBy
			o.logger.Infof("stage %-20s not run: %s", in.ID, nr.reason)
		case ctx.Err() != nil:
			// Stopped between two stages: this one was next.
			res.Cancelled = cancellation(ctx, in.ID)
			sr.Verdict = result.Cancelled
			sr.Detail = fmt.Sprintf("Cancelled by %s before it started.", res.Cancelled.Signal)
		default:
			cp, cpErr := r.Checkpoint()
			sr = runOne(ctx, st, r, sr, o, plans)
			sr.Known = known(r.Spec, sr)
			if why := returnAfterFailure(ctx, r, in.ID, &sr, cp, cpErr, o); why != "" {
				notBack = why
			}
			if ctx.Err() != nil {
				res.Cancelled = cancellation(ctx, in.ID)
				sr.Verdict = result.Cancelled
				sr.Detail = strings.TrimSpace(fmt.Sprintf("Cancelled by %s after %s; it had recorded: %s",
					res.Cancelled.Signal, sr.Duration.Round(100*time.Millisecond), orNothing(sr.Detail)))
			}
		}
		if sr.Verdict == result.Cancelled {
			o.logger.Infof("stage %-20s cancelled (%s): the remaining stages do not run", in.ID, res.Cancelled.Signal)
		}
		verdicts[in.ID] = sr.Verdict
		byID[in.ID] = sr
		if stopped == "" && sr.Verdict != result.NotRun && sr.Verdict != result.NotApplicable && o.stopAfter != nil && o.stopAfter(sr) {
			stopped = in.ID
		}
		res.RunOrder = append(res.RunOrder, in.ID)
	}
	for _, id := range o.stages.Shown() {
		if sr, ok := byID[id]; ok {
			res.Stages = append(res.Stages, sr)
		}
	}
}

// returnAfterFailure puts both sides back where they were before a stage
// that failed, so the next stages measure the world they were written
// for, not what the failure left (a failure is reported once, never as a
// cascade). It appends what it did to the stage's detail, or returns the
// reason the stages after it do not run. Only stages that act on the
// deployed estate are followed this way; a sabotaged run's stages fail by
// design over an untouched world, so it is not.
func returnAfterFailure(ctx context.Context, r *stage.Run, id string, sr *result.Stage, cp *stage.Checkpoint, cpErr error, o *options) string {
	if (sr.Verdict != result.Fail && sr.Verdict != result.Limitation) || o.sabotage || ctx.Err() != nil || !actsOnDeployed(o.stages, id) ||
		(o.stopAfter != nil && o.stopAfter(*sr)) {
		return ""
	}
	notBack := func(err error) string {
		o.logger.Warnf("stage %s failed and the world could not be put back: %v", id, err)
		return fmt.Sprintf("the world after %s failed is not the baseline (%v)", id, err)
	}
	if cpErr != nil {
		return notBack(cpErr)
	}
	did, err := r.ReturnTo(ctx, cp)
	if err != nil {
		return notBack(err)
	}
	sr.Detail = strings.TrimSpace(sr.Detail + " After it failed, the runner put both sides back where they were before it: " + did + ".")
	o.logger.Infof("stage %s failed; both sides put back: %s", id, did)
	return ""
}

// actsOnDeployed says whether a stage acts on the deployed estate between
// migrate and the teardown: the stages one failure could leave a changed
// world to.
func actsOnDeployed(g *stage.Registry, id string) bool {
	i := g.Index(id)
	return i > g.Index("migrate") && i < g.Index("day2_teardown")
}

// cancelledReason is the reason of every stage a cancellation kept from
// running.
const cancelledReason = "cancelled"

func orNothing(s string) string {
	if strings.TrimSpace(s) == "" {
		return "nothing"
	}
	return s
}

// SignalCause is the cause to cancel a run's context with when a signal
// stops it (context.WithCancelCause): the result then names the signal
// and the exit code is 128+its number, as a shell reports it.
type SignalCause struct{ Sig os.Signal }

func (c SignalCause) Error() string     { return "stopped by " + c.Sig.String() }
func (c SignalCause) Signal() os.Signal { return c.Sig }

// ExitCode is 128 + the signal's number, as a shell reports a process a
// signal ended (130 for SIGINT, 143 for SIGTERM); 1 for a signal with no
// number. The one place gauntlet computes it.
func (c SignalCause) ExitCode() int {
	if n, ok := c.Sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// cancellation says how ctx was stopped, during stage (empty before the
// first one).
func cancellation(ctx context.Context, stage string) *result.Cancellation {
	cause := context.Cause(ctx)
	var sc SignalCause
	switch {
	case errors.As(cause, &sc):
		return &result.Cancellation{Stage: stage, Signal: sc.Sig.String()}
	case cause != nil:
		return &result.Cancellation{Stage: stage, Signal: strings.TrimPrefix(cause.Error(), "context ")}
	}
	return &result.Cancellation{Stage: stage, Signal: "cancelled"}
}

// cancelExitCode is 128+signal for a run a signal stopped (130 for
// SIGINT, 143 for SIGTERM), else 1.
func cancelExitCode(ctx context.Context) int {
	var sc SignalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.ExitCode()
	}
	return 1
}

// notRunReason says why a stage does not run, or is empty. A cancelled
// run keeps the reasons a stage would never have run for (the estate
// skips it or does not declare it, it was not selected, the engine
// cannot) and says "cancelled" for the rest. What the estate asks for
// comes before what the engine can do, so the reason a stage is not run
// for this estate is the same on every engine.
func notRunReason(in stage.Info, r *stage.Run, verdicts map[string]result.Verdict, o *options, cancelled bool) notRun {
	if why, ok := r.Spec.Skip[in.ID]; ok {
		return notRun{result.CauseSkipped, "the estate skips it: " + why, ""}
	}
	if len(o.only) > 0 && !slices.Contains(o.only, in.ID) && !o.stages.DependsOn(in.ID, o.only) {
		return notRun{result.CauseNotSelected, "not selected for this run", ""}
	}
	if why := in.Undeclared(r.Spec); why != "" {
		return notRun{result.CauseUndeclared, why, ""}
	}
	prof := r.Subject.Engine.Engine.Profile
	for _, c := range in.Needs {
		if !prof.Has(c) {
			return notRun{result.CauseCapability, prof.Needs(c), ""}
		}
	}
	if cancelled {
		return notRun{result.CauseCancelled, cancelledReason, ""}
	}
	for _, dep := range in.After {
		if v := verdicts[dep]; v != result.Pass && !(o.sabotage && v == result.Fail) {
			return notRun{result.CauseBlocked, fmt.Sprintf("%s did not pass (%s)", dep, v), dep}
		}
	}
	return notRun{}
}

// notRun is why a stage does not run: empty reason when it runs.
type notRun struct {
	cause     result.Cause
	reason    string
	blockedBy string
}

func runOne(ctx context.Context, st stage.Stage, r *stage.Run, sr result.Stage, o *options, plans *planTally) (out result.Stage) {
	o.logger.Infof("stage %-20s started", st.Info().ID)
	if r.Oracle.Tape != nil {
		r.Oracle.Tape.Scope(st.Info().ID)
	}
	rec := stage.NewRecorder()
	calls0 := [2]int{r.Subject.Calls(), r.Oracle.Calls()}
	by0 := [2]map[string]result.CallTally{r.Subject.CallsBy(), r.Oracle.CallsBy()}
	time0 := [2]time.Duration{r.Subject.CallTime(), r.Oracle.CallTime()}
	reqs0 := [2]int{r.Subject.Proxy.Total(), r.Oracle.Proxy.Total()}
	seq0 := [2]int{r.Subject.Proxy.Seq(), r.Oracle.Proxy.Seq()}
	plans0 := [2]planCount{plans.get(r.Subject.Engine.Kubeconfig), plans.get(r.Oracle.Engine.Kubeconfig)}
	start := time.Now()
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		if err := st.Run(ctx, r, rec); err != nil {
			return err
		}
		// Once the estate's records live in the cluster, every stage ends
		// with the record-store checks.
		if r.RecordsLive() {
			return r.CheckRecords(ctx, rec)
		}
		return nil
	}()
	sr.Duration = time.Since(start)
	rec.Figure("subject.engine_calls", r.Subject.Calls()-calls0[0])
	rec.Figure("oracle.engine_calls", r.Oracle.Calls()-calls0[1])
	rec.Figure("subject.engine_ms", int((r.Subject.CallTime() - time0[0]).Milliseconds()))
	rec.Figure("oracle.engine_ms", int((r.Oracle.CallTime() - time0[1]).Milliseconds()))
	rec.Figure("subject.api_requests", r.Subject.Proxy.Total()-reqs0[0])
	rec.Figure("oracle.api_requests", r.Oracle.Proxy.Total()-reqs0[1])
	for i, sd := range []*stage.Side{r.Subject, r.Oracle} {
		p := plans.get(sd.Engine.Kubeconfig)
		rec.Figure(sd.Name+".plans", p.plans-plans0[i].plans)
		rec.Figure(sd.Name+".planned_changes", p.changes-plans0[i].changes)
	}
	if rec.SummaryFinding(err) {
		err = nil // a finding about the engine, recorded as the check it fails
	}
	rec.Fill(&sr)
	sr.Calls = map[string]map[string]result.CallTally{}
	for i, sd := range []*stage.Side{r.Subject, r.Oracle} {
		if d := callsSince(sd.CallsBy(), by0[i]); len(d) > 0 {
			sr.Calls[sd.Name] = d
		}
	}
	sr.Requests = map[string]map[string]int{}
	for i, sd := range []*stage.Side{r.Subject, r.Oracle} {
		if n := requestCounts(sd.Proxy.Since(seq0[i])); len(n) > 0 {
			sr.Requests[sd.Name] = n
		}
	}
	if v, reason, cause, ok := notApplicable(err); ok {
		sr.Verdict, sr.Reason, sr.Cause = v, reason, cause
		o.logger.Infof("stage %-20s %s: %s", st.Info().ID, strings.ReplaceAll(string(v), "_", " "), reason)
		return sr
	}
	if err != nil {
		sr.Aborted, sr.StoppedBy = err.Error(), result.SidesOf(err)
	}
	switch {
	case err != nil && errors.Is(err, tape.ErrDiverged):
		// The recording had no answer for stock: gauntlet could not do its
		// part, which is neither stock's limitation nor the engine's fail.
		sr.Verdict, sr.Cause = result.NotRun, result.CauseStopped
		sr.Reason = "the oracle's replay diverged from its recording, so stock's side could not be answered; run it with a live oracle"
	case err != nil && result.StockAlone(err) && !rec.Failed():
		// Stock failed a step the engine under test finished: the stage
		// stops short for stock's reason, never the engine's fail.
		sr.Verdict = result.Limitation
		sr.Detail = fmt.Sprintf("%s LIMITATION: stock could not finish the stage, the engine under test did its part, so the rest is not compared and it is not the engine's fail: %v", sr.Detail, err)
	case err != nil && stage.SameOnBoth(err) && !rec.Failed():
		// Both engines stopped at the same step with the same errors (a
		// provider's defect, or the estate's): the engine did what stock
		// did, so it is not the engine's fail, and never a pass.
		sr.Verdict = result.Limitation
		sr.Detail = fmt.Sprintf("%s LIMITATION: stock stops at the same step with the same errors, so it is not the engine's fail; the rest is not compared: %v", sr.Detail, err)
	case err != nil:
		sr.Verdict = result.Fail
		sr.Detail = fmt.Sprintf("%s The stage could not finish: %v", sr.Detail, err)
	case rec.Failed():
		sr.Verdict = result.Fail
	case rec.Limited():
		sr.Verdict = result.Limitation
	default:
		sr.Verdict = result.Pass
	}
	if ctx.Err() == nil { // else runStages says it was cancelled
		o.logger.Infof("stage %-20s %s in %s", st.Info().ID, sr.Verdict, sr.Duration.Round(100*time.Millisecond))
	}
	return sr
}

// notApplicable is the verdict of a stage that returned
// stage.NotApplicable, with its reason: not_applicable when the root's
// shape cannot carry the stage, else not_run (gauntlet found no plan for
// it, or the estate does not declare it).
func notApplicable(err error) (result.Verdict, string, result.Cause, bool) {
	var na *stage.NotApplicable
	switch {
	case !errors.As(err, &na):
		return "", "", "", false
	case na.Shape:
		return result.NotApplicable, na.Reason, "", true
	}
	return result.NotRun, na.Reason, na.Cause, true
}

// requestCounts counts requests by verb and resource ("get configmaps").
func requestCounts(reqs []wire.Request) map[string]int {
	out := map[string]int{}
	for _, q := range reqs {
		out[q.Key().String()]++
	}
	return out
}

// planTally counts, per side (each side's workspaces share its
// kubeconfig), the calls that printed a plan and the changes those plans
// counted: figures a repeated run must reproduce exactly.
type planTally struct {
	mu           sync.Mutex
	byKubeconfig map[string]planCount
}

type planCount struct{ plans, changes int }

func (t *planTally) add(ws *engine.Workspace, c engine.Call) {
	n, ok := engine.PrintedPlan(c.Output)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.byKubeconfig[ws.Kubeconfig]
	p.plans++
	p.changes += n.Import + n.Add + n.Change + n.Destroy
	t.byKubeconfig[ws.Kubeconfig] = p
}

func (t *planTally) get(kubeconfig string) planCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byKubeconfig[kubeconfig]
}

func estateResult(s *estate.Spec) result.Estate {
	e := result.Estate{Name: s.Name, Title: s.Title, Description: s.Description, Lane: s.Lane, Set: s.Set}
	var repos, commits, paths, sums []string
	for _, src := range s.Sources() {
		repos, commits = append(repos, src.Repository), append(commits, src.Commit)
		if len(src.Files) == 0 {
			paths, sums = append(paths, src.Path), append(sums, src.SHA256)
			continue
		}
		// A list source is recorded as its folder and files, and one
		// sha256 over its sha256sums-style listing (each file's own is in
		// estate.yaml).
		var names, listing []string
		for _, p := range src.Pinned() {
			names = append(names, p.RepoPath)
			listing = append(listing, p.SHA256+"  "+p.RepoPath+"\n")
		}
		h := sha256.Sum256([]byte(strings.Join(listing, "")))
		paths, sums = append(paths, strings.Join(names, ", ")), append(sums, hex.EncodeToString(h[:]))
		e.SourceSHA256Listing = true
	}
	e.SourceRepo, e.SourceCommit = strings.Join(slices.Compact(repos), " + "), strings.Join(slices.Compact(commits), " + ")
	e.SourcePath, e.SourceSHA256 = strings.Join(paths, " + "), strings.Join(sums, " + ")
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

// known is the estate's word on a stage that failed exactly as its
// findings list it (internal/expect judges the same way), nil otherwise:
// a failure that merely shares its stage with a listed one is not known.
func known(spec *estate.Spec, sr result.Stage) *result.Known {
	f, ok := spec.Findings[sr.ID]
	if !ok || len(expect.Unlike(f, sr)) > 0 {
		return nil
	}
	k := &result.Known{Why: f.Why}
	if d := f.Difference; d != nil {
		k.Difference, k.Engines, k.References = true, d.Engines, d.References
	}
	return k
}
