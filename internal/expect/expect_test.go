package expect

import (
	"strings"
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
	drifted := result.Finding{Side: "subject", Address: "kubernetes_limit_range_v1.x", Field: "plan", Want: "nothing", Got: "update"}
	found := estate.Found{Check: "plan is empty", Side: "subject", Address: drifted.Address, Field: "plan", Want: "nothing", Got: "update"}
	finding := &estate.Spec{Findings: map[string]estate.Finding{"migrate": {Why: "the provider compares quantities as text", Verdict: "limitation", Found: []estate.Found{found}}}}
	limited := result.Stage{ID: "migrate", Verdict: result.Limitation, Detail: "stock alike",
		Checks: []result.Check{{Name: "plan is empty", Verdict: result.Limitation, Findings: []result.Finding{drifted}}}}
	other := drifted
	other.Got = "delete+create"
	elsewhere := result.Stage{ID: "migrate", Verdict: result.Limitation,
		Checks: []result.Check{{Name: "plan is empty", Verdict: result.Limitation, Findings: []result.Finding{other}}}}
	engineFail := result.Stage{ID: "migrate", Verdict: result.Fail, Checks: limited.Checks}
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
		{"a listed stage failing with another finding", finding, []result.Stage{elsewhere}, false, false},
		{"a listed limitation now the engine's fail", finding, []result.Stage{engineFail}, false, false},
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

// TestUnlike: a listed finding matches a run only exactly - the verdict,
// every finding of its failed checks (one more or one fewer is a
// difference), a check that could not measure, and how the stage stopped.
func TestUnlike(t *testing.T) {
	f := result.Finding{Side: "oracle", Address: "kubernetes_ingress_v1.k", Field: "plan", Want: "nothing", Got: "update"}
	found := estate.Found{Check: "next plan empty", Side: "oracle", Address: f.Address, Field: "plan", Want: "nothing", Got: "update"}
	listed := estate.Finding{Why: "stock alone", Verdict: "limitation", Found: []estate.Found{found}}
	stopped := estate.Finding{Why: "stock alone", Verdict: "limitation", Stopped: &estate.Stopped{Sides: []string{"oracle"}, Error: "Error: Missing Resource Identity After Update"}}
	check := func(fs ...result.Finding) []result.Check {
		return []result.Check{{Name: "next plan empty", Verdict: result.Limitation, Findings: fs}}
	}
	subject := f
	subject.Side = "subject"
	abort := "oracle: terraform apply: exit status 1 (log: x):\nError: Missing Resource Identity After Update: The Terraform provider unexpectedly returned no resource identity"
	for _, c := range []struct {
		name    string
		finding estate.Finding
		s       result.Stage
		want    string // "" for a match, else a piece of the difference
	}{
		{"exactly", listed, result.Stage{Verdict: result.Limitation, Checks: check(f)}, ""},
		{"another verdict", listed, result.Stage{Verdict: result.Fail, Checks: check(f)}, "verdict fail, not limitation"},
		{"one more finding", listed, result.Stage{Verdict: result.Limitation, Checks: check(f, subject)}, "reported, not listed: next plan empty: subject"},
		{"one fewer", listed, result.Stage{Verdict: result.Limitation, Checks: append(check(), result.Check{Name: "other", Verdict: result.Pass})}, "listed, not reported: next plan empty: oracle"},
		{"could not measure", listed, result.Stage{Verdict: result.Limitation, Checks: append(check(f), result.Check{Name: "reads", Verdict: result.Fail, MeasurementErrors: []string{"connection refused"}})}, `check "reads" is fail without a finding (connection refused)`},
		{"stopped as listed", stopped, result.Stage{Verdict: result.Limitation, StoppedBy: []string{"oracle"}, Aborted: abort}, ""},
		{"stopped by another side", stopped, result.Stage{Verdict: result.Limitation, StoppedBy: []string{"subject"}, Aborted: abort}, "stopped by subject, not oracle"},
		{"stopped by another error", stopped, result.Stage{Verdict: result.Limitation, StoppedBy: []string{"oracle"}, Aborted: "oracle: dial tcp: connection refused"}, `no engine printed "Error: Missing Resource Identity After Update"`},
		{"a BREAK of another check held", listed, result.Stage{Verdict: result.Limitation, Checks: check(f), Breaks: []result.Break{{Name: "undrifted", Covers: []string{"reads back"}, Side: "subject", Outcome: "held"}}}, "BREAK undrifted held"},
		{"a BREAK of the listed check could not prove", listed, result.Stage{Verdict: result.Limitation, Checks: check(f), Breaks: []result.Break{{Name: "tamper", Covers: []string{"next plan empty"}, Side: "subject", Outcome: "held"}}}, ""},
		{"stopped, not listed so", listed, result.Stage{Verdict: result.Limitation, Checks: check(f), StoppedBy: []string{"oracle"}, Aborted: abort}, "stopped short by oracle"},
	} {
		got := strings.Join(Unlike(c.finding, c.s), "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
