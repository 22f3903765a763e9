package inventory

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"
)

// MinGenerated is the shortest value Generated replaces wherever it
// appears inside a string: a value of a few characters (a resource
// version's "518") would match text it did not make, so a shorter one is
// replaced only where a whole string equals it.
const MinGenerated = 6

// substituteGenerated replaces, in every string of obj, each of gen's
// values with its placeholder, longest value first (one value may hold
// another); a value shorter than MinGenerated only where it is the whole
// string. A Secret's data is base64: there the decoded text is replaced
// and encoded again, so each side's own password reads as the same
// placeholder on both.
func substituteGenerated(obj map[string]any, kind string, gen map[string]string) {
	vals := make([]string, 0, len(gen))
	for v := range gen {
		if len(v) >= MinGenerated {
			vals = append(vals, v)
		}
	}
	if len(gen) == 0 {
		return
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	replace := func(s string) string {
		if p, ok := gen[s]; ok {
			return p
		}
		for _, v := range vals {
			s = strings.ReplaceAll(s, v, gen[v])
		}
		return s
	}
	if data, ok := obj["data"].(map[string]any); ok && kind == "Secret" {
		for k, v := range data {
			s, _ := v.(string)
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				continue
			}
			if r := replace(string(raw)); r != string(raw) {
				data[k] = base64.StdEncoding.EncodeToString([]byte(r))
			}
		}
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			return replace(t)
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return v
	}
	walk(obj)
}
