package stage

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	tfjson "github.com/hashicorp/terraform-json"
)

// pairSides keeps, from the two sides' cold-deploy states, what differs
// between them by construction: the oracle's object for each of the
// subject's that the oracle names otherwise (a name the server generated
// from generate_name), paired by state address; and each side's
// provider-generated values.
func (r *Run) pairSides(objs map[string][]Object, gen map[string]map[string]string) {
	oracle := map[string]estate.Object{}
	for _, o := range objs["oracle"] {
		oracle[o.Address] = o.Ref
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counterpart = map[estate.Object]estate.Object{}
	for _, o := range objs["subject"] {
		if ref, ok := oracle[o.Address]; ok && ref != o.Ref {
			r.counterpart[o.Ref] = ref
		}
	}
	r.generated = gen
}

// onSide returns objs (the subject's, as Run.Objects holds them) as sd
// names them: on the oracle, an object whose name its server generated
// is the oracle's own object of the same address.
func (r *Run) onSide(sd *Side, objs []Object) []Object {
	if sd.Name != "oracle" {
		return objs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Object, len(objs))
	for i, o := range objs {
		if ref, ok := r.counterpart[o.Ref]; ok {
			o.Ref = ref
		}
		out[i] = o
	}
	return out
}

// acrossClusters are the options that compare sd's objects (objs, as sd
// names them) with the oracle's cold-deploy inventory: objects paired by
// state address, and each side's provider-generated values matched with
// its own state rather than with the other cluster.
func (r *Run) acrossClusters(sd *Side, objs []Object) []inventory.Option {
	want := addressesByRef(r.onSide(r.Oracle, objs))
	r.mu.Lock()
	defer r.mu.Unlock()
	return []inventory.Option{
		inventory.PairBy(want, addressesByRef(objs)),
		inventory.Generated(r.generated["oracle"], r.generated[sd.Name]),
	}
}

// freshAcrossClusters are acrossClusters' options for objects a fresh
// apply made with a state of its own (objs, gen): paired with the
// oracle's cold deploy by state address, generated values matched with
// that state's.
func (r *Run) freshAcrossClusters(objs []Object, gen map[string]string) []inventory.Option {
	want := addressesByRef(r.onSide(r.Oracle, r.coldObjects))
	r.mu.Lock()
	defer r.mu.Unlock()
	return []inventory.Option{inventory.PairBy(want, addressesByRef(objs)), inventory.Generated(r.generated["oracle"], gen)}
}

// addressesByRef maps each object to its state address, for PairBy.
func addressesByRef(objs []Object) map[inventory.Ref]string {
	m := make(map[inventory.Ref]string, len(objs))
	for _, o := range objs {
		m[refOf(o)] = o.Address
	}
	return m
}

// generatedAttributes are, by resource type, the attributes a provider
// generates (not those the configuration sets): they differ between the
// two sides by construction. random_integer and random_shuffle are left
// out: their results are short numbers or the configuration's own inputs.
func generatedAttributes() map[string][]string {
	return map[string][]string{
		"random_password": {"result", "bcrypt_hash"},
		"random_string":   {"result"},
		"random_id":       {"id", "hex", "dec", "b64_std", "b64_url"},
		"random_uuid":     {"id", "result"},
		"random_pet":      {"id"},
		"random_bytes":    {"base64", "hex"},
	}
}

// serverWritten reads, from a kubernetes object's state attributes, the
// identity values its cluster wrote - resource version and uid - by the
// attribute path they came from. A configuration that copies one into
// another object (an annotation holding a Secret's resource_version, to
// roll pods when it changes) writes a value each cluster chose.
func serverWritten(res *tfjson.StateResource) map[string]string {
	out := map[string]string{}
	var md map[string]any
	switch {
	case res.Type == "kubernetes_manifest":
		obj, _ := res.AttributeValues["object"].(map[string]any)
		md, _ = obj["metadata"].(map[string]any)
		for attr, key := range map[string]string{"object.metadata.resourceVersion": "resourceVersion", "object.metadata.uid": "uid"} {
			if v, ok := md[key].(string); ok && v != "" {
				out[attr] = v
			}
		}
	case strings.HasPrefix(res.Type, "kubernetes_"):
		list, _ := res.AttributeValues["metadata"].([]any)
		if len(list) == 1 {
			md, _ = list[0].(map[string]any)
		}
		for _, key := range []string{"resource_version", "uid"} {
			if v, ok := md[key].(string); ok && v != "" {
				out["metadata.0."+key] = v
			}
		}
	}
	return out
}

// generatedValues maps each value a provider generated in st, and each
// identity value a cluster wrote into a kubernetes object's state
// (serverWritten), to a placeholder naming where it came from, e.g.
// "${random_password.db.result}"; the placeholder never holds the value.
func generatedValues(st *tfjson.State) map[string]string {
	out := map[string]string{}
	if st == nil || st.Values == nil {
		return out
	}
	attrs := generatedAttributes()
	var walk func(m *tfjson.StateModule)
	walk = func(m *tfjson.StateModule) {
		for _, res := range m.Resources {
			if res.Mode != tfjson.ManagedResourceMode {
				continue
			}
			for _, a := range attrs[res.Type] {
				if v, ok := res.AttributeValues[a].(string); ok && v != "" {
					out[v] = fmt.Sprintf("${%s.%s}", res.Address, a)
				}
			}
			for a, v := range serverWritten(res) {
				out[v] = fmt.Sprintf("${%s.%s}", res.Address, a)
			}
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(st.Values.RootModule)
	return out
}
