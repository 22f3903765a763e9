package bugs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

const good = `schema: gauntlet.bugs/v1
bugs:
- id: parens
  title: A provider function in parentheses is unknown
  engine: tofu
  upstream: [opentofu/opentofu#3401, opentofu/opentofu#3402]
  affected: 1.7.0 - 1.10.6
  fixed: 1.10.7
  pinned: [tofu@1.8.11]
  shape: a call in parentheses
  bisect: runs/bisect.md
  caught:
    estate: e1
    stage: cold_deploy
    finding: Call to unknown function
    evidence:
    - {run: runs/bad, side: subject, engine: tofu@1.8.11, want: fail}
    - {run: runs/good, side: subject, engine: tofu@1.12.6, want: pass}
- id: refresh-only
  title: refresh-only exits 2 with no changes
  engine: both
  upstream: [opentofu/opentofu#3015]
  affected: 1.8.0 - 1.10.2
  fixed: 1.10.3
  shape: a refresh-only plan repeated
  not_caught: no stage runs plan -refresh-only
`

// writeRun writes a run folder whose cold_deploy has the verdict and
// detail given, its subject the engine given.
func writeRun(t *testing.T, root, dir, engine string, v result.Verdict, detail string) {
	t.Helper()
	name, version, _ := strings.Cut(engine, "@")
	r := result.Run{
		Commit:  "506add0226588d2108ac9fd75fe1a1795238c08d",
		Estate:  result.Estate{Name: "e1"},
		Subject: result.Engine{Name: name, Version: version},
		Oracle:  result.Engine{Name: "terraform", Version: "1.11.4"},
		Stages:  []result.Stage{{ID: "cold_deploy", Verdict: v, Detail: detail}},
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, dir, RunJSON)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func known() Known {
	return Known{Estate: func(n string) bool { return n == "e1" }, Stage: func(id string) bool { return id == "cold_deploy" }}
}

func TestVerifyAndRender(t *testing.T) {
	c, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeRun(t, root, "runs/bad", "tofu@1.8.11", result.Fail, "the apply failed:\nError: Call to unknown function\nmore")
	writeRun(t, root, "runs/good", "tofu@1.12.6", result.Pass, "applied")
	os.WriteFile(filepath.Join(root, "runs/bisect.md"), []byte("# Bisect\n"), 0o644)
	v, problems := Verify(c, root, known())
	if len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	var b strings.Builder
	if err := Markdown(&b, v, "conformance", "regen"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"2 rows: 1 caught",
		"[opentofu/opentofu#3401](https://github.com/opentofu/opentofu/issues/3401)",
		"| [bad](../runs/bad/evidence.md) | tofu@1.8.11 (subject) | cold_deploy | fail | Error: Call to unknown function |",
		"| [good](../runs/good/evidence.md) | tofu@1.12.6 (subject) | cold_deploy | pass | - |",
		"**Not caught yet:** no stage runs plan -refresh-only",
		"- **Bisected:** [the steps and their evidence](../runs/bisect.md).",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

// TestVerifyRefuses: each way a run can fail to bear out its claim is
// named.
func TestVerifyRefuses(t *testing.T) {
	c, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		bad, good func(root string)
		want      string
	}{
		"the finding is not said": {
			bad:  func(root string) { writeRun(t, root, "runs/bad", "tofu@1.8.11", result.Fail, "timed out") },
			want: `neither its detail nor a check says "Call to unknown function"`,
		},
		"the buggy run passed": {
			bad: func(root string) {
				writeRun(t, root, "runs/bad", "tofu@1.8.11", result.Pass, "Call to unknown function")
			},
			want: "cold_deploy is pass, where the catalogue says the bug fails it",
		},
		"another engine ran": {
			bad: func(root string) {
				writeRun(t, root, "runs/bad", "tofu@1.9.4", result.Fail, "Call to unknown function")
			},
			want: "its subject ran tofu@1.9.4, not tofu@1.8.11",
		},
		"the fixed run failed": {
			good: func(root string) { writeRun(t, root, "runs/good", "tofu@1.12.6", result.Fail, "x") },
			want: "cold_deploy is fail, where the catalogue says a fixed engine passes it",
		},
		"a dirty tree": {
			bad: func(root string) {
				p := filepath.Join(root, "runs/bad", RunJSON)
				raw, _ := os.ReadFile(p)
				os.WriteFile(p, []byte(strings.Replace(string(raw), "38c08d", "38c08d-dirty", 1)), 0o644)
			},
			want: "a run of an uncommitted tree",
		},
		"a bisect page that is not there": {
			bad:  func(root string) { os.Remove(filepath.Join(root, "runs/bisect.md")) },
			want: "bisect runs/bisect.md is not a bisect.md in the repository",
		},
		"no run folder": {
			good: func(root string) { os.RemoveAll(filepath.Join(root, "runs/good")) },
			want: "evidence runs/good: open",
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeRun(t, root, "runs/bad", "tofu@1.8.11", result.Fail, "Error: Call to unknown function")
			writeRun(t, root, "runs/good", "tofu@1.12.6", result.Pass, "applied")
			os.WriteFile(filepath.Join(root, "runs/bisect.md"), []byte("# Bisect\n"), 0o644)
			if tc.bad != nil {
				tc.bad(root)
			}
			if tc.good != nil {
				tc.good(root)
			}
			_, problems := Verify(c, root, known())
			if len(problems) != 1 || !strings.Contains(problems[0], tc.want) {
				t.Errorf("problems %q, want one saying %q", problems, tc.want)
			}
		})
	}
	_, problems := Verify(c, t.TempDir(), Known{Estate: func(string) bool { return false }, Stage: func(string) bool { return false }})
	if !strings.Contains(strings.Join(problems, "\n"), "estate e1 is not in estates/") || !strings.Contains(strings.Join(problems, "\n"), "stage cold_deploy is not a registered stage") {
		t.Errorf("unknown estate and stage: %q", problems)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, edit := range map[string][2]string{
		"neither caught nor why":  {"  not_caught: no stage runs plan -refresh-only\n", ""},
		"a fail without its pass": {"    - {run: runs/good, side: subject, engine: tofu@1.12.6, want: pass}\n", ""},
		"an oracle's fail":        {"{run: runs/bad, side: subject", "{run: runs/bad, side: oracle"},
		"a bad upstream":          {"opentofu/opentofu#3015", "issue 3015"},
		"an unknown field":        {"  shape: a call in parentheses\n", "  shape: a call in parentheses\n  severity: high\n"},
		"a duplicate id":          {"- id: refresh-only", "- id: parens"},
		"a bad engine":            {"engine: tofu@1.8.11, want: fail", "engine: tofu-1.8.11, want: fail"},
		"a fail in another stage": {"want: fail}", "want: fail, stage: migrate}"},
	} {
		y := strings.Replace(good, edit[0], edit[1], 1)
		if y == good {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := Parse([]byte(y)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestEvidenceOfAnotherStage: a fixed engine's pass may be shown by
// another stage (stock's cold deploy), which must then be in the run and
// pass.
func TestEvidenceOfAnotherStage(t *testing.T) {
	y := strings.Replace(good, "{run: runs/good, side: subject, engine: tofu@1.12.6, want: pass}",
		"{run: runs/good, side: oracle, engine: terraform@1.11.4, want: pass, stage: greenfield}", 1)
	c, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeRun(t, root, "runs/bad", "tofu@1.8.11", result.Fail, "Call to unknown function")
	writeRun(t, root, "runs/good", "tofu@1.12.6", result.Fail, "x")
	os.WriteFile(filepath.Join(root, "runs/bisect.md"), []byte("# Bisect\n"), 0o644)
	if _, problems := Verify(c, root, known()); len(problems) != 1 || !strings.Contains(problems[0], "no stage greenfield in the run") {
		t.Errorf("problems %q", problems)
	}
}

// A bug in the pinned oracle is evidenced by stock's finding: a check of
// the stage whose verdict is result.OracleFinding and whose oracle-side
// finding says the text. A limitation (both sides), a finding of the
// subject's, or a claim of it on the subject side is refused.
func TestVerifyOracleFinding(t *testing.T) {
	const cat = `schema: gauntlet.bugs/v1
bugs:
- id: exit-code
  title: refresh-only exits 2 with no changes
  engine: both
  upstream: [hashicorp/terraform#36403]
  affected: terraform 1.8 - 1.11
  fixed: terraform 1.12.0
  shape: a refresh-only plan repeated
  caught:
    estate: e1
    stage: cold_deploy
    finding: got 2 on
    evidence:
    - {run: runs/run, side: oracle, engine: terraform@1.11.4, want: oracle_finding}
    - {run: runs/run, side: subject, engine: tofu@1.12.6, want: pass}
`
	c, err := Parse([]byte(cat))
	if err != nil {
		t.Fatal(err)
	}
	write := func(root string, v result.Verdict, side string) {
		writeRun(t, root, "runs/run", "tofu@1.12.6", result.Pass, "each side planned five times")
		p := filepath.Join(root, "runs/run", RunJSON)
		var r result.Run
		raw, _ := os.ReadFile(p)
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		r.Stages[0].Checks = []result.Check{{Name: "exits 0", Verdict: v, Findings: []result.Finding{{Side: side, Object: "plan -refresh-only", Field: "exit codes", Want: "0 on every repeat", Got: "2 on 5 of 5 repeats"}}}}
		raw, _ = json.Marshal(r)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	write(root, result.OracleFinding, "oracle")
	v, problems := Verify(c, root, known())
	if len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	if s := v.Seen["exit-code"][0]; s.Verdict != result.OracleFinding || !strings.Contains(s.Line, "got 2 on 5 of 5 repeats") {
		t.Errorf("seen %+v", s)
	}
	for _, tc := range []struct {
		v    result.Verdict
		side string
	}{{result.Limitation, "oracle"}, {result.OracleFinding, "subject"}} {
		root := t.TempDir()
		write(root, tc.v, tc.side)
		if _, problems := Verify(c, root, known()); len(problems) != 1 || !strings.Contains(problems[0], "no check that is stock's finding") {
			t.Errorf("%s on the %s: problems %v", tc.v, tc.side, problems)
		}
	}
	if _, err := Parse([]byte(strings.Replace(cat, "side: oracle, engine: terraform@1.11.4", "side: subject, engine: terraform@1.11.4", 1))); err == nil {
		t.Error("an oracle's finding claimed on the subject's side")
	}
}

// A documented engine difference is evidenced by a run that failed the
// stage with the finding and reported it as the difference its estate
// lists (result.Known); the same failure not reported so is refused.
func TestVerifyDifference(t *testing.T) {
	const cat = `schema: gauntlet.bugs/v1
bugs:
- id: rtb-create
  title: a planned create of a replace_triggered_by reference triggers the replacement
  engine: tofu
  upstream: [opentofu/opentofu#3714, opentofu/opentofu#3848]
  affected: tofu 1.12.0 and later (by design)
  fixed: not a bug
  shape: state rebuilt by import
  difference: tofu 1.12 made a planned create trigger the replacement
  caught:
    estate: e1
    stage: cold_deploy
    finding: delete+create
    evidence:
    - {run: runs/new, side: subject, engine: tofu@1.12.6, want: difference}
    - {run: runs/old, side: subject, engine: tofu@1.11.5, want: pass}
`
	c, err := Parse([]byte(cat))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		known *result.Known
		want  string
	}{
		"reported as the difference":           {known: &result.Known{Why: "by design", Difference: true, Engines: "tofu 1.12.0 and later", References: []string{"https://example.invalid/pr"}}},
		"failed, not reported as a difference": {known: &result.Known{Why: "a known finding"}, want: "not reported as an engine difference"},
		"failed, nothing known":                {want: "not reported as an engine difference"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeRun(t, root, "runs/new", "tofu@1.12.6", result.Fail, "plan: want import, got delete+create (import)")
			writeRun(t, root, "runs/old", "tofu@1.11.5", result.Pass, "imported")
			p := filepath.Join(root, "runs/new", RunJSON)
			var r result.Run
			raw, _ := os.ReadFile(p)
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			r.Stages[0].Known = tc.known
			raw, _ = json.Marshal(r)
			if err := os.WriteFile(p, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			v, problems := Verify(c, root, known())
			got := strings.Join(problems, "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
			if tc.want != "" {
				return
			}
			var b strings.Builder
			if err := Markdown(&b, v, "conformance", "regen"); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"`e1` / `cold_deploy`, reported as an engine difference", "| tofu@1.12.6 (subject) | cold_deploy | engine difference |"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("the page lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}
