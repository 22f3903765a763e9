package secret

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	pw      = "Zq8!random-password-24ch"
	literal = "literal-sensitive-var"
	output  = "sensitive-output-value"
)

// Terraform JSON in the shapes the engines print: show -json of a state,
// a raw state (state pull, .tfstate), show -json of a plan.
var (
	shownState = `{"format_version":"1.0","values":{"root_module":{"resources":[
 {"address":"random_password.db","type":"random_password","values":{"id":"none","length":24,"result":"` + pw + `"},"sensitive_values":{"result":true}},
 {"address":"kubernetes_config_map_v1.c","type":"kubernetes_config_map_v1","values":{"data":{"k":"plain-config-value"}},"sensitive_values":{}}],
 "child_modules":[{"resources":[{"address":"module.m.kubernetes_secret_v1.s","type":"kubernetes_secret_v1","values":{"data":{"password":"unmarked-secret-data"}},"sensitive_values":{}}]}]}}}`
	rawState = `{"version":4,"outputs":{"o":{"value":"` + output + `","type":"string","sensitive":true}},"resources":[
 {"mode":"managed","type":"random_password","name":"db","instances":[{"attributes":{"result":"raw-` + pw + `","keepers":{"a":"not-a-secret-at-all"},"list":["first-element","second-element"]},
  "sensitive_attributes":[[{"type":"get_attr","value":"result"}],[{"type":"get_attr","value":"list"},{"type":"index","value":{"value":1,"type":"number"}}]]}]}]}`
	plan = `{"format_version":"1.2","variables":{"token":{"value":"` + literal + `"},"name":{"value":"plain-variable"}},
 "configuration":{"root_module":{"variables":{"token":{"sensitive":true},"name":{}}}},
 "resource_changes":[{"address":"kubernetes_secret.s","type":"kubernetes_secret","change":{"actions":["update"],
  "before":{"data":{"k":"old-secret-data"}},"after":{"data":{"k":"new-secret-data"}},"before_sensitive":{"data":true},"after_sensitive":{"data":true}}}]}`
)

// Learn keeps every value Terraform marks sensitive and every
// kubernetes_secret's data, in each JSON shape, and nothing else.
func TestLearnKeepsMarkedValuesOnly(t *testing.T) {
	var s Values
	for _, doc := range []string{shownState, "Warning: a warning first\n" + rawState + "\nand one after", plan, "Plan: 1 to add " + pw, "{not json " + pw} {
		s.Learn(doc)
	}
	want := []string{pw, "unmarked-secret-data", "raw-" + pw, "second-element", output, literal, "old-secret-data", "new-secret-data"}
	var got []string
	for v := range s.vals {
		got = append(got, v)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("learned %q, want %q", got, want)
	}
}

// A service-account token Secret's namespace and CA certificate are the
// controller's public values: learned, a namespace named like the estate
// would be replaced on every line of the page. Its token is learned.
func TestLearnLeavesTokenSecretsPublicKeys(t *testing.T) {
	var s Values
	s.Learn(`{"values":{"root_module":{"resources":[{"address":"kubernetes_secret_v1.t","type":"kubernetes_secret_v1",
 "values":{"data":{"namespace":"meshcloud-namespace","ca.crt":"-----BEGIN CERTIFICATE-----","token":"eyJhbGciOi-service-token"}},
 "sensitive_values":{"data":{"namespace":true,"ca.crt":true,"token":true}}}]}}}`)
	if s.Len() != 1 || !s.vals["eyJhbGciOi-service-token"] {
		t.Errorf("learned %v, want the token alone", s.vals)
	}
	var whole Values // the provider marks data sensitive as a whole
	whole.Learn(`{"values":{"root_module":{"resources":[{"address":"kubernetes_secret_v1.t","type":"kubernetes_secret_v1",
 "values":{"data":{"namespace":"meshcloud-namespace","ca.crt":"-----BEGIN CERTIFICATE-----","token":"eyJhbGciOi-service-token"}},
 "sensitive_values":{"data":true}}]}}}`)
	if whole.Len() != 1 || !whole.vals["eyJhbGciOi-service-token"] {
		t.Errorf("data marked whole: learned %v, want the token alone", whole.vals)
	}
}

