// Package gauntlet runs an estate through its life on two clusters - the
// engine under test on one, stock terraform as the oracle on the other -
// and returns the result model the evidence renderers and the conformance
// ledger read.
//
//	spec, _ := estate.Load("estates", "corpus-k8s-metrics-server")
//	run, err := gauntlet.Run(ctx, spec, gauntlet.WithSubstrate("local"))
package gauntlet

import (
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// Option configures Run.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	substrate   string
	kubeconfigs [2]string
	enginePath  string
	subjectTool string
	oracleTool  string
	cacheDir    string
	workDir     string
	stateDir    string
	logger      log.Logger
	offline     bool
	commit      string
	reproduce   string
	keep        bool
	failedLogs  string
	only        []string
	stopAfter   func(result.Stage) bool
	sabotage    bool
	oracleTape  *OracleTape
	stages      *stage.Registry
	provider    cluster.Provider
	reattach    bool
}

// WithProvider runs both sides on clusters p starts: a substrate of the
// caller's own, named name on the evidence page's reproduce line.
func WithProvider(name string, p cluster.Provider) Option {
	return optionFunc(func(o *options) { o.substrate, o.provider = name, p })
}

// WithRegistry runs the stages of g instead of the gauntlet's own
// (stage.Default): a caller's own stages registered after them, say.
func WithRegistry(g *stage.Registry) Option { return optionFunc(func(o *options) { o.stages = g }) }

// WithSubstrate picks the cluster provider: "local" (default), "kind" or
// "kubeconfig" (see WithKubeconfigs).
func WithSubstrate(name string) Option { return optionFunc(func(o *options) { o.substrate = name }) }

// WithKubeconfigs gives the subject's and the oracle's existing clusters
// for the "kubeconfig" substrate. They must be two different clusters.
func WithKubeconfigs(subject, oracle string) Option {
	return optionFunc(func(o *options) { o.kubeconfigs = [2]string{subject, oracle} })
}

// WithEngine runs the engine at path as the subject. Default: the pinned
// OpenTofu from the toolchain.
func WithEngine(path string) Option { return optionFunc(func(o *options) { o.enginePath = path }) }

// WithEnginePin runs a pinned engine as the subject: a spec such as
// "tofu@1.9.4" or "terraform@1.5.7" (see toolchain.Pins.Engine), built on
// demand. Default: the pinned OpenTofu.
func WithEnginePin(spec string) Option {
	return optionFunc(func(o *options) { o.subjectTool = spec })
}

// WithOraclePin makes a pinned engine the oracle ("tofu@1.12.6").
// Default: the pinned terraform.
func WithOraclePin(spec string) Option {
	return optionFunc(func(o *options) { o.oracleTool = spec })
}

// WithCacheDir sets the toolchain and corpus cache. Default: the
// toolchain's default (GAUNTLET_CACHE or the user cache dir).
func WithCacheDir(dir string) Option { return optionFunc(func(o *options) { o.cacheDir = dir }) }

// WithWorkDir is where roots and engine logs are written. Default: a new
// temporary directory, removed after the run unless WithKeep.
func WithWorkDir(dir string) Option { return optionFunc(func(o *options) { o.workDir = dir }) }

// WithStateDir is where the run records what it starts, for the next
// gauntlet process to clean up if this one is killed. Default:
// runstate.DefaultDir(), where every gauntlet command looks.
func WithStateDir(dir string) Option { return optionFunc(func(o *options) { o.stateDir = dir }) }

// WithFailedLogs keeps the log of every engine call that fails in
// dir/subject and dir/oracle, and the run's details cite those copies: the
// work directory holding the logs is removed after the run. Some failures
// are expected (a stale plan refused) and kept too. Default: none kept
// (details cite the work directory, gone unless WithKeep).
func WithFailedLogs(dir string) Option { return optionFunc(func(o *options) { o.failedLogs = dir }) }

// WithKeep keeps the work directory (roots, states, logs). Default: false.
func WithKeep(keep bool) Option { return optionFunc(func(o *options) { o.keep = keep }) }

// WithLogger receives live progress. Default: log.Discard().
func WithLogger(l log.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithOffline never tries a download while resolving the toolchain.
func WithOffline(offline bool) Option { return optionFunc(func(o *options) { o.offline = offline }) }

// WithCommit records the gauntlet commit the run was made at.
func WithCommit(commit string) Option { return optionFunc(func(o *options) { o.commit = commit }) }

// WithReproduce records the command that reproduces the run.
func WithReproduce(cmd string) Option { return optionFunc(func(o *options) { o.reproduce = cmd }) }

// WithStages runs only these stages (and reports the others not_run).
// Default: every stage.
func WithStages(ids ...string) Option {
	return optionFunc(func(o *options) { o.only = append(o.only, ids...) })
}

// WithStopAfter ends the run early: once stop returns true for a stage's
// result, the stages after it are reported not_run ("stopped early").
// `gauntlet mutants` stops a mutant's run once an expected stage killed
// it. Default: every stage runs.
func WithStopAfter(stop func(result.Stage) bool) Option {
	return optionFunc(func(o *options) { o.stopAfter = stop })
}

// WithReattachedProviders starts each side's provider plugins once, in
// their debug mode, and has every engine call but init and the
// interrupted applies reach them through TF_REATTACH_PROVIDERS, instead
// of each call starting its own: about a third of a call's cost. An
// estate with kubernetes_manifest resources keeps the kubernetes provider
// per call (it caches the cluster's API discovery for the life of its
// process, so it would send fewer requests than production). The
// evidence page says it was on. Default: off, until runs
// with it and without show the same verdicts on every estate
// (docs/performance.md).
func WithReattachedProviders(on bool) Option {
	return optionFunc(func(o *options) { o.reattach = on })
}

// WithSabotage runs every BREAK with its corruption skipped and its
// measurement kept: a test of the BREAKs themselves, in which each must come
// out unproved (a BREAK that still proves is tautological). Stages then run
// whatever their dependencies' verdicts, and the run is never clear.
// Default: off.
func WithSabotage() Option { return optionFunc(func(o *options) { o.sabotage = true }) }
