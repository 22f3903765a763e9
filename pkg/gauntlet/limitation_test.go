package gauntlet_test

import (
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// sharedDriftRoot is a root written for this test: two ConfigMaps through
// kubernetes_manifest, whose labels are what drift derives and tampers. The
// kubernetes provider does not see a label changed out of band on a
// manifest, so stock plans nothing either: a behaviour both sides share.
const sharedDriftRoot = `
resource "kubernetes_manifest" "cm" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "shared-drift"
      namespace = "default"
      labels    = { tier = "probe" }
    }
    data = { mode = "probe" }
  }
}

resource "kubernetes_manifest" "cm2" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "shared-drift-2"
      namespace = "default"
      labels    = { tier = "probe" }
    }
    data = { mode = "probe" }
  }
}
`

// sharedDriftSection writes the drift of sharedDriftRoot's labels by hand:
// a derived drift is tried on stock first and passes these over (no
// engine sees them), so only a written one measures what both engines do.
const sharedDriftSection = `drift:
  address: kubernetes_manifest.cm
  object: {version: v1, kind: ConfigMap, namespace: default, name: shared-drift}
  patch: '[{"op":"test","path":"/metadata/labels/tier","value":"probe"},{"op":"replace","path":"/metadata/labels/tier","value":"probe-tampered"}]'
  field: metadata.labels.tier
  want: probe
  break:
    object: {version: v1, kind: ConfigMap, namespace: default, name: shared-drift-2}
    patch: '[{"op":"replace","path":"/metadata/labels/tier","value":"probe-tampered"}]'
`

// TestSharedDriftIsALimitation runs drift (and what it depends on) on the
// local substrate over sharedDriftRoot, its drift written in estate.yaml. Both engines miss the tampered
// label the same way, so drift must be a limitation - each failing check's
// findings on both sides, and the run's assessment listing it among the
// limitations, never among the engine's fails. Before the limitation
// verdict drift failed here, blamed on the engine. A later stage then runs
// over the world the runner put back: the drift's detail says how
// (measured: an apply and an empty plan on both sides), and the rename
// stage (moved blocks, its BREAKs on both sides) passes after it.
func TestSharedDriftIsALimitation(t *testing.T) {
	res := runWrittenEstate(t, "shared-drift", "A drift stock does not see either", sharedDriftRoot, sharedDriftSection, "drift_reconverge", "day2_rename")
	var drift *result.Stage
	var detail []string
	for i, st := range res.Stages {
		detail = append(append(detail, st.ID+": "+string(st.Verdict)+" "+st.Reason), stageLines(st)...)
		if st.ID == "drift_reconverge" {
			drift = &res.Stages[i]
		}
	}
	if drift == nil {
		t.Fatalf("no drift stage:\n%s", strings.Join(detail, "\n"))
	}
	if drift.Verdict != result.Limitation {
		t.Fatalf("drift is %s, want limitation:\n%s", drift.Verdict, strings.Join(detail, "\n"))
	}
	a := res.Assess()
	for _, f := range a.Failed {
		if f.ID == drift.ID {
			t.Errorf("drift counted among the engine's fails")
		}
	}
	if len(a.Limitations) == 0 || a.Clear() {
		t.Errorf("assessment: limitations %d, clear %v", len(a.Limitations), a.Clear())
	}
	for _, c := range drift.Checks {
		if c.Verdict != result.Limitation {
			continue
		}
		sides := map[string]int{}
		for _, f := range c.Findings {
			sides[f.Side]++
		}
		if sides["subject"] == 0 || sides["subject"] != sides["oracle"] {
			t.Errorf("limitation %q has findings by side %v, want the same number on both", c.Name, sides)
		}
	}
	if !strings.Contains(drift.Detail, "the runner put both sides back where they were before it") || !strings.Contains(drift.Detail, "an empty plan on both") {
		t.Errorf("drift's detail does not say the world was put back after it:\n%s", drift.Detail)
	}
	for _, st := range res.Stages {
		if st.ID == "day2_rename" && st.Verdict != result.Pass {
			t.Errorf("day2_rename after the limitation: %s %s, want pass:\n%s", st.Verdict, st.Reason, strings.Join(detail, "\n"))
		}
	}
	t.Logf("drift is a limitation:\n%s", strings.Join(detail, "\n"))
}

// permanentDiffRoot is a root written for this test: a LimitRange whose
// memory maximum the API server stores in another spelling ("1024Mi" is
// kept as "1Gi"). The kubernetes provider compares quantities as text, so
// every plan after an apply proposes an update - with stock as with the
// engine under test.
const permanentDiffRoot = `
resource "kubernetes_config_map_v1" "neighbour" {
  metadata {
    name      = "permanent-diff-neighbour"
    namespace = "default"
  }
  data = { mode = "probe" }
}

resource "kubernetes_limit_range_v1" "lr" {
  metadata {
    name      = "permanent-diff"
    namespace = "default"
  }
  spec {
    limit {
      type = "Container"
      max  = { memory = "1024Mi" }
    }
  }
}
`

// TestGreenfieldSharedReplanIsALimitation: greenfield runs on the subject
// alone, so before stock replayed its fresh apply the replan's permanent
// diff above failed greenfield as the engine's own. Now stock makes the
// same fresh apply on its emptied cluster, proposes the same update, and
// the stage is a limitation with the finding on both sides.
func TestGreenfieldSharedReplanIsALimitation(t *testing.T) {
	testenv.SecondTier(t, "the first tier proves a limitation verdict with TestSharedDriftIsALimitation and greenfield with the smoke estate")
	res := runWrittenEstate(t, "permanent-diff", "A permanent diff stock shares", permanentDiffRoot, "", "greenfield")
	green := stageOf(t, res, "greenfield")
	var lines []string
	for _, st := range res.Stages {
		lines = append(append(lines, st.ID+": "+string(st.Verdict)+" "+st.Reason+" "+st.Aborted+" "+st.Detail), stageLines(st)...)
	}
	if green.Verdict != result.Limitation {
		t.Fatalf("greenfield is %s, want limitation:\n%s", green.Verdict, strings.Join(lines, "\n"))
	}
	for _, f := range res.Assess().Failed {
		if f.ID == "greenfield" {
			t.Errorf("greenfield counted among the engine's fails")
		}
	}
	for _, c := range green.Checks {
		if c.Name != "replanned empty" {
			continue
		}
		sides := map[string]int{}
		for _, f := range c.Findings {
			if f.Address == "kubernetes_limit_range_v1.lr" {
				sides[f.Side]++
			}
		}
		if c.Verdict != result.Limitation || sides["subject"] == 0 || sides["oracle"] != sides["subject"] {
			t.Errorf("replanned empty: %s, findings on kubernetes_limit_range_v1.lr by side %v, want a limitation found on both sides", c.Verdict, sides)
		}
	}
	// The figures' engine calls, broken down by subcommand, add up.
	cold := stageOf(t, res, "cold_deploy")
	for _, side := range []string{"subject", "oracle"} {
		n := 0
		for _, c := range cold.Calls[side] {
			n += c.N
		}
		if n != cold.Figures[side+".engine_calls"] || cold.Calls[side]["apply"].N == 0 {
			t.Errorf("cold_deploy's %s calls by subcommand %v add up to %d, want the figure %d with an apply", side, cold.Calls[side], n, cold.Figures[side+".engine_calls"])
		}
	}
	if !strings.Contains(green.Detail, "stock fails it the same way") {
		t.Errorf("greenfield's detail does not say stock does the same:\n%s", green.Detail)
	}
}