// Redact replaces a value in every form it appears in - as it is, JSON
// escaped, base64 - by one digest per form; a value shorter than
// MinLearned is not learned, but one given by Add is kept.
func TestRedactReplacesEveryForm(t *testing.T) {
	var s Values
	s.Learn(`{"values":{"a":"short","b":"quote\"d-value"},"sensitive_values":{"a":true,"b":true}}`)
	s.Add("tiny")
	text := `plain quote"d-value; json "quote\"d-value"; b64 ` + base64.StdEncoding.EncodeToString([]byte(`quote"d-value`)) + `; short; tiny`
	out := s.Redact(text)
	for _, leak := range []string{`quote"d`, `quote\"d`, base64.StdEncoding.EncodeToString([]byte(`quote"d-value`)), "tiny"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q left in %s", leak, out)
		}
	}
	if !strings.Contains(out, Digest(`quote"d-value`)) || !strings.Contains(out, "short") {
		t.Errorf("redacted: %s", out)
	}
}

// Object digests a Secret's values and leaves other kinds alone; equal
// values stay equal.
func TestObjectDigestsSecretData(t *testing.T) {
	sec := map[string]any{"kind": "Secret", "data": map[string]any{"a": "c2VjcmV0", "b": "c2VjcmV0"}, "stringData": map[string]any{"c": "plain"}}
	cm := map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "c2VjcmV0"}}
	Object(sec)
	Object(cm)
	d := sec["data"].(map[string]any)
	if d["a"] != Digest("c2VjcmV0") || d["a"] != d["b"] || sec["stringData"].(map[string]any)["c"] != Digest("plain") {
		t.Errorf("Secret: %v", sec)
	}
	Object(sec) // twice is once
	if sec["data"].(map[string]any)["a"] != Digest("c2VjcmV0") {
		t.Errorf("digested twice: %v", sec)
	}
	if cm["data"].(map[string]any)["a"] != "c2VjcmV0" {
		t.Errorf("ConfigMap changed: %v", cm)
	}
	for _, c := range []struct {
		object, address, field string
		want                   bool
	}{
		{"Secret ns/a", "", "data.password", true},
		{"Secret ns/a", "", `data["tls.key"]`, true},
		{"Secret ns/a", "", "metadata.labels.x", false},
		{"", "module.m.kubernetes_secret_v1.s[0]", "data", true},
		{"", "kubernetes_secret.s", "binary_data.k", true},
		{"ConfigMap ns/a", "kubernetes_config_map.c", "data.k", false},
	} {
		if got := IsSecretField(c.object, c.address, c.field); got != c.want {
			t.Errorf("IsSecretField(%q, %q, %q) = %v", c.object, c.address, c.field, got)
		}
	}
}

// Scrub learns from the states it finds and rewrites every file holding a
// value; it follows no link.
func TestScrubRewritesKeptFiles(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "subject/root/terraform.tfstate"), rawState)
	write(filepath.Join(dir, "subject/logs/001-tofu-show.log"), "# tofu show -json\n"+shownState)
	write(filepath.Join(dir, "oracle/logs/002-terraform-apply.log"), "result = raw-"+pw+"\n")
	write(filepath.Join(outside, "cache"), "raw-"+pw)
	if err := os.Symlink(filepath.Join(outside, "cache"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	var s Values
	files, err := s.Scrub(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("rewrote %v, %v", files, err)
	}
	for _, p := range []string{"subject/root/terraform.tfstate", "oracle/logs/002-terraform-apply.log"} {
		b, _ := os.ReadFile(filepath.Join(dir, p))
		if strings.Contains(string(b), pw) || !strings.Contains(string(b), Digest("raw-"+pw)) {
			t.Errorf("%s: %s", p, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "cache")); string(b) != "raw-"+pw {
		t.Errorf("followed a link: %s", b)
	}
}
