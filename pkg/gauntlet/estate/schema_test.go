package estate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// The schema editors validate estate.yaml against, and the estates it must
// describe, from this package's folder (a checkout, or Bazel's runfiles).
var (
	schemaFile = filepath.Join("..", "..", "..", "docs", "estate.schema.json")
	estatesDir = filepath.Join("..", "..", "..", "estates")
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaFile, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatalf("%s does not compile: %v", schemaFile, err)
	}
	return sch
}

// validate checks YAML against the schema as the loader reads it: YAML
// turned into JSON first, so both see the same types.
func validate(sch *jsonschema.Schema, raw []byte) error {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// TestEstatesMatchSchema: every estate in the repository is valid against
// docs/estate.schema.json, and loads.
func TestEstatesMatchSchema(t *testing.T) {
	sch := compileSchema(t)
	names, err := estate.List(estatesDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("no estates under %s", estatesDir)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(estatesDir, n, "estate.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(sch, raw); err != nil {
				t.Errorf("estates/%s/estate.yaml does not match %s:\n%v", n, schemaFile, err)
			}
			if _, err := estate.Load(estatesDir, n); err != nil {
				t.Errorf("the loader refuses it: %v", err)
			}
		})
	}
}

const minimal = `apiVersion: gauntlet/v1
name: demo
title: A demo estate
files: [main.tf]
`

// TestSchemaRejects: the schema refuses what the loader refuses - unknown
// fields and wrong types at any depth - and a few things the loader lets
// through (loaderAccepts), which editors then catch as you type.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	if err := validate(sch, []byte(minimal)); err != nil {
		t.Fatalf("the minimal estate is refused: %v", err)
	}
	if _, err := estate.Parse([]byte(minimal)); err != nil {
		t.Fatalf("the loader refuses the minimal estate: %v", err)
	}
	const src = "source: {repository: https://example.invalid/r, commit: '0123456789abcdef0123456789abcdef01234567', path: main.tf, sha256: '" +
		"0000000000000000000000000000000000000000000000000000000000000000'}\n"
	for _, c := range []struct {
		name, yaml    string
		loaderAccepts bool
	}{
		{name: "unknown top-level field", yaml: minimal + "colour: blue\n"},
		{name: "unknown field in a section", yaml: minimal + "drift: {adress: x}\n"},
		{name: "unknown field in a list item", yaml: minimal + "kinds: [{group: '', version: v1, kind: ConfigMap, plural: configmaps}]\n"},
		{name: "unknown field in a source file", yaml: "apiVersion: gauntlet/v1\nname: demo\ntitle: t\nsource: {repository: r, commit: '0123456789abcdef0123456789abcdef01234567', files: [{path: a.tf, sha256: '" +
			strings.Repeat("0", 64) + "', mode: '0644'}]}\n"},
		{name: "a list where a map goes", yaml: minimal + "variables: [a, b]\n"},
		{name: "a string where a bool goes", yaml: minimal + "test: {sabotaged: yes-please}\n"},
		{name: "a string where a list goes", yaml: minimal + "writes_into: kube-system\n"},
		{name: "a string where an integer goes", yaml: minimal + "deltas: [{name: d, why: w, old: a, new: b, count: twice}]\n"},
		{name: "a map where a string goes", yaml: minimal + "prefix: {a: b}\n"},
		{name: "no apiVersion", yaml: strings.TrimPrefix(minimal, "apiVersion: gauntlet/v1\n")},
		{name: "another apiVersion", yaml: strings.Replace(minimal, "gauntlet/v1", "gauntlet/v2", 1)},
		{name: "no title", yaml: "apiVersion: gauntlet/v1\nname: demo\nfiles: [main.tf]\n"},
		{name: "source and files", yaml: minimal + src},
		{name: "neither source nor files", yaml: "apiVersion: gauntlet/v1\nname: demo\ntitle: t\n"},
		{name: "a short commit", yaml: "apiVersion: gauntlet/v1\nname: demo\ntitle: t\n" + strings.Replace(src, "0123456789abcdef0123456789abcdef01234567", "0123456", 1)},
		{name: "a name with capitals", yaml: strings.Replace(minimal, "demo", "Demo", 1)},
		{name: "a delta on an unknown substrate", yaml: minimal + "deltas: [{name: d, why: w, old: a, new: b, substrates: [minikube]}]\n", loaderAccepts: true},
		{name: "a finding for an unknown stage", yaml: minimal + "findings: {day2_rnme: {why: the engine churns, verdict: fail, stopped: {sides: [subject], error: 'Error: Cycle'}}}\n", loaderAccepts: true},
		{name: "a finding naming its stage alone", yaml: minimal + "findings: {migrate: the engine churns}\n"},
		{name: "a finding without how it fails", yaml: minimal + "findings: {migrate: {why: the engine churns, verdict: fail}}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := validate(sch, []byte(c.yaml))
			if err == nil {
				t.Errorf("the schema accepts:\n%s", c.yaml)
			}
			t.Logf("schema: %v", err)
			_, err = estate.Parse([]byte(c.yaml))
			if c.loaderAccepts && err != nil {
				t.Errorf("the loader now refuses it (%v): drop loaderAccepts", err)
			}
			if !c.loaderAccepts && err == nil {
				t.Errorf("the loader accepts what the schema refuses:\n%s", c.yaml)
			}
		})
	}
}

