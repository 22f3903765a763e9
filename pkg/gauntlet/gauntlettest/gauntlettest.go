// Package gauntlettest runs an estate's gauntlet as a Go test, so an estate
// is data - a folder with an estate.yaml - and needs no test code of its own.
// This repository's estates, the Bazel estate_test macro and any other
// module that keeps estates call it the same way:
//
//	func TestGauntlet(t *testing.T) { gauntlettest.Run(t, "estates/corpus-k8s-metrics-server") }
//
// Each stage is a subtest: it passes when the stage passed with every check
// proven by a BREAK, it is skipped - saying why - when the stage did not run
// for a reason the estate or the engine declares, and it fails otherwise. A
// stage the estate lists under `findings:` must fail (the engine or
// provider misbehaves there, and the finding says how); once it passes, the
// test fails until the finding is removed.
package gauntlettest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/corpus"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/expect"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// EvidenceEnv names the directory a run's evidence is written to
// (<dir>/<estate>[/sabotaged]); unset, each run writes to its test's temp dir.
const EvidenceEnv = "GAUNTLET_EVIDENCE_DIR"

// Timeout bounds one gauntlet run (a clear run of the largest estate here
// takes about 3 minutes on two idle cores).
const Timeout = 20 * time.Minute

// Run loads the estate in dir, runs its gauntlet with opts (after the
// defaults: offline, progress to the test log) and asserts its verdicts,
// stage by stage. When the estate asks for it (test.sabotaged in
// estate.yaml) the gauntlet runs a second time with every BREAK's
// corruption skipped, and no BREAK may then prove anything. It returns the
// clear run's result.
//
// The sabotaged run reattaches the providers (gauntlet.WithReattachedProviders,
// which keeps the kubernetes provider per call beside a kubernetes_manifest):
// it asks only whether each BREAK holds, and runs with and without
// reattached providers gave the same BREAK outcomes on every estate
// (docs/performance.md), at about half the engine-seconds. The clear run
// keeps production's provider per call, its figures being evidence. A
// gauntlet.WithReattachedProviders(false) in opts turns it off for both.
func Run(t *testing.T, dir string, opts ...gauntlet.Option) *result.Run {
	t.Helper()
	assertHermetic(t)
	spec := Load(t, dir)
	res := run(t, spec, "", opts)
	proved := assertRun(t, spec, res)
	if spec.Test != nil && spec.Test.Sabotaged {
		t.Run("sabotaged", func(t *testing.T) {
			if len(proved) == 0 {
				t.Skip("the clear run proved no BREAK to sabotage")
			}
			sopts := append(append([]gauntlet.Option{gauntlet.WithReattachedProviders(true)}, opts...), gauntlet.WithSabotage())
			sab := run(t, spec, "sabotaged", sopts)
			t.Logf("sabotaged run's providers: %s", cmp.Or(sab.ReattachedProviders, "each started per call"))
			assertSabotaged(t, sab, proved)
		})
	}
	return res
}

// Load loads the estate in dir and brings its pinned corpus files into the
// cache when it lacks them (see ensureCorpus); for tests that run an
// estate their own way, such as a kill matrix.
func Load(t testing.TB, dir string) *estate.Spec {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := estate.Load(filepath.Dir(abs), filepath.Base(abs))
	if err != nil {
		t.Fatal(err)
	}
	ensureCorpus(t, spec)
	return spec
}

// Logger sends a run's progress lines to the test log.
func Logger(t testing.TB) log.Logger { return log.New(testWriter{t}) }

// assertRun checks every stage against what the estate expects
// (expect.Judge, the conformance gate's judge too) and returns the BREAKs
// that proved, by stage/BREAK name.
func assertRun(t *testing.T, spec *estate.Spec, res *result.Run) map[string]bool {
	t.Helper()
	proved := map[string]bool{}
	judged := expect.Judge(spec, res)
	for i, s := range res.Stages {
		for _, b := range s.Breaks {
			if b.Outcome == result.Proved {
				proved[breakKey(s, b)] = true
			}
		}
		j := judged[i]
		t.Run(s.ID, func(t *testing.T) {
			for _, f := range j.Fails {
				t.Error(f)
			}
			if j.OK() && j.Skip != "" {
				t.Skip(j.Skip)
			}
		})
	}
	if res.Cancelled != nil {
		t.Errorf("the run was cancelled in %s (%s)", res.Cancelled.Stage, res.Cancelled.Signal)
	}
	return proved
}

// breakKey names one BREAK of a run on one side: stage/BREAK@side.
func breakKey(s result.Stage, b result.Break) string { return s.ID + "/" + b.Name + "@" + sideOf(b) }

func sideOf(b result.Break) string {
	if b.Side == "" {
		return "subject"
	}
	return b.Side
}

