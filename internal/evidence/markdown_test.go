package evidence_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestMarkdownVerdicts renders hand-built runs in both layouts and checks
// that the page says exactly what is and is not clear, stage by stage:
// want holds in both, seed in the seed layout's table, sections in the
// default layout's summary table and sections.
func TestMarkdownVerdicts(t *testing.T) {
	tests := []struct {
		name           string
		run            *result.Run
		opts           []evidence.Option
		clear          bool
		want           []string
		seed, sections []string
		wantNever      []string
		sectionsNever  []string
	}{
		{
			name:  "clear run",
			run:   smallRun(),
			clear: true,
			want: []string{
				"# Evidence · tofu 1.12.6 against terraform 1.15.8\n",
				"## reference-configmap\n",
				"**One ConfigMap.** A single ConfigMap, written here.\n",
				"Source: written here, a reference estate kept in this repository.\n",
				"Set: reference. Lane: kubernetes.\n",
				"\nClear. Every headline stage passes.\n",
				"Last run at commit 0123456789 on 2026-01-02T03:04:05Z, exit code 0, against substrate local. Total run time 1m35s.\n",
				"Oracle: terraform 1.15.8, matching its current pin.\n",
				"Engine: tofu 1.12.6 (OpenTofu v1.12.6), matching its current pin.\n",
				"## Reproduce it\n\n```sh\ngo run ./tools/gauntlet run reference-configmap\n```\n",
			},
			seed: []string{
				"| Stage | Verdict | Duration | Detail |\n|---|---|---|---|\n",
				"| Cold deploy | pass | 850ms | 1 added. BREAK delete deletes the ConfigMap and the assertion correctly failed: 0 of 1 found. |\n",
				"| Migrate | pass | 3s | 1 of 1 taken over. |\n",
			},
			sections: []string{
				"| Stage | Verdict | Time | Checks | Reason |\n|---|---|---|---|---|\n",
				"| Cold deploy (cold_deploy) | pass | 850ms | none recorded |  |\n| Migrate (migrate) | pass | 3s | none recorded |  |\n\n",
				"### Cold deploy\n\nStage `cold_deploy` · pass · 850ms\n\n1 added.\n\nBREAKs:\n\n| BREAK | Corruption | Covers | Outcome | What the checks said |\n|---|---|---|---|---|\n| BREAK delete | deletes the ConfigMap | - | proved | 0 of 1 found |\n\n",
				"### Migrate\n\nStage `migrate` · pass · 3s\n\n1 of 1 taken over.\n\n",
			},
			wantNever:     []string{"Not clear", "NOT LOAD-BEARING", "Stale"},
			sectionsNever: []string{"did not run"},
		},
		{
			name: "failed headline stage is named",
			run: withStage(1, func(s *result.Stage) {
				s.Verdict = result.Fail
				s.Detail = "0 of 1 taken over"
			}),
			want:      []string{"Not clear: one of 2 headline stages fails: Migrate.\n"},
			seed:      []string{"| Migrate | fail | 3s | 0 of 1 taken over. |\n"},
			sections:  []string{"| Migrate (migrate) | fail | 3s | none recorded | 0 of 1 taken over |\n", "### Migrate\n\nStage `migrate` · fail · 3s\n\n0 of 1 taken over.\n"},
			wantNever: []string{"Clear. Every"},
		},
		{
			name: "two failed and one not run",
			run: func() *result.Run {
				r := smallRun()
				r.Stages[0].Verdict = result.Fail
				r.Stages[1].Verdict = result.Fail
				r.Stages = append(r.Stages, result.Stage{ID: "greenfield", Title: "Greenfield apply", Headline: true,
					Verdict: result.NotRun, Reason: "engine tofu 1.12.6 has no live mode"})
				return r
			}(),
			want: []string{
				"Not clear: two of 3 headline stages fail: Cold deploy and Migrate; one did not run: Greenfield apply (engine tofu 1.12.6 has no live mode).\n",
			},
			sections: []string{
				"| Greenfield apply (greenfield) | not run | - | - | engine tofu 1.12.6 has no live mode |\n",
				"### Stages that did not run\n\n- Greenfield apply (greenfield): engine tofu 1.12.6 has no live mode.\n",
			},
			sectionsNever: []string{"### Greenfield apply"},
		},
		{
			name: "not run stage shows its reason",
			run: withStage(1, func(s *result.Stage) {
				s.Verdict, s.Detail, s.Duration = result.NotRun, "", 0
				s.Reason = "the oracle's state file was not written"
			}),
			want: []string{"one did not run: Migrate (the oracle's state file was not written)."},
			seed: []string{"| Migrate | not run | 0s | Not run: the oracle's state file was not written. |\n"},
			sections: []string{
				"| Migrate (migrate) | not run | - | - | the oracle's state file was not written |\n",
				"- Migrate (migrate): the oracle's state file was not written.\n",
			},
		},
		{
			name:     "not run stage without a reason says so",
			run:      withStage(1, func(s *result.Stage) { s.Verdict, s.Detail = result.NotRun, "" }),
			seed:     []string{"| Migrate | not run | 3s | Not run: no reason recorded. |\n"},
			sections: []string{"| Migrate (migrate) | not run | 3s | - | no reason recorded |\n", "- Migrate (migrate): no reason recorded.\n"},
		},
		{
			name: "break that did not fail is not load-bearing",
			run: withStage(0, func(s *result.Stage) {
				s.Verdict = result.Fail
				s.Breaks[0].Failed, s.Breaks[0].Outcome = false, result.Held
				s.Breaks[0].Detail = "1 of 1 found"
			}),
			want: []string{
				"Not clear: one of 2 headline stages fails: Cold deploy.",
			},
			seed: []string{"**NOT LOAD-BEARING: BREAK delete** deletes the ConfigMap; 1 of 1 found."},
			sections: []string{"| Cold deploy (cold_deploy) | fail | 850ms | none recorded | NOT LOAD-BEARING: BREAK delete |\n",
				"| BREAK delete | deletes the ConfigMap | - | **NOT LOAD-BEARING** | 1 of 1 found |\n",
				"**Why, first:** Cold deploy - a BREAK did not make its check fail (the check is not load-bearing); whose: gauntlet's own (the harness could not do its part; the engine is not blamed). NOT LOAD-BEARING: BREAK delete\n"},
			wantNever: []string{"correctly failed"},
		},
		{
			name: "a pass contradicted by its break is not clear",
			run:  withStage(0, func(s *result.Stage) { s.Breaks[0].Failed, s.Breaks[0].Outcome = false, result.Held }),
			want: []string{
				"NOT LOAD-BEARING",
				"Not clear: one is marked pass without proof: Cold deploy (BREAK delete held).",
			},
			seed:     []string{"| Cold deploy | pass |"},
			sections: []string{"| Cold deploy (cold_deploy) | pass | 850ms | none recorded | not proven: BREAK delete held |\n"},
		},
		{
			name: "checks that did not pass are visible",
			run: withStage(1, func(s *result.Stage) {
				s.Checks = []result.Check{
					{Name: "labels", Verdict: result.Pass, Detail: "hidden", ProvedBy: []string{"delete"}},
					{Name: "aggregated API", Verdict: result.NotRun, Detail: "no kubelet on the local substrate"},
				}
			}),
			clear: true,
			want:  []string{"Clear - one check not run on the local substrate: migrate: aggregated API."},
			seed:  []string{"| Migrate | pass | 3s | 1 of 1 taken over. Checks: labels (proved by BREAK delete); aggregated API (NOT RUN here: no kubelet on the local substrate). |\n"},
			sections: []string{
				"| Migrate (migrate) | pass | 3s | 1/2 proven, 1 not run | one check not run here: aggregated API |\n",
				"1 of 1 taken over.\n\nChecks:\n\n- labels: pass, proved by BREAK delete.\n- aggregated API: NOT RUN here: no kubelet on the local substrate.\n\n",
			},
			wantNever: []string{"hidden"},
		},
		{
			name: "failed check with its findings",
			run: withStage(1, func(s *result.Stage) {
				s.Verdict = result.Fail
				s.Checks = []result.Check{
					{Name: "labels", Verdict: result.Pass, NoBreak: "nothing can unlabel it"},
					{Name: "annotations", Verdict: result.Unproven},
					{Name: "same objects", Verdict: result.Fail, Detail: "2 differences\nConfigMap a/b data.k: want x, got y",
						Findings:          []result.Finding{{Side: "subject", Object: "ConfigMap a/b", Field: "data.k", Want: "x", Got: "y"}},
						MeasurementErrors: []string{"read ConfigMap a/c: timeout"}},
				}
			}),
			want: []string{"Not clear: one of 2 headline stages fails: Migrate."},
			sections: []string{
				"| Migrate (migrate) | fail | 3s | 0/3 proven, 1 without a BREAK, 1 unproven, 1 failed | same objects failed: 2 differences |\n",
				"- labels: pass, no BREAK: nothing can unlabel it.\n" +
					"- **annotations: UNPROVEN**: it passed, but no BREAK made it fail.\n" +
					"- **same objects: FAIL**: 2 differences.\n" +
					"  - finding: subject: ConfigMap a/b data.k: want x, got y\n" +
					"  - could not measure: read ConfigMap a/c: timeout\n",
			},
		},
		{
			name: "non-headline failure is said but costs nothing",
			run: func() *result.Run {
				r := smallRun()
				r.Stages = append(r.Stages, result.Stage{ID: "strict", Title: "Strict profile", Verdict: result.Fail,
					Duration: 13 * time.Second, Detail: "no refusal"})
				return r
			}(),
			clear: true,
			want:  []string{"Clear. Every headline stage passes. Outside the headline, Strict profile fails.\n"},
			seed:  []string{"| Strict profile (not a headline stage) | fail | 13s | no refusal. |\n"},
			sections: []string{
				"| Strict profile (strict, not a headline stage) | fail | 13s | none recorded | no refusal |\n",
				"### Strict profile\n\nStage `strict` · fail · 13s · not a headline stage\n\nno refusal.\n",
			},
		},
		{
			name:     "no headline stage is not clear",
			run:      &result.Run{Estate: result.Estate{Name: "empty"}},
			want:     []string{"Not clear. The run has no headline stage", "Last run at an unrecorded commit at an unrecorded time, exit code 0"},
			seed:     []string{"| (no stages) | not run |"},
			sections: []string{"| (no stages) | not run | - | - | The run recorded no stage. |\n"},
			clear:    false,
		},
		{
			name:     "unknown verdict is never a pass",
			run:      withStage(1, func(s *result.Stage) { s.Verdict = "flaky" }),
			want:     []string{`Migrate (has unknown verdict "flaky")`},
			seed:     []string{`| Migrate | unknown verdict "flaky" |`},
			sections: []string{`| Migrate (migrate) | unknown verdict "flaky" | 3s |`, "Stage `migrate` · unknown verdict \"flaky\" · 3s\n"},
		},
		{
			name: "corpus source, stale oracle, engine by path, heading option",
			run: func() *result.Run {
				r := smallRun()
				r.Estate.SourceRepo = "https://github.com/kubernetes/k8s.io"
				r.Estate.SourceCommit = "4046258e7d54fdc156e2f39ad8da51b57be88f55"
				r.Estate.SourcePath = "infra/metrics-server.tf"
				r.Oracle.Pinned = "1.16.1"
				r.Subject = result.Engine{Name: "tofu", Version: "1.13.0-dev", Path: "/opt/tofu"}
				return r
			}(),
			opts:  []evidence.Option{evidence.WithHeading("How close tofu is")},
			clear: true,
			want: []string{
				"# Evidence · How close tofu is\n",
				"Source: https://github.com/kubernetes/k8s.io at 4046258e7d54fdc156e2f39ad8da51b57be88f55, path `infra/metrics-server.tf`, sha256 not recorded.\n",
				"Oracle: terraform 1.15.8. Stale: the current pin is terraform 1.16.1.\n",
				"Engine: tofu 1.13.0-dev, given by path /opt/tofu with no pin to hold it to.\n",
			},
		},
		{
			name: "reattached providers are said in words",
			run: func() *result.Run {
				r := smallRun()
				r.ReattachedProviders = "random; the kubernetes provider started with each call"
				return r
			}(),
			clear: true,
			want:  []string{"every engine call but init and the interrupted applies reattached to them (`--reattach-providers`), instead of each call starting its own as in production. Reattached: random; the kubernetes provider started with each call.\n"},
		},
		{
			name: "reproduce command with backticks gets a longer fence",
			run: func() *result.Run {
				r := smallRun()
				r.Reproduce = "echo ```x```"
				r.Environment = []string{"A=`b`"}
				return r
			}(),
			clear: true,
			want:  []string{"````sh\necho ```x```\n````\n", "- `` A=`b` ``\n"},
		},
	}
	for _, tc := range tests {
		for _, format := range evidence.Formats() {
			t.Run(tc.name+"/"+string(format), func(t *testing.T) {
				var b bytes.Buffer
				if err := evidence.Markdown(&b, tc.run, append(tc.opts, evidence.WithFormat(format))...); err != nil {
					t.Fatal(err)
				}
				page := b.String()
				want, never := tc.want, tc.wantNever
				if format == evidence.FormatSeed {
					want = append(slices.Clone(want), tc.seed...)
					assertTable(t, page, len(tc.run.Stages))
				} else {
					want = append(slices.Clone(want), tc.sections...)
					never = append(slices.Clone(never), tc.sectionsNever...)
					assertSummary(t, page, tc.run)
				}
				for _, w := range want {
					if !strings.Contains(page, w) {
						t.Errorf("page lacks %q\n--- page ---\n%s", w, page)
					}
				}
				for _, w := range never {
					if strings.Contains(page, w) {
						t.Errorf("page has %q and must not\n--- page ---\n%s", w, page)
					}
				}
				if got := tc.run.Clear(); got != tc.clear {
					t.Errorf("Clear = %v, want %v", got, tc.clear)
				}
			})
		}
	}
}

