// Package secret keeps secret values out of everything a run leaves
// behind: the evidence page, run.json, JUnit, the matrix and mutant pages
// and the kept work folder. It holds the two rules in one place:
//
//   - structurally, a Secret's data, stringData and binaryData, and the
//     data of a kubernetes_secret or kubernetes_secret_v1 resource, are
//     never shown: each value becomes its Digest, so two sides can still be
//     seen equal or different;
//   - by value, every value the configuration marks sensitive (a sensitive
//     variable, output or attribute, e.g. random_password.result) and every
//     value of such Secret data that an engine printed is replaced by its
//     Digest wherever it appears (Values).
package secret

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"sync"
)

// Prefix starts every digest.
const Prefix = "sha256:"

// Digest is what is shown in place of a secret value: "sha256:" and the
// first 16 hex digits of its sha256, then "…". Equal values have equal
// digests; 64 bits make two different values' digests differ in practice.
func Digest(v string) string {
	h := sha256.Sum256([]byte(v))
	return Prefix + hex.EncodeToString(h[:8]) + "…"
}

// IsDigest reports whether s is already a Digest.
func IsDigest(s string) bool {
	return len(s) == len(Prefix)+16+len("…") && strings.HasPrefix(s, Prefix) && strings.HasSuffix(s, "…")
}

// dataFields are the fields of a Secret holding its secret values.
var dataFields = []string{"data", "stringData", "binaryData"}

// Object replaces, in place, every value of a Secret's data, stringData
// and binaryData with its Digest; obj is the object's JSON map (as in
// unstructured.Unstructured.Object). Objects of other kinds are left
// alone.
func Object(obj map[string]any) {
	if obj == nil || obj["kind"] != "Secret" {
		return
	}
	for _, f := range dataFields {
		m, ok := obj[f].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			if s, ok := v.(string); ok && !IsDigest(s) {
				m[k] = Digest(s)
			}
		}
	}
}

// IsSecretField reports whether field (a path such as "data.password" or
// `data["tls.key"]`) of victim holds secret data: victim is a live object
// ("Secret ns/name") or a state address whose type is kubernetes_secret
// or kubernetes_secret_v1.
func IsSecretField(object, address, field string) bool {
	secret := strings.HasPrefix(object, "Secret ") || isSecretAddress(address)
	if !secret {
		return false
	}
	for _, f := range append(dataFields, "binary_data") {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return true
		}
	}
	return false
}

func isSecretAddress(addr string) bool {
	for _, part := range strings.Split(addr, ".") {
		if part == "kubernetes_secret" || part == "kubernetes_secret_v1" {
			return true
		}
	}
	return false
}

// Shown is v as a field of secret data may be shown: "" and values that
// are already digests as they are, anything else as its Digest.
func Shown(v string) string {
	if v == "" || IsDigest(v) {
		return v
	}
	return Digest(v)
}

// MinLearned is the shortest value Learn keeps: a value replaced wherever
// it appears must not be a common word ("admin", "default", "true"). Values
// given by Add are kept at any length.
const MinLearned = 8

// Values is the set of secret values a run has seen, safe for concurrent
// use. The zero value is empty and ready.
type Values struct {
	mu   sync.Mutex
	vals map[string]bool
}

// Add keeps each non-empty value, whatever its length (the estate said
// it is sensitive).
func (s *Values) Add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vals {
		if v == "" {
			continue
		}
		if s.vals == nil {
			s.vals = map[string]bool{}
		}
		s.vals[v] = true
	}
}

// Len is how many values are kept.
func (s *Values) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals)
}

// Learn keeps the secret values in text when it is Terraform JSON - a
// state or plan from `show -json`, a raw state (`state pull`, a
// .tfstate file): every value marked sensitive (sensitive_values,
// before_/after_sensitive, sensitive_attributes, sensitive outputs and
// variables) and every data value of a kubernetes_secret or
// kubernetes_secret_v1. Text that is not JSON teaches nothing. It returns
// how many values it kept.
func (s *Values) Learn(text string) int {
	// An engine's output is stdout and stderr together: the document
	// starts on the first line that opens an object, and ends where it
	// closes (a warning may come before or after it).
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		i := strings.Index(t, "\n{")
		if i < 0 {
			return 0
		}
		t = t[i+1:]
	}
	var doc any
	if json.NewDecoder(strings.NewReader(t)).Decode(&doc) != nil {
		return 0
	}
	var found []string
	collect(doc, &found)
	var keep []string
	for _, v := range found {
		if len(v) >= MinLearned {
			keep = append(keep, v)
		}
	}
	s.Add(keep...)
	return len(keep)
}

// forms are the ways each value can appear in text: as it is, escaped in
// JSON, and base64-encoded (a Secret's data as the API serves it),
// longest first so that a value containing another is replaced whole.
func (s *Values) forms() [][2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][2]string
	for v := range s.vals {
		d := Digest(v)
		out = append(out, [2]string{v, d})
		if b, err := json.Marshal(v); err == nil {
			if esc := strings.Trim(string(b), `"`); esc != v {
				out = append(out, [2]string{esc, d})
			}
		}
		if len(v) >= MinLearned {
			out = append(out, [2]string{base64.StdEncoding.EncodeToString([]byte(v)), Digest(base64.StdEncoding.EncodeToString([]byte(v)))})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i][0]) != len(out[j][0]) {
			return len(out[i][0]) > len(out[j][0])
		}
		return out[i][0] < out[j][0]
	})
	return out
}