// assertSabotaged reports every sabotageErrors finding as a test error.
func assertSabotaged(t *testing.T, res *result.Run, proved map[string]bool) {
	t.Helper()
	errs, counts := sabotageErrors(res, proved)
	t.Logf("sabotaged BREAK outcomes: %v", counts)
	for _, e := range errs {
		t.Error(e)
	}
}

// sabotageErrors: with every corruption skipped, on both sides, each BREAK
// must hold - the world is untouched, so its checks must pass. Proved means
// the BREAK is tautological (its checks fail whatever it does); off_target
// means a check fails in an untouched world; could_not_run means the
// measurement itself broke. Each BREAK that proved in the clear run must
// also have run here. It returns the errors and the outcome counts by side.
func sabotageErrors(res *result.Run, proved map[string]bool) ([]string, map[string]int) {
	var errs []string
	counts := map[string]int{}
	seen := map[string]bool{}
	if !res.Sabotaged {
		errs = append(errs, "the run is not marked sabotaged")
	}
	for _, s := range res.Stages {
		for _, b := range s.Breaks {
			key := breakKey(s, b)
			seen[key] = true
			if stocksOwn(s, b) {
				counts["oracle on stock's finding"]++
				continue
			}
			counts[sideOf(b)+" "+string(b.Outcome)]++
			switch b.Outcome {
			case result.Held:
			case result.Proved:
				errs = append(errs, fmt.Sprintf("BREAK %s proved with its corruption skipped: it is tautological (%s)", key, b.Detail))
			default:
				errs = append(errs, fmt.Sprintf("BREAK %s is %s with its corruption skipped, where it must hold (%s)", key, b.Outcome, b.Detail))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(proved)) {
		if !seen[id] {
			errs = append(errs, fmt.Sprintf("BREAK %s did not run in the sabotaged run", id))
		}
	}
	return errs, counts
}

// stocksOwn says whether b is the oracle's replay of a BREAK whose every
// covered check stock alone failed in this run's untouched world (its
// findings are all the oracle's - an oracle finding, which a sabotaged run
// shows unproven, or a limitation stock alone has): the pinned oracle
// breaks that promise with nothing corrupted (terraform 1.11.4's
// refresh-only plan exits 2 with "No changes"), so its side cannot hold
// and says nothing of the BREAK; the subject's side is still held to
// holding.
func stocksOwn(s result.Stage, b result.Break) bool {
	if sideOf(b) != "oracle" || len(b.Covers) == 0 {
		return false
	}
	for _, name := range b.Covers {
		i := slices.IndexFunc(s.Checks, func(c result.Check) bool { return c.Name == name })
		if i < 0 || !result.StockAloneFailure(s.Checks[i].Findings, s.Checks[i].MeasurementErrors) {
			return false
		}
	}
	return true
}

// run runs the gauntlet once and writes its evidence; sub names the
// evidence folder of a second run.
func run(t *testing.T, spec *estate.Spec, sub string, opts []gauntlet.Option) *result.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	all := append([]gauntlet.Option{
		gauntlet.WithLogger(Logger(t)), gauntlet.WithOffline(true),
		gauntlet.WithReproduce(fmt.Sprintf("go test -run '^%s$' (in the test's package)", t.Name())),
	}, opts...)
	res, err := gauntlet.Run(ctx, spec, all...)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(evidenceDir(t, spec.Name), sub)
	if _, err := evidence.WriteAll(out, res); err != nil {
		t.Fatal(err)
	}
	// Under Bazel the gauntlet's own JUnit (a testcase per stage, with its
	// BREAKs) is the test's XML.
	if xml := os.Getenv("XML_OUTPUT_FILE"); xml != "" && sub == "" {
		if f, err := os.Create(xml); err == nil {
			evidence.JUnit(f, res)
			f.Close()
		}
	}
	t.Logf("evidence in %s; total %s; %s", out, res.Duration.Round(time.Second), evidence.Headline(res))
	return res
}

// evidenceDir is where a test writes evidence: $GAUNTLET_EVIDENCE_DIR/
// <parts...> when set, else a temporary folder of the test.
func evidenceDir(t testing.TB, parts ...string) string {
	if d := os.Getenv(EvidenceEnv); d != "" {
		return filepath.Join(append([]string{d}, parts...)...)
	}
	return t.TempDir()
}

// ensureCorpus brings the estate's pinned corpus files into the cache when
// it lacks them: from $GAUNTLET_CORPUS_DIR, else the shared/corpus folder
// beside the checkout (or beside Bazel's runfiles tree), both laid out
// <owner>/<repo>/<commit>/<path>. No network.
func ensureCorpus(t testing.TB, spec *estate.Spec) {
	t.Helper()
	cache, err := toolchain.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// <checkout>/estates/<name> -> <checkout>/../shared/corpus.
	shared := filepath.Join(spec.Dir, "..", "..", "..", "shared", "corpus")
	if err := corpus.EnsureShared(ctx, cache, spec, shared, true, Logger(t)); err != nil {
		t.Fatal(err)
	}
}

// testWriter sends the run's progress lines to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