// TestMarkdownEscaping proves that pipes, backslashes, HTML-ish text and
// every kind of line break in model text stay inside their cell, and in
// the sections layout inside their paragraph.
func TestMarkdownEscaping(t *testing.T) {
	r := withStage(0, func(s *result.Stage) {
		s.Title = "Cold | deploy"
		s.Verdict = result.Fail
		s.Detail = "a|b\nc\r\nd\re \\| f <none>"
		s.Breaks = []result.Break{{Name: "x|y", Corruption: "sets a=b|c", Outcome: result.Proved, Failed: true, Detail: "line 1\nline 2"}}
	})
	var b bytes.Buffer
	if err := evidence.Markdown(&b, r, evidence.WithFormat(evidence.FormatSeed)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := `| Cold \| deploy | fail | 850ms | a\|b<br>c<br>d<br>e \\\| f &lt;none>. BREAK x\|y sets a=b\|c and the assertion correctly failed: line 1<br>line 2. |` + "\n"
	if !strings.Contains(page, want) {
		t.Errorf("escaped row missing:\nwant %s\n--- page ---\n%s", want, page)
	}
	assertTable(t, page, len(r.Stages))

	b.Reset()
	if err := evidence.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	page = b.String()
	for _, want := range []string{
		`| Cold \| deploy (cold_deploy) | fail | 850ms | none recorded | a\|b |` + "\n",
		"### Cold | deploy\n\n",
		"\na|b c d e \\| f &lt;none>.\n",
		"| BREAK x\\|y | sets a=b\\|c | - | proved | line 1<br>line 2 |\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("escaped text missing:\nwant %q\n--- page ---\n%s", want, page)
		}
	}
	assertSummary(t, page, r)
}

