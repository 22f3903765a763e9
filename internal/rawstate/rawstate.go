// Package rawstate reads and edits the fields of a raw state document
// (state pull) that show -json does not carry: an instance's
// create_before_destroy. Edits bump the serial, as any writer of a state
// must.
package rawstate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CreateBeforeDestroy reports the flag of every instance at addr (a
// resource address in the root module, "type.name"); an error when the
// state holds no such resource.
func CreateBeforeDestroy(doc []byte, addr string) (bool, error) {
	var s struct {
		Resources []struct {
			Module, Mode, Type, Name string
			Instances                []struct {
				CreateBeforeDestroy bool `json:"create_before_destroy"`
			}
		}
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return false, fmt.Errorf("the state document: %w", err)
	}
	for _, r := range s.Resources {
		if r.Module != "" || r.Mode != "managed" || r.Type+"."+r.Name != addr {
			continue
		}
		if len(r.Instances) == 0 {
			return false, fmt.Errorf("%s has no instance in the state", addr)
		}
		for _, in := range r.Instances {
			if !in.CreateBeforeDestroy {
				return false, nil
			}
		}
		return true, nil
	}
	return false, fmt.Errorf("%s is not in the state", addr)
}

// SetCreateBeforeDestroy returns doc with every instance at addr carrying
// the flag v (absent when false, as the engines write it) and the serial
// one higher.
func SetCreateBeforeDestroy(doc []byte, addr string, v bool) ([]byte, error) {
	var s map[string]any
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, fmt.Errorf("the state document: %w", err)
	}
	resources, _ := s["resources"].([]any)
	found := false
	for _, x := range resources {
		r, _ := x.(map[string]any)
		mod, _ := r["module"].(string)
		if mod != "" || r["mode"] != "managed" || fmt.Sprint(r["type"], ".", r["name"]) != addr {
			continue
		}
		insts, _ := r["instances"].([]any)
		for _, y := range insts {
			in, _ := y.(map[string]any)
			if in == nil {
				continue
			}
			found = true
			if v {
				in["create_before_destroy"] = true
			} else {
				delete(in, "create_before_destroy")
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s has no instance in the state", addr)
	}
	serial, ok := s["serial"].(float64)
	if !ok {
		return nil, fmt.Errorf("the state document has no serial")
	}
	s["serial"] = serial + 1
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return []byte(strings.TrimSpace(string(out)) + "\n"), nil
}
