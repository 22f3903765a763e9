package stage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStagesAreWellFormed(t *testing.T) {
	g := Default()
	for _, s := range g.Stages() {
		in := s.Info()
		if len(in.AllRequirements()) == 0 {
			t.Errorf("stage %s proves no requirement", in.ID)
		}
	}
	shown := g.Shown()
	if !slices.Equal(slices.Sorted(slices.Values(shown)), slices.Sorted(slices.Values(g.IDs()))) {
		t.Errorf("the seed order %v does not list exactly the stages %v", shown, g.IDs())
	}
}

// idle is a stage that does nothing.
type idle struct{ Described }

func (idle) Run(context.Context, *Run, *Recorder) error { return nil }

// TestRegistryRefuses: a stage is registered after what it runs after,
// once, with an ID and a title.
func TestRegistryRefuses(t *testing.T) {
	g := Default()
	for name, in := range map[string]Info{
		"a taken ID":       {ID: "migrate", Title: "Again"},
		"an unknown After": {ID: "x", Title: "X", After: []string{"nope"}},
		"no title":         {ID: "x"},
	} {
		if err := g.Register(idle{Described{in}}); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	if err := g.Register(idle{Described{Info{ID: "x", Title: "X", After: []string{"greenfield"}}}}); err != nil {
		t.Fatal(err)
	}
	if ids := g.IDs(); ids[len(ids)-1] != "x" || !g.DependsOn("day2_teardown", []string{"x"}) || g.DependsOn("strict", []string{"x"}) {
		t.Errorf("registered last: %v; x depends on the teardown (through greenfield), not on strict", ids)
	}
}

func TestObjectsFromState(t *testing.T) {
	st := &tfjson.State{Values: &tfjson.StateValues{RootModule: &tfjson.StateModule{Resources: []*tfjson.StateResource{
		{Address: "kubernetes_deployment.m", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_deployment",
			AttributeValues: map[string]any{"metadata": []any{map[string]any{"name": "ms", "namespace": "kube-system"}}}},
		{Address: "kubernetes_api_service.m", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_api_service",
			AttributeValues: map[string]any{"metadata": []any{map[string]any{"name": "v1beta1.metrics.k8s.io"}}}},
		{Address: "kubernetes_config_map_v1.c", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_config_map_v1",
			AttributeValues: map[string]any{"metadata": []any{map[string]any{"name": "c", "namespace": "default"}}}},
		{Address: "random_pet.p", Mode: tfjson.ManagedResourceMode, Type: "random_pet"},
	}}}}
	objs, err := objectsFromState(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("objects %+v", objs)
	}
	if o := objs[0]; o.Address != "kubernetes_api_service.m" || o.Ref.Group != "apiregistration.k8s.io" || importID(o) != "v1beta1.metrics.k8s.io" {
		t.Errorf("APIService: %+v id %s", o, importID(o))
	}
	if o := objs[2]; o.Ref.Kind != "Deployment" || importID(o) != "kube-system/ms" {
		t.Errorf("Deployment: %+v", o)
	}
	if d := describe(objs); d != "the APIService v1beta1.metrics.k8s.io, a ConfigMap and a Deployment" {
		t.Errorf("describe = %q", d)
	}
	st.Values.RootModule.Resources = append(st.Values.RootModule.Resources, &tfjson.StateResource{Address: "kubernetes_unknown.x", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_unknown"})
	if _, err := objectsFromState(st); err == nil {
		t.Error("an unmapped resource type passed silently")
	}
}

func TestFieldPaths(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"args": []any{"--a", "--secure-port=10250"}},
	}}}}
	if got, err := field(u, "spec.containers[0].args[1]"); err != nil || got != "--secure-port=10250" {
		t.Errorf("field = %q, %v", got, err)
	}
	u.Object["metadata"] = map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "vault", "test": "x"}}
	if got, err := field(u, `metadata.labels["app.kubernetes.io/name"]`); err != nil || got != "vault" {
		t.Errorf("quoted key: %q, %v", got, err)
	}
	if got, err := field(u, "metadata.labels.test"); err != nil || got != "x" {
		t.Errorf("plain key: %q, %v", got, err)
	}
	for _, bad := range []string{"spec.containers[3].args[0]", "spec.missing", "spec.containers[0].args[1].x"} {
		if _, err := field(u, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func plan(changes ...engine.Change) *engine.Plan {
	p := &engine.Plan{Changes: changes}
	for _, c := range changes {
		for _, a := range c.Actions {
			switch a {
			case "create":
				p.Counts.Add++
			case "update":
				p.Counts.Change++
			case "delete":
				p.Counts.Destroy++
			}
		}
	}
	return p
}

func TestPlanAssertions(t *testing.T) {
	upd := engine.Change{Address: "a.x", Actions: []string{"update"}}
	del := engine.Change{Address: "b.y", Actions: []string{"delete"}}
	noop := engine.Change{Address: "c.z", Actions: []string{"no-op"}}
	if err := exactly(plan(upd, noop), map[string]string{"a.x": "update"}); err != nil {
		t.Error(err)
	}
	if fs := result.FindingsIn(exactly(plan(upd, del), map[string]string{"a.x": "update"})); len(fs) != 1 || *fs[0] != *planFinding("b.y", "", "delete") {
		t.Errorf("an extra destroy: %+v", fs)
	}
	if fs := result.FindingsIn(exactly(plan(noop), map[string]string{"a.x": "update"})); len(fs) != 1 || *fs[0] != *planFinding("a.x", "update", "") {
		t.Errorf("a missing update: %+v", fs)
	}
	if err := empty(plan(noop)); err != nil {
		t.Error(err)
	}
	if err := empty(plan(upd)); err == nil {
		t.Error("an update counted as empty")
	}
	if err := sameShape(plan(upd), plan(upd, noop)); err != nil {
		t.Error(err)
	}
	// Every victim is named, each with what the other side planned.
	if fs := result.FindingsIn(sameShape(plan(upd), plan(del))); len(fs) != 2 || *fs[0] != *planFinding("a.x", "", "update") || *fs[1] != *planFinding("b.y", "delete", "") {
		t.Errorf("different shapes: %+v", fs)
	}
}

func TestApplyOrder(t *testing.T) {
	out := strings.Join([]string{
		"kubernetes_config_map_v1.hashed: Creating...",
		"kubernetes_config_map_v1.hashed: Creation complete after 0s [id=kube-system/ms-cfg-b]",
		"kubernetes_config_map_v1.hashed (deposed object 1234abcd): Destroying... [id=kube-system/ms-cfg-a]",
		"kubernetes_config_map_v1.hashed: Destruction complete after 0s",
	}, "\n")
	if c, d := applyOrder(out); c != 2 || d != 3 {
		t.Errorf("applyOrder = %d, %d", c, d)
	}
	if c, d := applyOrder("nothing"); c != 0 || d != 0 {
		t.Errorf("applyOrder of nothing = %d, %d", c, d)
	}
}

func TestUndoAdd(t *testing.T) {
	got := undoAdd(`[{"op":"add","path":"/metadata/labels/stray","value":"yes"}]`)
	if got != `[{"op":"remove","path":"/metadata/labels/stray"}]` {
		t.Errorf("undoAdd = %s", got)
	}
}

func TestRecorderProof(t *testing.T) {
	fail := func(s string) error { return errString(s) }
	found := func(got string) error { return planFinding("a.x", "delete", got) }
	judge := func(b Breaking, subj, orc Measured, serr error) (*Recorder, result.Stage) {
		rec := NewRecorder()
		rec.Check("plan exact", nil, "fine")
		rec.Claim([]string{"plan exact"}, "the plan was exact")
		s := rec.recordBreak(b, "subject", b.Covers, b.Covers, subj, serr)
		o := rec.recordBreak(b, "oracle", b.Covers, nil, orc, nil)
		rec.addBreak(b, s, o, orc != nil)
		var st result.Stage
		rec.Fill(&st)
		return rec, st
	}
	b := Breaking{Name: "unbind", Corruption: "state rm a.x", Victim: "a.x", Covers: []string{"plan exact"},
		Predict: []result.Prediction{planPredict("a.x", nothing)}}

	rec, st := judge(b, Measured{"plan exact": found("")}, nil, nil)
	if rec.Failed() || st.Checks[0].Verdict != result.Pass || !slices.Equal(st.Checks[0].ProvedBy, []string{"unbind"}) || st.Breaks[0].Outcome != result.Proved {
		t.Errorf("a BREAK failing its check for its reason did not prove it: %+v", st)
	}
	if !strings.Contains(st.Detail, "The plan was exact.") {
		t.Errorf("the claim of a proven check is missing: %q", st.Detail)
	}

	cases := []struct {
		name    string
		subj    Measured
		orc     Measured
		err     error
		outcome result.BreakOutcome
		finding bool
	}{
		{"held", Measured{"plan exact": nil}, nil, nil, result.Held, false},
		{"off target: another finding", Measured{"plan exact": found("update")}, nil, nil, result.OffTarget, false},
		{"could not run: text naming the victim is no finding", Measured{"plan exact": fail("a.x: want delete, planned nothing")}, nil, nil, result.CouldNotRun, false},
		{"not measured", Measured{}, nil, nil, result.OffTarget, false},
		{"could not run: a read error is never a proof", nil, nil, fail("get a.x: timeout"), result.CouldNotRun, false},
		{"engine finding: held on the subject, failed on stock", Measured{"plan exact": nil}, Measured{"plan exact": found("")}, nil, result.Held, true},
		{"could not undo: the world after the undo is not the one before", Measured{"plan exact": found("")}, nil,
			compareKeys("subject", worldKey{"ConfigMap ns/a": present}, worldKey{"ConfigMap ns/a": absent}), result.CouldNotUndo, false},
	}
	unpredicted := b
	unpredicted.Predict = nil
	if _, st := judge(unpredicted, Measured{"plan exact": found("")}, nil, nil); st.Breaks[0].Outcome != result.CouldNotRun {
		t.Errorf("a BREAK that predicts nothing proved: %+v", st.Breaks[0])
	}
	for _, c := range cases {
		rec, st := judge(b, c.subj, c.orc, c.err)
		if !rec.Failed() {
			t.Errorf("%s: the stage passed", c.name)
		}
		if st.Checks[0].Verdict != result.Unproven || len(st.Checks[0].ProvedBy) != 0 {
			t.Errorf("%s: the check is %s, proved by %v", c.name, st.Checks[0].Verdict, st.Checks[0].ProvedBy)
		}
		if st.Breaks[0].Outcome != c.outcome || st.Breaks[0].EngineFinding != c.finding || st.Breaks[0].Failed {
			t.Errorf("%s: BREAK %+v", c.name, st.Breaks[0])
		}
		if strings.Contains(st.Detail, "The plan was exact.") || !strings.HasPrefix(st.Detail, "FAILED BREAK unbind") {
			t.Errorf("%s: the paragraph does not lead with the failure, or keeps an unproven claim: %q", c.name, st.Detail)
		}
	}
}

func TestRecorderChecks(t *testing.T) {
	rec := NewRecorder()
	rec.Check("never broken", nil, "fine")
	rec.Check("cannot break", nil, "fine")
	rec.NoBreak("cannot break", "it runs once")
	rec.Check("failed", errString("a.x: planned create"), "")
	rec.Claim([]string{"failed"}, "everything matched")
	rec.Say("lower case start")
	rec.NotRun("needs kind", "no containers")
	var st result.Stage
	rec.Fill(&st)
	verdicts := map[string]result.Verdict{}
	for _, c := range st.Checks {
		verdicts[c.Name] = c.Verdict
	}
	want := map[string]result.Verdict{"never broken": result.Unproven, "cannot break": result.Pass, "failed": result.Fail, "needs kind": result.NotRun}
	for k, v := range want {
		if verdicts[k] != v {
			t.Errorf("check %q is %s, want %s", k, verdicts[k], v)
		}
	}
	if !rec.Failed() {
		t.Error("a failed and an unproven check left the stage green")
	}
	if !strings.HasPrefix(st.Detail, "FAILED failed") || strings.Contains(st.Detail, "everything matched") || !strings.Contains(st.Detail, "Lower case start.") || !strings.Contains(st.Detail, "UNPROVEN never broken") {
		t.Errorf("detail %q", st.Detail)
	}
	rec2 := NewRecorder()
	rec2.NotRun("needs kind", "no containers")
	if rec2.Failed() {
		t.Error("a not_run check failed the stage")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Objects in local modules are the kubernetes provider's too; other
// providers' resources, in modules or not, are not.
func TestIsKubernetesSeesThroughModules(t *testing.T) {
	for addr, want := range map[string]bool{
		"kubernetes_role.r": true,
		"module.namespace.module.namespace_roles.kubernetes_role.rbac_role[0]":    true,
		`module.sa["admin"].kubernetes_service_account.sa[0]: creation`:           true,
		"module.namespace.terraform_data.dependency_getter":                       false,
		"module.namespace.module.namespace_roles.null_resource.dependency_getter": false,
		"data.kubernetes_namespace.n":                                             false,
		"module.kubernetes_x.random_pet.p":                                        false,
	} {
		if got := isKubernetes(addr); got != want {
			t.Errorf("isKubernetes(%q) = %v, want %v", addr, got, want)
		}
	}
	kube, other := splitActed([]string{"module.a.kubernetes_role.r[0]: creation", "module.a.terraform_data.d: creation"})
	if len(kube) != 1 || len(other) != 1 {
		t.Errorf("splitActed = %v, %v", kube, other)
	}
}

func TestObjectsFromStateManifestAndKinds(t *testing.T) {
	st := &tfjson.State{Values: &tfjson.StateValues{RootModule: &tfjson.StateModule{
		Resources: []*tfjson.StateResource{
			{Address: "kubernetes_manifest.cr", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_manifest",
				AttributeValues: map[string]any{"manifest": map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": map[string]any{"name": "tab"}}}},
			{Address: "kubernetes_labels.l", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_labels"},
			{Address: "null_resource.n", Mode: tfjson.ManagedResourceMode, Type: "null_resource"},
		},
		ChildModules: []*tfjson.StateModule{{Resources: []*tfjson.StateResource{
			{Address: "module.ns.kubernetes_namespace_v1.n", Mode: tfjson.ManagedResourceMode, Type: "kubernetes_namespace_v1",
				AttributeValues: map[string]any{"metadata": []any{map[string]any{"name": "demo"}}}},
		}}},
	}}}
	objs, err := objectsFromState(st)
	if err != nil || len(objs) != 2 {
		t.Fatalf("%+v %v", objs, err)
	}
	if o := objs[0]; o.Ref.Group != "stable.example.com" || o.Ref.Kind != "CronTab" || importID(o) != "apiVersion=stable.example.com/v1,kind=CronTab,name=tab" {
		t.Errorf("custom resource: %+v id %s", o, importID(o))
	}
	if o := objs[1]; o.Address != "module.ns.kubernetes_namespace_v1.n" || o.Ref.Kind != "Namespace" {
		t.Errorf("module object: %+v", o)
	}
	spec := &estate.Spec{}
	kinds, err := derivedKinds(spec, objs)
	if err != nil || len(kinds) != 2 {
		t.Fatalf("derived %+v %v", kinds, err)
	}
	spec.Kinds = []estate.Kind{{Version: "v1", Kind: "Namespace"}}
	if _, err := derivedKinds(spec, objs); err == nil || !strings.Contains(err.Error(), "stable.example.com/v1 CronTab is in the state but not listed") {
		t.Errorf("a kinds list missing a kind: %v", err)
	}
}

// A BREAK that predicts its finding proves only by that finding: a read
// error naming the victim could not run, another finding is off target,
// and the predicted finding on the wrong side proves nothing.
func TestRecorderPrediction(t *testing.T) {
	const check = "the plan is empty"
	victim := "kubernetes_config_map.a"
	b := Breaking{Name: "delete", Corruption: "deletes ConfigMap ns/a", Victim: victim, Covers: []string{check},
		Predict: []result.Prediction{{Address: victim, Field: "plan", Got: "create"}}}
	predicted := func() error { return &result.Finding{Address: victim, Field: "plan", Want: "no-op", Got: "create"} }
	cases := []struct {
		name    string
		err     error
		outcome result.BreakOutcome
	}{
		{"the predicted finding", predicted(), result.Proved},
		{"the predicted finding among others", result.Findings(&result.Finding{Address: "b", Field: "plan", Got: "update"}, predicted().(*result.Finding)), result.Proved},
		{"a read error naming the victim", result.Measure("read ConfigMap ns/a", fmt.Errorf("get %s: connection refused", victim)), result.CouldNotRun},
		{"a read error wrapped with the victim's name", fmt.Errorf("%s: %w", victim, result.Measure("plan", fmt.Errorf("exit 1"))), result.CouldNotRun},
		{"text naming the victim", fmt.Errorf("plan is not empty: %s: create", victim), result.CouldNotRun},
		{"another finding", &result.Finding{Address: victim, Field: "plan", Want: "no-op", Got: "delete"}, result.OffTarget},
		{"another victim", &result.Finding{Address: "kubernetes_config_map.b", Field: "plan", Want: "no-op", Got: "create"}, result.OffTarget},
		{"the finding on the other side", &result.Finding{Side: "oracle", Address: victim, Field: "plan", Want: "no-op", Got: "create"}, result.OffTarget},
		{"held", nil, result.Held},
	}
	for _, c := range cases {
		rec := NewRecorder()
		rec.Check(check, nil, "fine")
		got := rec.recordBreak(b, "subject", b.Covers, b.Covers, Measured{check: c.err}, nil)
		if got.Outcome != c.outcome || got.Failed != (c.outcome == result.Proved) {
			t.Errorf("%s: BREAK is %s (%s), want %s", c.name, got.Outcome, got.Detail, c.outcome)
		}
		if c.outcome == result.OffTarget && len(got.Got) == 0 {
			t.Errorf("%s: an off-target BREAK does not keep what it got", c.name)
		}
		if c.outcome == result.CouldNotRun && c.err != nil && len(result.MeasurementErrorsIn(c.err)) > 0 && got.MeasurementError == "" {
			t.Errorf("%s: the measurement error is not reported", c.name)
		}
		var st result.Stage
		rec.Fill(&st)
		if proved := len(st.Checks[0].ProvedBy) > 0; proved != (c.outcome == result.Proved) {
			t.Errorf("%s: check proved by %v", c.name, st.Checks[0].ProvedBy)
		}
	}
}

// A panic inside a BREAK could not run, with its stack; it is not a
// check that went unmeasured.
func TestBreakPanicCouldNotRun(t *testing.T) {
	r := &Run{Subject: &Side{Name: "subject"}}
	rec := NewRecorder()
	rec.Check("c", nil, "fine")
	r.breakSubject(context.Background(), rec, Breaking{Name: "boom", Covers: []string{"c"},
		Predict: []result.Prediction{{Object: "x", Field: "exists", Got: "absent"}}}, func(context.Context, *Side) (Measured, error) {
		var m map[string]int
		m["x"]++
		return nil, nil
	})
	var st result.Stage
	rec.Fill(&st)
	b := st.Breaks[0]
	if b.Outcome != result.CouldNotRun || !strings.Contains(b.Stack, "TestBreakPanicCouldNotRun") || !strings.Contains(b.MeasurementError, "panic") {
		t.Errorf("a panicking BREAK: %s, error %q, stack %q", b.Outcome, b.MeasurementError, b.Stack)
	}
}

// A stray label reads as the same finding whether or not its object had
// labels before, so one prediction serves every victim.
func TestStrayLabelFinding(t *testing.T) {
	o := Object{Address: "kubernetes_config_map.a", Ref: estate.Object{Kind: "ConfigMap", Namespace: "ns", Name: "a"}}
	p := breakLabelPredict(o)
	for _, d := range []struct{ path, want, got string }{
		{"metadata.labels", "", `{"gauntlet-break":"yes"}`},
		{"metadata.labels", `{"app":"x"}`, `{"app":"x","gauntlet-break":"yes"}`},
		{"metadata.labels.gauntlet-break", "", `"yes"`},
	} {
		fs := splitMap(o.Ref.String(), d.path, d.want, d.got)
		if len(fs) != 1 || !p.Matches("c", "subject", fs[0]) {
			t.Errorf("%+v: findings %+v do not match %s", d, fs, p)
		}
	}
}

// An undo is judged by the world key: an object gone, terminating or still
// labelled after it is named; one recreated (a new uid, the same key) is
// back.
func TestCompareKeys(t *testing.T) {
	before := worldKey{"ConfigMap ns/a": present, "Namespace b": present, "Secret ns/c": absent, "ServiceAccount ns/d": present}
	if err := compareKeys("subject", before, maps.Clone(before)); err != nil {
		t.Errorf("the same world: %v", err)
	}
	after := worldKey{"ConfigMap ns/a": present + ", labelled " + breakLabel, "Namespace b": "terminating", "Secret ns/c": absent, "ServiceAccount ns/d": absent}
	err := compareKeys("oracle", before, after)
	var u *UndoError
	if !errors.As(err, &u) || u.Side != "oracle" || len(u.Changed) != 3 ||
		!strings.Contains(err.Error(), "Namespace b: present before, terminating after") || !strings.Contains(err.Error(), "ServiceAccount ns/d: present before, absent after") {
		t.Errorf("compareKeys = %v", err)
	}
}

// The derived label edit is its block's: the saved plan must hold one
// update per instance of that block, through module call keys too, and
// nothing of any other block.
func TestApprovalExpectsEveryInstanceOfTheBlock(t *testing.T) {
	objs := []Object{
		{Address: `kubernetes_priority_class_v1.pc["high"]`}, {Address: `kubernetes_priority_class_v1.pc["low"]`},
		{Address: `kubernetes_priority_class_v1.pcx["low"]`}, {Address: "module.m[0].kubernetes_role_v1.r"},
		{Address: "module.m[1].kubernetes_role_v1.r"}, {Address: "module.n.kubernetes_role_v1.r"},
	}
	got := labelled(objs, `kubernetes_priority_class_v1.pc["low"]`)
	if want := map[string]string{`kubernetes_priority_class_v1.pc["high"]`: "update", `kubernetes_priority_class_v1.pc["low"]`: "update"}; !maps.Equal(got, want) {
		t.Errorf("for_each block: %v, want %v", got, want)
	}
	got = labelled(objs, "module.m[1].kubernetes_role_v1.r")
	if want := map[string]string{"module.m[0].kubernetes_role_v1.r": "update", "module.m[1].kubernetes_role_v1.r": "update"}; !maps.Equal(got, want) {
		t.Errorf("module instances: %v, want %v", got, want)
	}
	if got := labelled(objs, "kubernetes_config_map_v1.single"); len(got) != 1 {
		t.Errorf("single block: %v", got)
	}
	if s := updates(labelled(objs, `kubernetes_priority_class_v1.pc["low"]`)); !strings.HasPrefix(s, "2 updates, one per instance") {
		t.Errorf("claim: %s", s)
	}
}

// The remove stage's edit: an instance address drops that instance from
// its block's literal for_each (the block stays), a block address deletes
// the block.
func TestRemoveEditInstanceOrBlock(t *testing.T) {
	dir := t.TempDir()
	tf := `resource "kubernetes_config_map_v1" "each" {
  for_each = toset(["a", "b"])
  metadata {
    name = each.key
  }
}

resource "kubernetes_config_map_v1" "one" {
  metadata {
    name = "one"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	root := &estate.Root{Dir: dir, Main: "main.tf"}
	if err := removeEdit(root, `kubernetes_config_map_v1.each["b"]`); err != nil {
		t.Fatal(err)
	}
	if err := removeEdit(root, "kubernetes_config_map_v1.one"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `toset(["a"])`) || strings.Contains(got, `"one"`) {
		t.Errorf("after the edits:\n%s", got)
	}
}

// A live object read back (the undo recreates a ServiceAccount's token
// Secrets from such copies) is named as the estate names it: core kinds
// with group "", grouped kinds split at the slash, cluster-scoped ones
// without a namespace.
func TestLiveObjectsNamedAsTheEstate(t *testing.T) {
	for _, c := range []struct {
		apiVersion, kind, namespace, name string
		want                              estate.Object
	}{
		{"v1", "Secret", "kube-system", "tok", estate.Object{Version: "v1", Kind: "Secret", Namespace: "kube-system", Name: "tok"}},
		{"v1", "Namespace", "", "ns", estate.Object{Version: "v1", Kind: "Namespace", Name: "ns"}},
		{"apps/v1", "Deployment", "default", "d", estate.Object{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "d"}},
		{"apiregistration.k8s.io/v1", "APIService", "", "v1beta1.metrics.k8s.io", estate.Object{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Name: "v1beta1.metrics.k8s.io"}},
	} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(c.apiVersion)
		u.SetKind(c.kind)
		u.SetNamespace(c.namespace)
		u.SetName(c.name)
		if got := estateObject(inventory.RefOf(u)); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.apiVersion, c.kind, got, c.want)
		}
		if got := estateObject(inventory.RefOf(u)).String(); got != inventory.RefOf(u).String() {
			t.Errorf("%s %s: estate names it %q, the inventory %q", c.apiVersion, c.kind, got, inventory.RefOf(u).String())
		}
	}
}

// Two engines failing with the same diagnostics, printed in another
// order, are said to have failed the same way; different ones are not.
func TestBothSidesSameErrorsInAnotherOrder(t *testing.T) {
	const one, two = "Error: Unsupported argument\n\nAn argument named \"bogus\" is not expected here.", "Error: Missing required argument\n\nThe argument \"metadata\" is required."
	call := func(engineName string, diags ...string) error {
		return &engine.CallError{Engine: engineName, Call: engine.Call{Args: []string{"plan"}, Log: "/tmp/" + engineName + ".log", Output: "Planning...\n\n" + strings.Join(diags, "\n\n") + "\n"}, Err: errors.New("exit status 1")}
	}
	r := &Run{Subject: &Side{Name: "subject"}, Oracle: &Side{Name: "oracle"}}
	failWith := func(subject, oracle error) error {
		return r.both(context.Background(), func(_ context.Context, sd *Side) error {
			if sd.Name == "subject" {
				return subject
			}
			return oracle
		})
	}
	err := failWith(call("tofu", one, two), call("terraform", two, one))
	if err == nil || !strings.Contains(err.Error(), "the subject and the oracle printed the same 2 errors, in another order") ||
		!strings.Contains(err.Error(), "subject: tofu plan") || !strings.Contains(err.Error(), "oracle: terraform plan") {
		t.Errorf("the same errors in another order: %v", err)
	}
	err = failWith(call("tofu", one, two), call("terraform", one, two))
	if err == nil || !strings.Contains(err.Error(), "printed the same 2 errors") || strings.Contains(err.Error(), "another order") {
		t.Errorf("the same errors in the same order: %v", err)
	}
	err = failWith(call("tofu", one, two), call("terraform", one))
	if err == nil || strings.Contains(err.Error(), "the same") {
		t.Errorf("different errors: %v", err)
	}
	// A check's two sides, the engine's failure a measurement error on
	// each: still one measurement error per side, and the note.
	err = sides("c", result.Measure("plan on subject", call("tofu", two, one)), result.Measure("plan on oracle", call("terraform", one, two)))
	if len(result.MeasurementErrorsIn(err)) != 2 || !strings.Contains(err.Error(), "in another order") {
		t.Errorf("a check's two sides: %v (%d measurement errors)", err, len(result.MeasurementErrorsIn(err)))
	}
}