// assertSummary checks the sections layout's structure: a summary table
// with a header, a separator and exactly one row per stage (or the one
// "no stages" row), each a single line of five cells; then one "### "
// section per stage that ran, in the table's order.
func assertSummary(t *testing.T, page string, r *result.Run) {
	t.Helper()
	lines := strings.Split(page, "\n")
	start := slices.Index(lines, "| Stage | Verdict | Time | Checks | Reason |")
	if start < 0 || start+1 >= len(lines) || lines[start+1] != "|---|---|---|---|---|" {
		t.Fatalf("no summary table header")
	}
	var rows []string
	for _, l := range lines[start+2:] {
		if l == "" {
			break
		}
		rows = append(rows, l)
		if n := unescapedPipes(l); n != 6 {
			t.Errorf("row has %d unescaped pipes, want 6: %s", n, l)
		}
	}
	if want := max(len(r.Stages), 1); len(rows) != want {
		t.Errorf("summary has %d rows, want %d", len(rows), want)
	}
	var ran []string
	for _, row := range rows {
		if !strings.Contains(row, " | not run | ") {
			ran = append(ran, row)
		}
	}
	var sections []string
	for _, l := range lines {
		if h, ok := strings.CutPrefix(l, "### "); ok && h != "Limitations stock shares" && h != "Stages that did not run" {
			sections = append(sections, h)
		}
	}
	if len(r.Stages) == 0 {
		ran = nil
	}
	if len(sections) != len(ran) {
		t.Errorf("%d stage sections %q for %d stages that ran", len(sections), sections, len(ran))
	}
}

