// Package metricsserver runs the corpus-k8s-metrics-server gauntlet for
// real: two local control planes, stock terraform as the oracle, the
// pinned OpenTofu as the engine under test.
package metricsserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/corpus"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
)

const name = "corpus-k8s-metrics-server"

// TestGauntlet: every stock-applicable stage passes, every check is proven
// by a BREAK that failed it for its own reason, and the page says "Clear";
// then the same gauntlet with every BREAK's corruption skipped must prove
// nothing: a BREAK that still fails its checks is tautological.
func TestGauntlet(t *testing.T) {
	spec, err := estate.Load("..", name)
	if err != nil {
		t.Fatal(err)
	}
	ensureCorpus(t, spec)
	proved := map[string]bool{}
	t.Run("clear", func(t *testing.T) {
		res := run(t, spec, "")
		for _, s := range res.Stages {
			switch {
			case s.ID == "strict" || s.ID == "plan_no_local_state":
				if s.Verdict != result.NotRun {
					t.Errorf("%s: %s for an engine without live mode, want not_run", s.ID, s.Verdict)
				}
			case s.Verdict != result.Pass:
				t.Errorf("%s: %s: %s %s", s.ID, s.Verdict, s.Reason, s.Detail)
			}
			for _, c := range s.Checks {
				if c.Verdict == result.Pass && len(c.ProvedBy) == 0 && c.NoBreak == "" {
					t.Errorf("%s: check %q passed with no BREAK proving it", s.ID, c.Name)
				}
			}
			for _, b := range s.Breaks {
				if b.Side == "oracle" {
					continue
				}
				if !b.Failed {
					t.Errorf("%s: BREAK %s %s: %s", s.ID, b.Name, b.Outcome, b.Detail)
				}
				proved[s.ID+"/"+b.Name] = true
			}
		}
		if !res.Clear() || res.ExitCode != 0 {
			t.Errorf("run is not clear (exit %d): %s", res.ExitCode, evidence.Headline(res))
		}
	})
	t.Run("sabotaged", func(t *testing.T) {
		if len(proved) == 0 {
			t.Skip("the clear run proved no BREAK to sabotage")
		}
		res := run(t, spec, "sabotaged")
		seen := map[string]bool{}
		for _, s := range res.Stages {
			for _, b := range s.Breaks {
				if b.Side == "oracle" {
					continue
				}
				seen[s.ID+"/"+b.Name] = true
				if b.Outcome == result.Proved {
					t.Errorf("%s: BREAK %s proved with its corruption skipped: it is tautological (%s)", s.ID, b.Name, b.Detail)
				}
			}
		}
		for id := range proved {
			if !seen[id] {
				t.Errorf("BREAK %s did not run in the sabotaged run", id)
			}
		}
		if res.Clear() {
			t.Error("a sabotaged run is clear")
		}
	})
}

// run runs the estate's gauntlet and writes its evidence; sub names the
// evidence folder of a second run.
func run(t *testing.T, spec *estate.Spec, sub string) *result.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	opts := []gauntlet.Option{gauntlet.WithLogger(log.New(testWriter{t})), gauntlet.WithOffline(true),
		gauntlet.WithReproduce("go test ./estates/" + name + "/")}
	if sub == "sabotaged" {
		opts = append(opts, gauntlet.WithSabotage())
	}
	res, err := gauntlet.Run(ctx, spec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("GAUNTLET_EVIDENCE_DIR")
	if out == "" {
		out = t.TempDir()
	}
	out = filepath.Join(out, sub)
	if _, err := evidence.WriteAll(out, res); err != nil {
		t.Fatal(err)
	}
	if xml := os.Getenv("XML_OUTPUT_FILE"); xml != "" && sub == "" {
		if f, err := os.Create(xml); err == nil {
			evidence.JUnit(f, res)
			f.Close()
		}
	}
	t.Logf("evidence in %s; total %s; %s", out, res.Duration.Round(time.Second), evidence.Headline(res))
	return res
}

// ensureCorpus imports the pinned file from ../shared/corpus when the cache
// lacks it (the layout CI and the developers' machines provide).
func ensureCorpus(t *testing.T, spec *estate.Spec) {
	t.Helper()
	cache, err := toolchain.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := corpus.Verified(cache, spec.Source); err == nil {
		return
	}
	dir := os.Getenv("GAUNTLET_CORPUS_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus"))
	}
	if _, err := corpus.Import(cache, dir, spec.Source); err != nil {
		t.Fatalf("the corpus file is not cached and could not be imported: %v (run `go run ./tools/gauntlet corpus import DIR`)", err)
	}
}

// testWriter sends the run's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
