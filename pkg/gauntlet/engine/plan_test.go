package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
		// OpenTofu 1.11 lists an ephemeral resource as opened: no change.
		{Address: "ephemeral.random_password.db", Mode: "ephemeral", Change: &tfjson.Change{Actions: tfjson.Actions{"open"}}},
		{Address: "module.m.ephemeral.random_password.db", Mode: tfjson.ManagedResourceMode, Change: &tfjson.Change{Actions: tfjson.Actions{"close"}}},
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

// A call that exited 0 but whose output is the failure (a plan that
// printed no summary, show -json that is not JSON) has its log kept like
// a failed call's, and the error cites the copy: the work directory is
// gone after the run.
func TestExitZeroFailureCitesAKeptLog(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-engine")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'nothing an engine would say'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Bin: bin, Profile: Profile{Name: "fake"}}
	kept := filepath.Join(t.TempDir(), "out", "logs", "subject")
	e.KeepFailedLogs(kept)
	ws, err := e.Workspace(t.TempDir(), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, planErr := ws.Plan(ctx, PlanOptions{})
	_, stateErr := ws.State(ctx)
	_, applyErr := ws.Apply(ctx, ApplyOptions{})
	for name, err := range map[string]error{"plan": planErr, "show -json": stateErr, "apply": applyErr} {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		_, cited, ok := strings.Cut(err.Error(), "(log: ")
		cited = strings.TrimSuffix(cited, ")")
		if !ok || filepath.Dir(cited) != kept {
			t.Errorf("%s: the error does not cite a log under %s: %v", name, kept, err)
			continue
		}
		if b, err := os.ReadFile(cited); err != nil || !strings.Contains(string(b), "nothing an engine would say") {
			t.Errorf("%s: the kept log %s: %v\n%s", name, cited, err, b)
		}
	}
}

// TestReadStream: the stream's planned changes become the changes
// summarize would make of show -json's, its change_summary the printed
// counts; a replace or a delete leaves the stream partial.
func TestReadStream(t *testing.T) {
	out := `{"@level":"info","@message":"OpenTofu 1.12.6","type":"version","tofu":"1.12.6","ui":"1.2"}
{"@level":"info","@message":"b.upd: Plan to update","type":"planned_change","change":{"resource":{"addr":"b.upd","resource":"b.upd"},"action":"update"}}
{"@level":"info","@message":"c.imp: Plan to import","type":"planned_change","change":{"resource":{"addr":"c.imp","resource":"c.imp"},"action":"import","importing":{"id":"x"}}}
{"@level":"info","@message":"a.new: Plan to create","type":"planned_change","change":{"resource":{"addr":"a.new","resource":"a.new"},"action":"create"}}
{"@level":"info","@message":"m.to: Plan to move","type":"planned_change","change":{"resource":{"addr":"m.to","resource":"m.to"},"previous_resource":{"addr":"m.from","resource":"m.from"},"action":"move"}}
{"@level":"info","@message":"data.x.y: Plan to read","type":"planned_change","change":{"resource":{"addr":"module.k.data.x.y","resource":"data.x.y"},"action":"read"}}
{"@level":"info","@message":"ephemeral.random_password.db: Plan to open","type":"planned_change","change":{"resource":{"addr":"ephemeral.random_password.db","resource":"ephemeral.random_password.db"},"action":"open"}}
{"@level":"info","@message":"Plan: 1 to import, 1 to add, 1 to change, 0 to destroy.","type":"change_summary","changes":{"add":1,"change":1,"import":1,"remove":0,"operation":"plan"}}
`
	s := readStream(out)
	if want := (Counts{Import: 1, Add: 1, Change: 1}); s.counts != want || s.printed != want || !s.summary || s.partial != "" {
		t.Errorf("counts %s, printed %s (%v), partial %q; want %s twice, whole", s.counts, s.printed, s.summary, s.partial, want)
	}
	p := &Plan{Changes: s.changes}
	if c, ok := p.Find("m.to"); !ok || !c.Noop() || c.PreviousAddress != "m.from" {
		t.Errorf("move: %+v", c)
	}
	if c, ok := p.Find("c.imp"); !ok || !c.Noop() || !c.Importing {
		t.Errorf("import: %+v", c)
	}
	if n := len(p.Actionable()); n != 2 || len(p.Changes) != 4 {
		t.Errorf("changes %+v: want 4, 2 actionable (neither the data source nor the ephemeral resource among them)", p.Changes)
	}
	if got, ok := parsePlanLine(out); !ok || got != s.printed {
		t.Errorf("parsePlanLine of the stream: %s (%v)", got, ok)
	}
	for _, action := range []string{"replace", "delete", "remove"} {
		l := `{"@level":"info","@message":"r","type":"planned_change","change":{"resource":{"addr":"a.b","resource":"a.b"},"action":"` + action + `"}}`
		if readStream(l).partial == "" {
			t.Errorf("%s: the stream taken as whole", action)
		}
	}
}

// TestHumanizeDiagnostics: a failed streamed call's errors read as the
// plain CLI's, so two sides' failures compare the same way.
func TestHumanizeDiagnostics(t *testing.T) {
	out := `{"@level":"info","@message":"OpenTofu 1.12.6","type":"version"}
{"@level":"error","@message":"Error: Unauthorized","type":"diagnostic","diagnostic":{"severity":"error","summary":"Unauthorized","detail":"the server said no"}}
`
	if d := diagnostics(out); len(d) != 1 || d[0] != "Error: Unauthorized\n\nthe server said no" {
		t.Errorf("diagnostics %q", d)
	}
	if got := errorText(out); !strings.HasPrefix(got, ":\nError: Unauthorized") {
		t.Errorf("errorText %q", got)
	}
}
