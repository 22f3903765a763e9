package engine

import (
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

func TestParsePlanLine(t *testing.T) {
	for out, want := range map[string]Counts{
		"\nPlan: 2 to add, 0 to change, 0 to destroy.\n":             {Add: 2},
		"Plan: 9 to import, 0 to add, 2 to change, 0 to destroy.\n":  {Import: 9, Change: 2},
		"No changes. Your infrastructure matches the configuration.": {},
	} {
		got, ok := parsePlanLine(out)
		if !ok || got != want {
			t.Errorf("%q: got %+v (%v), want %+v", out, got, ok, want)
		}
	}
	if _, ok := parsePlanLine("Error: something\n"); ok {
		t.Error("an error output parsed as a plan")
	}
}

func TestSummarizeCountsLikeTheCLI(t *testing.T) {
	rc := func(addr string, imp bool, actions ...tfjson.Action) *tfjson.ResourceChange {
		c := &tfjson.Change{Actions: actions}
		if imp {
			c.Importing = &tfjson.Importing{ID: "x"}
		}
		return &tfjson.ResourceChange{Address: addr, Mode: tfjson.ManagedResourceMode, Change: c}
	}
	p := summarize(&tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{
		rc("a.cbd", false, tfjson.ActionCreate, tfjson.ActionDelete),
		rc("b.upd", false, tfjson.ActionUpdate),
		rc("c.imp", true, tfjson.ActionNoop),
		rc("d.imp_upd", true, tfjson.ActionUpdate),
		rc("e.noop", false, tfjson.ActionNoop),
		{Address: "data.x.y", Mode: tfjson.DataResourceMode, Change: &tfjson.Change{Actions: tfjson.Actions{tfjson.ActionRead}}},
	}})
	if want := (Counts{Import: 2, Add: 1, Change: 2, Destroy: 1}); p.Counts != want {
		t.Errorf("counts %+v, want %+v", p.Counts, want)
	}
	if len(p.Actionable()) != 3 {
		t.Errorf("actionable %+v", p.Actionable())
	}
	if c, _ := p.Find("a.cbd"); !c.CreateBeforeDestroy() {
		t.Errorf("create-before-destroy not recognised: %+v", c)
	}
}
