package expect

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func judgeOne(spec *estate.Spec, s ...result.Stage) Stage {
	j := Judge(spec, &result.Run{Stages: s})
	return j[len(j)-1]
}

// TestANotApplicableStageIsASkip: a stage the estate's shape cannot carry
// proves nothing and fails nothing.
func TestANotApplicableStageIsASkip(t *testing.T) {
	j := judgeOne(&estate.Spec{}, result.Stage{ID: "day2_remove", Verdict: result.NotApplicable, Reason: "the root has one kubernetes object"})
	if !j.OK() || j.Skip == "" {
		t.Errorf("a not_applicable stage: %+v, want a skip", j)
	}
}

// TestNotDerived: a stage not run for want of a derived plan skips only
// where estate.yaml says so; unlisted it fails (a derivation lost, or a
// new gap), and a listed stage that runs fails too (the entry is stale).
func TestNotDerived(t *testing.T) {
	gap := result.Stage{ID: "drift_reconverge", Verdict: result.NotRun, Cause: result.CauseNotDerived, Reason: "no drift derived"}
	listed := &estate.Spec{NotDerived: map[string]string{"drift_reconverge": "labels come from var.labels"}}
	passed := result.Stage{ID: "drift_reconverge", Verdict: result.Pass}
	blocked := result.Stage{ID: "drift_reconverge", Verdict: result.NotRun, Cause: result.CauseBlocked, BlockedBy: "migrate"}
	for _, c := range []struct {
		name       string
		spec       *estate.Spec
		s          result.Stage
		skip, fail bool
	}{
		{"listed gap", listed, gap, true, false},
		{"unlisted gap", &estate.Spec{}, gap, false, true},
		{"listed, but it passed", listed, passed, false, true},
		{"listed, blocked by another stage: judged as any other", listed, blocked, false, false},
		{"unlisted pass", &estate.Spec{}, passed, false, false},
	} {
		skip, fail := notDerived(c.spec, c.s)
		if (skip != "") != c.skip || (fail != "") != c.fail {
			t.Errorf("%s: skip %q, fail %q; want skip %v, fail %v", c.name, skip, fail, c.skip, c.fail)
		}
	}
}

// TestJudge: the estate's findings excuse the stages they name and those
// blocked behind them; nothing else that did not pass is excused.
func TestJudge(t *testing.T) {
	finding := &estate.Spec{Findings: map[string]string{"migrate": "the provider compares quantities as text"}}
	limited := result.Stage{ID: "migrate", Verdict: result.Limitation, Detail: "stock alike"}
	behind := result.Stage{ID: "test_plan", Verdict: result.NotRun, Cause: result.CauseBlocked, BlockedBy: "migrate"}
	proven := result.Stage{ID: "test_apply", Verdict: result.Pass, Checks: []result.Check{{Name: "no-op", Verdict: result.Pass, ProvedBy: []string{"tamper"}}}}
	unbacked := result.Stage{ID: "test_apply", Verdict: result.Pass, Checks: []result.Check{{Name: "no-op", Verdict: result.Pass}}}
	for _, c := range []struct {
		name   string
		spec   *estate.Spec
		stages []result.Stage
		ok     bool
		skip   bool
	}{
		{"a listed finding", finding, []result.Stage{limited}, true, true},
		{"an unlisted limitation", &estate.Spec{}, []result.Stage{limited}, false, false},
		{"a listed finding that passed", finding, []result.Stage{{ID: "migrate", Verdict: result.Pass}}, false, false},
		{"blocked behind a listed finding", finding, []result.Stage{limited, behind}, true, true},
		{"blocked behind an unlisted failure", &estate.Spec{}, []result.Stage{{ID: "migrate", Verdict: result.Fail}, behind}, false, false},
		{"skipped by estate.yaml", &estate.Spec{}, []result.Stage{{ID: "fence", Verdict: result.NotRun, Cause: result.CauseSkipped}}, true, true},
		{"a pass, every check proved", &estate.Spec{}, []result.Stage{proven}, true, false},
		{"a pass with a check no BREAK proved", &estate.Spec{}, []result.Stage{unbacked}, false, false},
		{"a fail", &estate.Spec{}, []result.Stage{{ID: "migrate", Verdict: result.Fail}}, false, false},
	} {
		j := judgeOne(c.spec, c.stages...)
		if j.OK() != c.ok || (j.Skip != "") != c.skip {
			t.Errorf("%s: %+v; want ok %v, skip %v", c.name, j, c.ok, c.skip)
		}
	}
}
