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

// TestGauntlet: every stock-applicable stage passes, every BREAK fails as
// it must, and the page says "Clear.".
func TestGauntlet(t *testing.T) {
	spec, err := estate.Load("..", name)
	if err != nil {
		t.Fatal(err)
	}
	ensureCorpus(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := gauntlet.Run(ctx, spec, gauntlet.WithLogger(log.New(testWriter{t})), gauntlet.WithOffline(true),
		gauntlet.WithReproduce("go test ./estates/"+name+"/"))
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("GAUNTLET_EVIDENCE_DIR")
	if out == "" {
		out = t.TempDir()
	}
	if _, err := evidence.WriteAll(out, res); err != nil {
		t.Fatal(err)
	}
	if xml := os.Getenv("XML_OUTPUT_FILE"); xml != "" {
		f, err := os.Create(xml)
		if err == nil {
			evidence.JUnit(f, res)
			f.Close()
		}
	}
	for _, s := range res.Stages {
		switch {
		case s.ID == "strict" || s.ID == "plan_no_local_state":
			if s.Verdict != result.NotRun {
				t.Errorf("%s: %s for an engine without live mode, want not_run", s.ID, s.Verdict)
			}
		case s.Verdict != result.Pass:
			t.Errorf("%s: %s: %s %s", s.ID, s.Verdict, s.Reason, s.Detail)
		}
		if s.Verdict == result.Pass && len(s.Breaks) == 0 {
			t.Errorf("%s passed with no BREAK: its green is decorative", s.ID)
		}
		for _, b := range s.Breaks {
			if !b.Failed {
				t.Errorf("%s: BREAK %s did not make the assertion fail", s.ID, b.Name)
			}
		}
	}
	if !res.Clear() || res.ExitCode != 0 {
		t.Errorf("run is not clear (exit %d); evidence in %s", res.ExitCode, out)
	}
	t.Logf("evidence in %s; total %s", out, res.Duration.Round(time.Second))
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
