package mutant

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

func pass(id string) result.Stage {
	return result.Stage{ID: id, Headline: true, Verdict: result.Pass, Checks: []result.Check{{Name: "ok", Verdict: result.Pass}}}
}

// failed is a stage whose check failed with a subject finding on the
// plan, the field the rename mutant causes.
func failed(id, check, detail string) result.Stage {
	return failedWith(id, check, detail, result.Finding{Address: "kubernetes_service_account.collector", Field: "plan", Want: "nothing", Got: "create", Side: "subject"})
}

func failedWith(id, check, detail string, fs ...result.Finding) result.Stage {
	return result.Stage{ID: id, Headline: true, Verdict: result.Fail, Checks: []result.Check{
		{Name: "first", Verdict: result.Pass}, {Name: check, Verdict: result.Fail, Detail: detail, Findings: fs}}}
}

func run(stages ...result.Stage) *result.Run { return &result.Run{Stages: stages} }

var rename = Mutant{Name: "ignore-moved", Expect: []string{"day2_rename"}, Finds: []string{"plan"}}

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    *result.Run
		err    error
		status Status
		by     string
		why    string
	}{
		{"caught by its stage", run(pass("cold_deploy"), pass("migrate"), failed("day2_rename", "zero churn", "kubernetes_service_account.collector: create")),
			nil, Killed, "day2_rename", ""},
		{"planted survivor: every stage passed", run(pass("cold_deploy"), pass("migrate"), pass("day2_rename")),
			nil, Survived, "", "did not catch it: day2_rename pass"},
		{"caught only by another stage", run(pass("cold_deploy"), failed("migrate", "plan is empty", "1 to add"),
			result.Stage{ID: "day2_rename", Verdict: result.NotRun, Reason: "migrate did not pass (fail)"}),
			nil, Unrelated, "", "caught only by migrate"},
		{"its stage could not finish", run(pass("migrate"), result.Stage{ID: "day2_rename", Verdict: result.Fail,
			Detail: "Some words. The stage could not finish: tofu plan: exit status 1"}),
			nil, Machinery, "", "The stage could not finish: tofu plan"},
		{"its stage failed only by a BREAK that held", run(result.Stage{ID: "day2_rename", Verdict: result.Fail,
			Checks: []result.Check{{Name: "zero churn", Verdict: result.Pass}},
			Breaks: []result.Break{{Name: "rename_object", Failed: false, Outcome: result.Held, Detail: "still passed"}}}),
			nil, Machinery, "", "BREAK rename_object"},
		{"its stage failed only by an unproven check", run(result.Stage{ID: "day2_rename", Verdict: result.Fail,
			Checks: []result.Check{{Name: "zero churn", Verdict: result.Unproven}}}),
			nil, Machinery, "", "zero churn: unproven"},
		{"an engine finding is a catch", run(result.Stage{ID: "day2_rename", Verdict: result.Fail,
			Breaks: []result.Break{{Name: "delete", Outcome: result.Held, EngineFinding: true, Detail: "subject missed it"}}}),
			nil, Killed, "day2_rename", ""},
		{"the run could not happen", nil, errors.New("no clusters"), Machinery, "", "no clusters"},
		// A stage the estate's shape cannot carry is no machinery failure:
		// it caught nothing, and says why.
		{"its stage is not applicable to the estate", run(pass("migrate"), result.Stage{ID: "day2_rename", Verdict: result.NotApplicable,
			Reason: "the root has one kubernetes object"}), nil, Survived, "", "day2_rename not_applicable (the root has one kubernetes object)"},
		// Kills tied to their cause: a failure of another kind, of the
		// oracle's side only, or by a measurement error is no kill.
		{"its stage failed with a finding it does not cause", run(failedWith("day2_rename", "the object is gone", "x",
			result.Finding{Object: "ConfigMap ns/a", Field: "exists", Want: "absent", Got: "present", Side: "subject"})),
			nil, OtherCause, "", "no finding of the kind this mutant causes (a finding on plan)"},
		{"its stage failed on the oracle's side only", run(failedWith("day2_rename", "zero churn", "x",
			result.Finding{Address: "a.b", Field: "plan", Want: "nothing", Got: "create", Side: "oracle"})),
			nil, OtherCause, "", "day2_rename failed zero churn"},
		{"its stage failed by a measurement error", run(failedWith("day2_rename", "zero churn", "read: connection refused")),
			nil, OtherCause, "", "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := Score(rename, tc.res, tc.err)
			if row.Status != tc.status || row.KilledBy != tc.by {
				t.Fatalf("status %s by %q, want %s by %q (why: %s)", row.Status, row.KilledBy, tc.status, tc.by, row.Why)
			}
			if !strings.Contains(row.Why, tc.why) {
				t.Errorf("why %q does not say %q", row.Why, tc.why)
			}
			if tc.status == Killed && (row.Detail == "" || row.Check == "" || row.Finding == "") {
				t.Errorf("a kill without the failed check, its detail and the finding: %+v", row)
			}
		})
	}
}

