package gauntlet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// tapeRoot is a root written for these tests: three typed objects, enough
// for every check and BREAK of the stages the tape records, and a small
// root for the registry's example stage. Typed kinds keep each engine call
// cheaper than a kubernetes_manifest (whose provider reads the API's
// schema every call); the matrix and compare replay whole estates.
const tapeRoot = `
resource "kubernetes_service_account_v1" "app" {
  metadata {
    name      = "tape-app"
    namespace = "default"
    labels    = { tier = "tape" }
  }
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "tape-settings"
    namespace = "default"
    labels    = { tier = "tape" }
  }
  data = { owner = kubernetes_service_account_v1.app.metadata[0].name }
}

resource "kubernetes_config_map_v1" "flags" {
  metadata {
    name      = "tape-flags"
    namespace = "default"
  }
  data = { mode = "probe" }
}
`

// TestOracleTapeReplaysTheOracle records the oracle's side of a cold deploy
// (real clusters, engines and BREAKs), replays it in a second run, and
// requires the replay to come to the same verdicts with the oracle's exact
// figures, no oracle cluster started; a third run that goes one stage
// further than the recording must diverge, never make an answer up.
func TestOracleTapeReplaysTheOracle(t *testing.T) {
	testenv.SecondTier(t, "the tape's recording, replay and divergence are the first tier's in internal/tape (HTTP and engine calls) and engine's stand-in tests; the tape serves only the matrix, compare and mutants, all second tier; this runs it end to end")
	s := writtenSpec(t, "tape", "Three typed objects, the oracle on tape", tapeRoot, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tp := gauntlet.NewOracleTape()
	run := func(stages ...string) (*result.Run, error) {
		return gauntlet.Run(ctx, s, gauntlet.WithOffline(true), gauntlet.WithStages(stages...), gauntlet.WithOracleTape(tp),
			gauntlet.WithLogger(testenv.Logger(t)), gauntlet.WithWorkDir(t.TempDir()), gauntlet.WithStateDir(t.TempDir()))
	}
	recorded, err := run("cold_deploy")
	if err != nil {
		t.Fatal(err)
	}
	if !tp.Recorded() || recorded.OracleReplay != "" {
		t.Fatalf("the first run must record the tape whole (recorded %v, replay %q)", tp.Recorded(), recorded.OracleReplay)
	}
	for _, id := range []string{"cold_deploy"} {
		if st := stageOf(t, recorded, id); st.Verdict != result.Pass {
			t.Fatalf("recorded %s: %s %s: the replay is measured against passing stages", id, st.Verdict, st.Reason)
		}
	}
	replayed, err := run("cold_deploy")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if replayed.OracleReplay == "" {
		t.Error("the replayed run does not say its oracle was replayed")
	}
	for i, st := range recorded.Stages {
		rp := replayed.Stages[i]
		if st.Verdict != rp.Verdict {
			t.Errorf("%s: recorded %s, replayed %s: %s", st.ID, st.Verdict, rp.Verdict, rp.Detail)
		}
		if st.Verdict != result.Pass {
			continue
		}
		for _, k := range []string{"oracle.engine_calls", "oracle.engine_ms", "oracle.api_requests", "oracle.plans", "oracle.planned_changes"} {
			if a, b := fmt.Sprint(st.Figures[k]), fmt.Sprint(rp.Figures[k]); a != b {
				t.Errorf("%s: %s recorded %s, replayed %s", st.ID, k, a, b)
			}
		}
		if len(st.Breaks) != len(rp.Breaks) {
			t.Errorf("%s: %d BREAKs recorded, %d replayed", st.ID, len(st.Breaks), len(rp.Breaks))
		}
	}
	diverged, err := run("cold_deploy", "migrate")
	if !errors.Is(err, gauntlet.ErrOracleDiverged) {
		t.Fatalf("a stage the recording never ran must diverge, got %v", err)
	}
	// Gauntlet could not do its part there: neither a limitation of stock
	// nor the engine's fail.
	if diverged == nil {
		t.Fatal("the diverged run returned no result")
	}
	if st := stageOf(t, diverged, "migrate"); st.Verdict != result.NotRun || !strings.Contains(st.Reason, "replay diverged") {
		t.Errorf("migrate after the divergence: %s %q, want not_run saying the replay diverged", st.Verdict, st.Reason)
	}
}