// assertTable checks the stage table's structure: a header, a separator
// and exactly one row per stage (or the one "no stages" row), each row a
// single line with exactly five unescaped pipes, i.e. four cells.
func assertTable(t *testing.T, page string, stages int) {
	t.Helper()
	lines := strings.Split(page, "\n")
	start := -1
	for i, l := range lines {
		if l == "| Stage | Verdict | Duration | Detail |" {
			start = i
			break
		}
	}
	if start < 0 || start+1 >= len(lines) || lines[start+1] != "|---|---|---|---|" {
		t.Fatalf("no stage table header")
	}
	rows := 0
	for _, l := range lines[start+2:] {
		if l == "" {
			break
		}
		rows++
		if n := unescapedPipes(l); n != 5 {
			t.Errorf("row has %d unescaped pipes, want 5: %s", n, l)
		}
	}
	want := max(stages, 1)
	if rows != want {
		t.Errorf("table has %d rows, want %d", rows, want)
	}
}

// unescapedPipes counts pipes not escaped by an odd run of backslashes.
func unescapedPipes(l string) int {
	n, slashes := 0, 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '\\':
			slashes++
			continue
		case '|':
			if slashes%2 == 0 {
				n++
			}
		}
		slashes = 0
	}
	return n
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestRenderErrors proves a nil run and a failing writer come back as
// wrapped errors from every renderer, never a panic.
func TestRenderErrors(t *testing.T) {
	renderers := map[string]func(w *bytes.Buffer, r *result.Run) error{
		"markdown": func(w *bytes.Buffer, r *result.Run) error { return evidence.Markdown(w, r) },
		"json":     func(w *bytes.Buffer, r *result.Run) error { return evidence.JSON(w, r) },
		"junit":    func(w *bytes.Buffer, r *result.Run) error { return evidence.JUnit(w, r) },
	}
	for name, render := range renderers {
		if err := render(&bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "nil run") {
			t.Errorf("%s(nil) = %v, want a nil-run error", name, err)
		}
	}
	for name, err := range map[string]error{
		"markdown": evidence.Markdown(failingWriter{}, smallRun()),
		"json":     evidence.JSON(failingWriter{}, smallRun()),
		"junit":    evidence.JUnit(failingWriter{}, smallRun()),
	} {
		if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "evidence: "+name) {
			t.Errorf("%s to a failing writer = %v, want a wrapped write error", name, err)
		}
	}
}