func TestMatrixFailsOnAnySurvivor(t *testing.T) {
	m := &Matrix{Estate: "e", Rows: []Row{
		Score(rename, run(failed("day2_rename", "zero churn", "kubernetes_service_account.collector: create")), nil),
		Score(Identity(), run(pass("cold_deploy"), pass("migrate")), nil),
	}}
	if k, n := m.Score(); k != 1 || n != 2 {
		t.Errorf("score %d/%d, want 1/2", k, n)
	}
	err := m.Err()
	if err == nil || !strings.Contains(err.Error(), "identity survived") {
		t.Fatalf("Err() = %v, want the planted survivor named", err)
	}
	dir := t.TempDir()
	paths, err := WriteAll(dir, m)
	if err != nil || len(paths) != 2 {
		t.Fatal(paths, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "mutants.md"))
	for _, want := range []string{"Mutation score **1/2**", "**NOT all killed**", "| `identity` |", "**survived**", "zero churn", "check*"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("mutants.md lacks %q:\n%s", want, md)
		}
	}
}

func TestStopAfterOnlyOnAnExpectedCatch(t *testing.T) {
	stop := StopAfter(rename)
	if stop(failed("migrate", "plan is empty", "x")) {
		t.Error("stopped on an unrelated stage's failure")
	}
	if stop(pass("day2_rename")) {
		t.Error("stopped on a pass")
	}
	if !stop(failed("day2_rename", "zero churn", "x")) {
		t.Error("did not stop once the expected stage caught it")
	}
	if stop(failedWith("day2_rename", "zero churn", "x", result.Finding{Field: "exists", Side: "subject"})) {
		t.Error("stopped on a failure the mutant does not cause")
	}
}

func TestSelect(t *testing.T) {
	if ms, err := Select(nil); err != nil || len(ms) != len(All()) {
		t.Errorf("Select(nil) = %d mutants, %v", len(ms), err)
	}
	if ms, err := Select([]string{"identity"}); err != nil || ms[0].Name != "identity" {
		t.Errorf("Select(identity) = %v, %v", ms, err)
	}
	if _, err := Select([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "ignore-moved") {
		t.Errorf("unknown mutant: %v, want the known names", err)
	}
	for _, m := range All() {
		if len(m.Expect) == 0 || m.Promise == "" || m.How == "" || len(m.Finds) == 0 {
			t.Errorf("%s: a mutant names its promise, how it breaks it, the stages that must catch it and the findings it causes", m.Name)
		}
	}
}

func TestWriteEngineQuotes(t *testing.T) {
	p, err := WriteEngine(t.TempDir(), "/c/gauntlet-mutant", "/c/it's/tofu", "no-refresh")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `GAUNTLET_MUTANT_TOFU='/c/it'\''s/tofu'`) || !strings.Contains(string(b), `exec '/c/gauntlet-mutant' "$@"`) {
		t.Errorf("script:\n%s", b)
	}
	if _, err := WriteEngine(t.TempDir(), "", "/tofu", "x"); err == nil {
		t.Error("no error for an unresolved gauntlet-mutant")
	}
}
