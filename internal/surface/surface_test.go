package surface

import (
	"strings"
	"testing"
)

const good = `schema: gauntlet.surface/v1
features:
  - {id: moved, area: language, feature: moved blocks, exercised: [{stage: day2_rename, estates: [every]}]}
  - {id: ordering, area: language, feature: depends_on through count = 0, exercised: [{stage: cold_deploy, estates: [e1]}], bugs: [b1]}
  - {id: refresh-only, area: cli, feature: plan -refresh-only, gap: no stage runs it, bugs: [b2]}
`

func TestParseRefuses(t *testing.T) {
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"neither exercised nor a gap": {", gap: no stage runs it", ""},
		"both":                        {"gap: no stage runs it", "gap: x, exercised: [{stage: s, estates: [e1]}]"},
		"an unknown area":             {"area: cli", "area: ui"},
		"a duplicate id":              {"id: ordering", "id: moved"},
		"an unknown field":            {"bugs: [b2]", "bugs: [b2], owner: me"},
		"an exercise without estates": {"estates: [e1]", "estates: []"},
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

func TestCheckAndRender(t *testing.T) {
	m, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	is := func(names ...string) func(string) bool {
		return func(s string) bool {
			for _, n := range names {
				if n == s {
					return true
				}
			}
			return false
		}
	}
	if p := Check(m, Known{Stage: is("day2_rename", "cold_deploy"), Estate: is("e1"), Bug: is("b1", "b2")}); len(p) != 0 {
		t.Errorf("problems %v", p)
	}
	p := Check(m, Known{Stage: is("day2_rename"), Estate: is(), Bug: is("b1")})
	want := []string{"ordering: stage cold_deploy is not registered", "ordering: estate e1 is not in estates/", "refresh-only: bug b2 is not in conformance/bugs.yaml"}
	if strings.Join(p, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems %q, want %q", p, want)
	}
	var b strings.Builder
	breaks := func(estate, stage string) []string {
		if estate == "ms" && stage == "day2_rename" {
			return []string{"rename_object", "state_rm"}
		}
		return nil
	}
	if err := Markdown(&b, m, breaks, func(id string) string { return map[string]string{"b1": "caught", "b2": "not caught"}[id] }, "ms", "regen"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{
		"3 features: 2 exercised, 1 gaps",
		"| moved blocks | `day2_rename` on every | `day2_rename`: rename_object, state_rm | - |",
		"| depends_on through count = 0 | `cold_deploy` on e1 | `cold_deploy`: none recorded on e1 | [b1](../conformance/bugs.md#b1) (caught) |",
		"| plan -refresh-only | **gap:** no stage runs it | - | [b2](../conformance/bugs.md#b2) (not caught) |",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q:\n%s", w, page)
		}
	}
}