// Redact replaces every kept value in text (in any of its forms) with its
// Digest.
func (s *Values) Redact(text string) string {
	for _, f := range s.forms() {
		text = strings.ReplaceAll(text, f[0], f[1])
	}
	return text
}

// collect walks a Terraform JSON document and appends every secret string
// in it to out.
func collect(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		collectMarked(t, out)
		for _, e := range t {
			collect(e, out)
		}
	case []any:
		for _, e := range t {
			collect(e, out)
		}
	}
}

// collectMarked takes the secret values one JSON object carries beside
// their marks, in each shape Terraform and OpenTofu write.
func collectMarked(m map[string]any, out *[]string) {
	// show -json: values with sensitive_values (state, planned_values,
	// prior_state); a plan's change with before_/after_sensitive.
	for _, pair := range [][2]string{{"values", "sensitive_values"}, {"before", "before_sensitive"}, {"after", "after_sensitive"}} {
		if mask, ok := m[pair[1]]; ok {
			masked(m[pair[0]], mask, out)
		}
	}
	// An output or a plan's variable marked sensitive.
	if m["sensitive"] == true {
		if v, ok := m["value"]; ok {
			strs(v, out)
		}
	}
	// A raw state's instance: attributes with sensitive_attributes paths.
	if attrs, ok := m["attributes"].(map[string]any); ok {
		if paths, ok := m["sensitive_attributes"].([]any); ok {
			for _, p := range paths {
				strs(follow(attrs, p), out)
			}
		}
	}
	// A plan's variables, marked sensitive in its configuration.
	if cfg, ok := m["configuration"].(map[string]any); ok {
		if vars, ok := m["variables"].(map[string]any); ok {
			rm, _ := cfg["root_module"].(map[string]any)
			decl, _ := rm["variables"].(map[string]any)
			for name, d := range decl {
				if dm, ok := d.(map[string]any); ok && dm["sensitive"] == true {
					if vv, ok := vars[name].(map[string]any); ok {
						strs(vv["value"], out)
					}
				}
			}
		}
	}
	// A kubernetes Secret resource, marked or not.
	if typ, _ := m["type"].(string); typ == "kubernetes_secret" || typ == "kubernetes_secret_v1" {
		secretData(m, out)
	}
}

// public are the data keys a service-account token Secret's controller
// writes that are no secret: the namespace's name and the cluster's CA
// certificate. Learned, the namespace's name would be replaced wherever it
// appears on a page (a namespace named like the estate: every line).
var public = map[string]bool{"namespace": true, "ca.crt": true}

// secretData appends every string under a "data", "binary_data" or
// "string_data" key anywhere in v, but the public keys.
func secretData(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if k == "data" || k == "binary_data" || k == "string_data" {
				privateStrs(e, out)
				continue
			}
			secretData(e, out)
		}
	case []any:
		for _, e := range t {
			secretData(e, out)
		}
	}
}

// privateStrs appends the strings of v, a data map's but under its
// public keys.
func privateStrs(v any, out *[]string) {
	vm, ok := v.(map[string]any)
	if !ok {
		strs(v, out)
		return
	}
	for k, e := range vm {
		if !public[k] {
			strs(e, out)
		}
	}
}

// masked appends the strings of v wherever mask (the same shape, true
// where sensitive) says so.
func masked(v, mask any, out *[]string) {
	switch mk := mask.(type) {
	case bool:
		if mk {
			privateStrs(v, out)
		}
	case map[string]any:
		vm, _ := v.(map[string]any)
		for k, sub := range mk {
			if public[k] {
				continue
			}
			masked(vm[k], sub, out)
		}
	case []any:
		vl, _ := v.([]any)
		for i, sub := range mk {
			if i < len(vl) {
				masked(vl[i], sub, out)
			}
		}
	}
}

// follow walks a sensitive_attributes path ([{"type":"get_attr",
// "value":"result"}, {"type":"index","value":{"value":0,"type":"number"}}])
// from attrs; nil when it leads nowhere.
func follow(attrs map[string]any, path any) any {
	steps, ok := path.([]any)
	if !ok {
		return nil
	}
	var cur any = attrs
	for _, st := range steps {
		sm, _ := st.(map[string]any)
		key := sm["value"]
		if km, ok := key.(map[string]any); ok {
			key = km["value"]
		}
		switch c := cur.(type) {
		case map[string]any:
			k, ok := key.(string)
			if !ok {
				return nil
			}
			cur = c[k]
		case []any:
			n, ok := key.(float64)
			if !ok || int(n) < 0 || int(n) >= len(c) {
				return nil
			}
			cur = c[int(n)]
		default:
			return nil
		}
	}
	return cur
}

// strs appends every string in v.
func strs(v any, out *[]string) {
	switch t := v.(type) {
	case string:
		*out = append(*out, t)
	case map[string]any:
		for _, e := range t {
			strs(e, out)
		}
	case []any:
		for _, e := range t {
			strs(e, out)
		}
	}
}