// TestSchemaDescribesEveryField: the schema's properties are exactly the
// JSON fields of estate.Spec and the types under it, at every depth, so a
// field added to the spec must be described (docs/estate-yaml.md too).
func TestSchemaDescribesEveryField(t *testing.T) {
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	walkSchema(t, doc, doc, reflect.TypeFor[estate.Spec](), "estate.yaml")
}

// walkSchema compares the properties of schema node n with the JSON fields
// of struct type typ, and descends into each struct-typed field.
func walkSchema(t *testing.T, doc, n map[string]any, typ reflect.Type, at string) {
	t.Helper()
	n = resolve(t, doc, n)
	props, _ := n["properties"].(map[string]any)
	fields := jsonFields(typ)
	var inGo, inSchema []string
	for name := range fields {
		if _, ok := props[name]; !ok {
			inGo = append(inGo, name)
		}
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			inSchema = append(inSchema, name)
		}
	}
	sort.Strings(inGo)
	sort.Strings(inSchema)
	if len(inGo) > 0 {
		t.Errorf("%s (%s): fields %v are not in %s", at, typ, inGo, schemaFile)
	}
	if len(inSchema) > 0 {
		t.Errorf("%s (%s): %s describes %v, which the spec does not have", at, typ, schemaFile, inSchema)
	}
	if n["additionalProperties"] != false {
		t.Errorf("%s: the schema must refuse unknown fields (additionalProperties: false), as the loader does", at)
	}
	for name, ft := range fields {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			walkSchema(t, doc, p, ft, at+"."+name)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			items, _ := resolve(t, doc, p)["items"].(map[string]any)
			if items == nil {
				t.Errorf("%s.%s: a list with no items schema", at, name)
				continue
			}
			walkSchema(t, doc, items, ft.Elem(), at+"."+name+"[]")
		}
	}
}

// resolve follows a local "$ref": "#/$defs/<name>".
func resolve(t *testing.T, doc, n map[string]any) map[string]any {
	t.Helper()
	ref, ok := n["$ref"].(string)
	if !ok {
		return n
	}
	defs, _ := doc["$defs"].(map[string]any)
	d, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	if !ok {
		t.Fatalf("%s: no such definition", ref)
	}
	return resolve(t, doc, d)
}

// jsonFields are the names encoding/json (and so the loader) reads into a
// struct, with their types; an embedded struct without a name of its own
// (Delta's `json:",inline"` Edit) contributes its fields.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
		case name == "":
			out[f.Name] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

// TestSchemaStageIDs: skip and findings keys are the stages there are.
func TestSchemaStageIDs(t *testing.T) {
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			StageReasons struct {
				PropertyNames struct {
					Enum []string `json:"enum"`
				} `json:"propertyNames"`
			} `json:"stageReasons"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ids := stage.Default().IDs()
	enum := doc.Defs.StageReasons.PropertyNames.Enum
	if !slices.Equal(enum, ids) {
		t.Errorf("%s lists stages %v; the stages, in run order, are %v", schemaFile, enum, ids)
	}
}
