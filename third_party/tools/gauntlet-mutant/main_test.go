package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const root = `resource "kubernetes_config_map_v1" "hashed" {
  metadata {
    name = "a"
  }
  lifecycle {
    create_before_destroy = true
    ignore_changes        = [data]
  }
}

moved {
  from = kubernetes_service_account.metrics
  to   = kubernetes_service_account.collector
}

import {
  to = kubernetes_service_account.collector
  id = "kube-system/metrics-server"
}

resource "kubernetes_secret_v1" "keep" {
  lifecycle {
    create_before_destroy = false
  }
}
`

func TestEditsRemoveExactlyTheirConstruct(t *testing.T) {
	for _, tc := range []struct {
		name     string
		e        edit
		gone     []string
		kept     []string
		removals int
	}{
		{"moved", removeBlocks("moved"), []string{"moved {", "kubernetes_service_account.metrics"}, []string{"import {", "create_before_destroy = true"}, 1},
		{"import", removeBlocks("import"), []string{"import {", `"kube-system/metrics-server"`}, []string{"moved {", "create_before_destroy = true"}, 1},
		{"cbd", dropCreateBeforeDestroy, []string{"create_before_destroy = true"}, []string{"moved {", "import {", "ignore_changes", "create_before_destroy = false"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed := rewrite("main.tf", []byte(root), tc.e)
			if !changed {
				t.Fatalf("nothing removed")
			}
			for _, s := range tc.gone {
				if strings.Contains(string(out), s) {
					t.Errorf("%q is still there:\n%s", s, out)
				}
			}
			for _, s := range tc.kept {
				if !strings.Contains(string(out), s) {
					t.Errorf("%q was removed too:\n%s", s, out)
				}
			}
		})
	}
}

func TestRewriteLeavesUnparsableAndUntouchedFiles(t *testing.T) {
	if _, changed := rewrite("bad.tf", []byte("moved {\n"), removeBlocks("moved")); changed {
		t.Error("an unparsable file was rewritten; tofu must see it as it is")
	}
	if _, changed := rewrite("main.tf", []byte(`resource "a" "b" {}`), removeBlocks("moved")); changed {
		t.Error("a file without moved blocks reported a change")
	}
}

func TestStripRestoresByteForByte(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "main.tf")
	if err := os.WriteFile(p, []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	restore, err := strip(dir, removeBlocks("moved"))
	if err != nil {
		t.Fatal(err)
	}
	mid, _ := os.ReadFile(p)
	if strings.Contains(string(mid), "moved {") {
		t.Fatal("the moved block is still in the file the engine reads")
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(p); string(after) != root {
		t.Errorf("restored file differs:\n%s", after)
	}
}

func TestLie(t *testing.T) {
	for in, want := range map[string]string{
		"Plan: 0 to add, 1 to change, 0 to destroy.\n":                 "Plan: 1 to add, 1 to change, 0 to destroy.\n",
		"Plan: 13 to import, 0 to add, 2 to change, 0 to destroy.\n":   "Plan: 13 to import, 1 to add, 2 to change, 0 to destroy.\n",
		"No changes. Your infrastructure matches the configuration.\n": "No changes. Your infrastructure matches the configuration.\n",
		"  # kubernetes_deployment.metrics will be updated in-place\n": "  # kubernetes_deployment.metrics will be updated in-place\n",
		// The same lie in the plan -json stream, and the same truth about no changes.
		`{"@level":"info","@message":"Plan: 0 to add, 1 to change, 0 to destroy.","type":"change_summary","changes":{"add":0,"change":1,"import":0,"remove":0,"operation":"plan"}}` + "\n": `{"@level":"info","@message":"Plan: 1 to add, 1 to change, 0 to destroy.","changes":{"add":1,"change":1,"import":0,"operation":"plan","remove":0},"type":"change_summary"}` + "\n",
		`{"@level":"info","@message":"Plan: 0 to add, 0 to change, 0 to destroy.","type":"change_summary","changes":{"add":0,"change":0,"import":0,"remove":0,"operation":"plan"}}` + "\n": `{"@level":"info","@message":"Plan: 0 to add, 0 to change, 0 to destroy.","type":"change_summary","changes":{"add":0,"change":0,"import":0,"remove":0,"operation":"plan"}}` + "\n",
		`{"@level":"info","@message":"kubernetes_deployment.metrics: Plan to update","type":"planned_change"}` + "\n":                                                                      `{"@level":"info","@message":"kubernetes_deployment.metrics: Plan to update","type":"planned_change"}` + "\n",
	} {
		if got := lie(in); got != want {
			t.Errorf("lie(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArgs(t *testing.T) {
	apply := []string{"apply", "-input=false", "-no-color", "-parallelism=1", "approval.tfplan"}
	if i := planFile(apply); i != 4 {
		t.Errorf("planFile = %d, want 4", i)
	}
	if i := planFile([]string{"apply", "-input=false", "-auto-approve"}); i != -1 {
		t.Errorf("planFile of an auto-approve apply = %d, want -1", i)
	}
	if cmd, i := command([]string{"-chdir=x", "plan"}); cmd != "plan" || i != 1 {
		t.Errorf("command = %s %d", cmd, i)
	}
	got := insert([]string{"plan", "-out=x"}, "-refresh=false")
	if !slices.Equal(got, []string{"plan", "-refresh=false", "-out=x"}) {
		t.Errorf("insert = %v", got)
	}
	if !has([]string{"apply", "-destroy"}, "-destroy") || has([]string{"apply"}, "-destroy") {
		t.Error("has")
	}
	if got := withoutFlag(apply, "-parallelism"); !slices.Equal(got, []string{"apply", "-input=false", "-no-color", "approval.tfplan"}) {
		t.Errorf("withoutFlag = %v", got)
	}
}

func TestSplitDropsTheLastCreateOnly(t *testing.T) {
	var p planJSON
	raw := `{"resource_changes":[
	 {"address":"a.x[0]","mode":"managed","change":{"actions":["create"]}},
	 {"address":"a.x[1]","mode":"managed","change":{"actions":["create"]}},
	 {"address":"b.y","mode":"managed","change":{"actions":["update"]}},
	 {"address":"c.z","mode":"managed","change":{"actions":["no-op"]}},
	 {"address":"d.r","mode":"data","change":{"actions":["read"]}}]}`
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	creates, others := p.split()
	if !slices.Equal(creates, []string{"a.x[0]", "a.x[1]"}) || !slices.Equal(others, []string{"b.y"}) {
		t.Errorf("split = %v, %v", creates, others)
	}
}

func TestEveryMutationIsNamed(t *testing.T) {
	want := []string{"destroy-leaks-one", "drop-one-create", "exit-code-lies", "identity", "ignore-cbd", "ignore-import", "ignore-moved",
		"lost-interrupt", "lying-summary", "no-refresh", "parallelism-ignored", "stale-plan-ok", "state-forgets"}
	if got := names(); !slices.Equal(got, want) {
		t.Errorf("mutations = %v, want %v (keep internal/mutant's catalogue in step)", got, want)
	}
}
