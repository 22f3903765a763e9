package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A stage the estate's shape cannot carry on both sides is the same, never
// a difference and never "shared" - whatever its reason's wording or the
// derivation's requests - and is said as not applicable, not "not run".
func TestNotApplicableOnBothSidesIsTheSame(t *testing.T) {
	base, build := load(t, passRun), load(t, passRun)
	for i, r := range []*result.Run{base, build} {
		s := stageOf(r, "day2_remove")
		s.Verdict, s.Checks, s.Breaks = result.NotApplicable, nil, nil
		s.Reason = []string{"the root has one kubernetes object", "the root has one kubernetes object: a removal needs another"}[i]
		s.Requests = map[string]map[string]int{"subject": {"get configmaps": 1 + 5*i}}
	}
	r := Compare(input([]*result.Run{build}, []*result.Run{base}))
	got := row(t, r, "day2_remove")
	if got.Outcome != Same || len(got.Requests) != 0 || !strings.Contains(got.Why, "not_applicable: the root has one kubernetes object") {
		t.Errorf("day2_remove not applicable on both: %+v", got)
	}
	if len(r.New) != 0 {
		t.Errorf("new differences %+v", r.New)
	}
	if c := summaryCell(got); c.Text != "n/a" || c.Class != "notapplicable" {
		t.Errorf("summary cell %+v", c)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "same (not applicable)") {
		t.Errorf("markdown does not say it:\n%s", md.String())
	}
	// Against a pass it is a change of verdict, as any other.
	base = load(t, passRun)
	if got := row(t, Compare(input([]*result.Run{build}, []*result.Run{base})), "day2_remove"); got.Outcome != New {
		t.Errorf("pass on the baseline, not applicable on the build: %+v", got)
	}
}