// TestMarkdownChoices shows the stage plans from the result: derived or
// written, and the reason where none fits.
func TestMarkdownChoices(t *testing.T) {
	r := smallRun()
	r.Choices = []result.Choice{
		{Stage: "drift_reconverge", Source: "derived", Why: "a literal label", Fields: []result.Field{{Name: "address", Value: "kubernetes_manifest.a"}, {Name: "patch", Value: `[{"op":"replace"}]`}}},
		{Stage: "day2_remove", Source: "derived", Why: "no removal derived: every resource is referenced"},
		{Stage: "day2_rename", Source: "estate.yaml", Why: "written in estate.yaml", Fields: []result.Field{{Name: "from", Value: "a.b"}}},
	}
	var b bytes.Buffer
	if err := evidence.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Stage | From | Plan | Why |\n",
		"| drift_reconverge | derived | address `kubernetes_manifest.a`; patch `[{\"op\":\"replace\"}]` | a literal label |\n",
		"| day2_remove | derived | none: the stage does not run | no removal derived: every resource is referenced |\n",
		"| day2_rename | estate.yaml | from `a.b` | written in estate.yaml |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, b.String())
		}
	}
}

// A stage that could not finish shows its whole error - every one of the
// engine's errors - folded (under the table in the seed layout, in its
// section by default), and its table cell or paragraph the first line;
// run.json keeps it whole in both detail and aborted.
func TestMarkdownKeepsTheWholeAbortError(t *testing.T) {
	whole := "tofu plan: exit status 1 (log: /out/logs/004-tofu-plan.log):\n" +
		"Error: Unsupported argument\n\n  on main.tf line 3:\n\nAn argument named \"first\" is not expected here.\n\n" +
		"Error: Unsupported argument\n\n  on main.tf line 7:\n\nAn argument named \"second\" is not expected here.\n\n" +
		"Error: Missing required argument\n\nThe argument \"third\" is required, but no definition was found."
	r := withStage(1, func(s *result.Stage) {
		s.Verdict, s.Aborted = result.Fail, whole
		s.Detail = "Took over 0 of 1. The stage could not finish: " + whole
	})
	for format, where := range map[evidence.Format]string{
		evidence.FormatSeed:     "(the whole error is under the table)",
		evidence.FormatSections: "(the whole error is below)",
	} {
		var b bytes.Buffer
		if err := evidence.Markdown(&b, r, evidence.WithFormat(format)); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range []string{`named "first"`, `named "second"`, `argument "third"`, "<details><summary>Migrate: tofu plan: exit status 1", where} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lost %q:\n%s", format, want, page)
			}
		}
		for _, l := range strings.Split(page, "\n") {
			if strings.HasPrefix(l, "| Migrate") && strings.Contains(l, "second") {
				t.Errorf("%s: the table cell carries the whole error: %s", format, l)
			}
		}
		if format == evidence.FormatSections {
			section := page[strings.Index(page, "### Migrate"):]
			if !strings.HasPrefix(section, "### Migrate\n\nStage `migrate` · fail · 3s\n\nTook over 0 of 1. The stage could not finish: tofu plan: exit status 1 (log: /out/logs/004-tofu-plan.log): (the whole error is below).\n\n<details>") {
				t.Errorf("the section does not fold the whole error under its paragraph:\n%s", section)
			}
			if !strings.Contains(page, "| Migrate (migrate) | fail | 3s | none recorded | could not finish: tofu plan: exit status 1 (log: /out/logs/004-tofu-plan.log): |") {
				t.Errorf("the summary row does not say why:\n%s", page)
			}
		}
	}
}
