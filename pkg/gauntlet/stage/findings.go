package stage

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The fields findings name and the values BREAKs predict for them. A
// check's finding and a BREAK's prediction are built from these, so the
// two agree by construction rather than by matching text.
const (
	// fieldPlan is the action a plan proposes at an address: "create",
	// "delete", "update", "delete+create", "nothing" (none proposed).
	fieldPlan = "plan"
	// fieldPlanCounts is a plan's summary counts, where no address
	// differs (an import the shape cannot show).
	fieldPlanCounts = "plan counts"
	// fieldExists is whether a live object exists: "present" or
	// "absent".
	fieldExists = "exists"
	// fieldState is whether an address is in a state: "present" or
	// "absent".
	fieldState = "state"
	// fieldVersion is an object's uid and resourceVersion: "unchanged"
	// or "moved" (Detail says from what to what).
	fieldVersion = "uid/resourceVersion"
	// fieldBreakLabel is the stray label BREAKs stamp, as the inventory
	// comparison names its path; the value is its JSON.
	fieldBreakLabel = "metadata.labels." + breakLabel
)

const (
	present   = "present"
	absent    = "absent"
	nothing   = "nothing"
	unchanged = "unchanged"
	moved     = "moved"
	// labelGot is the JSON value of the stray label a BREAK stamps.
	labelGot = `"yes"`
)

// planFinding is a planned action at addr that differs from want.
func planFinding(addr, want, got string) *result.Finding {
	return &result.Finding{Address: addr, Field: fieldPlan, Want: orNothingAction(want), Got: orNothingAction(got)}
}

func orNothingAction(a string) string {
	if a == "" {
		return nothing
	}
	return a
}

// planActions is a plan's actionable changes, action by address; a
// no-op import is "import".
func planActions(p *engine.Plan) map[string]string {
	got := map[string]string{}
	for _, c := range p.Actionable() {
		a := deposedKey.ReplaceAllString(c.Address, "(deposed object)")
		got[a] = joinActions(c.Actions)
		if c.Importing {
			got[a] += " (import)"
		}
	}
	for _, c := range p.Changes {
		if c.Noop() && c.Importing {
			got[c.Address] = "import"
		}
	}
	return got
}

func joinActions(as []string) string {
	out := ""
	for i, a := range as {
		if i > 0 {
			out += "+"
		}
		out += a
	}
	return out
}

// breakLabelPredict is what a check comparing an object must report when
// a BREAK stamped the stray label on it.
func breakLabelPredict(o Object) result.Prediction {
	return result.Prediction{Object: o.Ref.String(), Field: fieldBreakLabel, Got: labelGot}
}

// planPredict is a plan proposing got at addr.
func planPredict(addr, got string) result.Prediction {
	return result.Prediction{Address: addr, Field: fieldPlan, Got: got}
}

// inventoryFindings turns an inventory comparison into findings (with the
// address of objects paired by it), one per
// difference; a difference of a whole map (labels the object had none of)
// is split into one per key, so a stray label reads the same whether or
// not its object had labels before.
func inventoryFindings(rep inventory.Report) error {
	var out []*result.Finding
	for _, d := range rep.Differences {
		ref := d.Object.String()
		var fs []*result.Finding
		switch {
		case d.Missing():
			fs = []*result.Finding{{Object: ref, Field: fieldExists, Want: present, Got: absent}}
		case d.Unexpected():
			fs = []*result.Finding{{Object: ref, Field: fieldExists, Want: absent, Got: present}}
		default:
			fs = splitMap(ref, d.Path, d.Want, d.Got)
		}
		// Paired by state address (inventory.PairBy): the address names
		// the object on both sides, whatever each cluster called it.
		for _, f := range fs {
			f.Address = d.Pair
		}
		out = append(out, fs...)
	}
	return result.Findings(out...)
}

// splitMap names each key of a map-valued difference; any other value is
// one finding.
func splitMap(ref, path, want, got string) []*result.Finding {
	var w, g map[string]json.RawMessage
	if json.Unmarshal([]byte(orJSONNull(want)), &w) != nil || json.Unmarshal([]byte(orJSONNull(got)), &g) != nil || (w == nil && g == nil) {
		return []*result.Finding{{Object: ref, Field: path, Want: want, Got: got}}
	}
	keys := map[string]bool{}
	for k := range w {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	var out []*result.Finding
	for _, k := range sortedKeys(keys) {
		if string(w[k]) != string(g[k]) {
			out = append(out, &result.Finding{Object: ref, Field: path + keyStep(k), Want: string(w[k]), Got: string(g[k])})
		}
	}
	return out
}

// keyStep is a map key as inventory's paths write it.
func keyStep(k string) string {
	if plainKey.MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func orJSONNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// missingFindings names every object of objs that is absent.
func missingFindings(miss []Object) error {
	fs := make([]*result.Finding, len(miss))
	for i, o := range miss {
		fs[i] = &result.Finding{Address: o.Address, Object: o.Ref.String(), Field: fieldExists, Want: present, Got: absent}
	}
	return result.Findings(fs...)
}

// existsPredict is a check finding o deleted (absent) or back (present).
func existsPredict(o Object, got string) result.Prediction {
	return result.Prediction{Object: o.Ref.String(), Field: fieldExists, Got: got}
}

// sortFindings orders findings by victim, then field, for stable detail.
func sortFindings(fs []*result.Finding) {
	slices.SortFunc(fs, func(a, b *result.Finding) int {
		if c := compareStrings(a.Victim(), b.Victim()); c != 0 {
			return c
		}
		return compareStrings(a.Field, b.Field)
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// measure is result.Measure with the side named in op.
func measure(sd *Side, op string, err error) error {
	return result.Measure(fmt.Sprintf("%s on %s", op, sd.Name), err)
}

// fieldApplied is what an apply's output says it did at an address:
// "creation", "modifications", "destruction", "import".
const fieldApplied = "applied"

// appliedNothing asserts an apply acted on nothing: a finding per address
// it acted on, or on its counts when it names none.
func appliedNothing(a engine.Applied) error {
	var fs []*result.Finding
	for _, act := range a.Acted() {
		addr, verb, _ := strings.Cut(act, ": ")
		fs = append(fs, &result.Finding{Address: addr, Field: fieldApplied, Want: nothing, Got: verb})
	}
	if len(fs) == 0 && (a.Added != 0 || a.Changed != 0 || a.Destroyed != 0 || a.Imported != 0) {
		fs = append(fs, &result.Finding{Address: "(the apply)", Field: "apply counts", Want: "0 added, 0 changed, 0 destroyed", Got: a.String()})
	}
	return result.Findings(fs...)
}

// appliedPredict is an apply acting on addr with verb.
func appliedPredict(addr, verb string) result.Prediction {
	return result.Prediction{Address: addr, Field: fieldApplied, Got: verb}
}

// versionFindings names every object whose uid or resourceVersion moved
// between before and after (both from versions); a resourceVersion a
// controller's status write moved is no finding.
func versionFindings(before, after objVersions) error {
	var fs []*result.Finding
	for k, v := range before {
		switch a := after[k]; {
		case a == v, v.statusWrite(a):
		case !a.Present:
			fs = append(fs, &result.Finding{Object: k, Field: fieldExists, Want: present, Got: absent})
		default:
			fs = append(fs, &result.Finding{Object: k, Field: fieldVersion, Want: unchanged, Got: moved, Detail: v.String() + " -> " + a.String()})
		}
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// versionPredict is a check finding o's uid or resourceVersion moved.
func versionPredict(o Object) result.Prediction {
	return result.Prediction{Object: o.Ref.String(), Field: fieldVersion, Got: moved}
}

// onSubject stamps err's findings as the subject's: a comparison of the
// subject's measurement against the oracle's is about the subject.
func onSubject(err error) error { return result.Stamp(err, "", "subject") }

// actedExactly asserts an apply acted on exactly these addresses with
// these verbs ("modifications", "destruction", ...): a finding per address
// acted on otherwise, or not acted on, or on the counts when they
// disagree with what it names.
func actedExactly(a engine.Applied, want map[string]string) error {
	got := map[string]string{}
	for _, act := range a.Acted() {
		addr, verb, _ := strings.Cut(act, ": ")
		if got[addr] != "" {
			verb = got[addr] + "+" + verb
		}
		got[addr] = verb
	}
	var fs []*result.Finding
	for addr, verb := range want {
		if got[addr] != verb {
			fs = append(fs, &result.Finding{Address: addr, Field: fieldApplied, Want: verb, Got: orNothingAction(got[addr])})
		}
	}
	for addr, verb := range got {
		if _, ok := want[addr]; !ok {
			fs = append(fs, &result.Finding{Address: addr, Field: fieldApplied, Want: nothing, Got: verb})
		}
	}
	n := map[string]int{}
	for _, verb := range want {
		for _, v := range strings.Split(verb, "+") {
			n[v]++
		}
	}
	if len(fs) == 0 && (a.Added != n["creation"] || a.Changed != n["modifications"] || a.Destroyed != n["destruction"]) {
		fs = append(fs, &result.Finding{Address: "(the apply)", Field: "apply counts", Got: a.String(),
			Want: fmt.Sprintf("%d added, %d changed, %d destroyed", n["creation"], n["modifications"], n["destruction"])})
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// presence is "present" or "absent".
func presence(there bool) string {
	if there {
		return present
	}
	return absent
}

// snapshotFindings names every object of a records namespace (keys
// starting with only) that went, appeared or whose resourceVersion moved
// between two snapshots: recordstore.Unchanged as findings.
func snapshotFindings(namespace string, before, after recordstore.Snapshot, only string) error {
	var fs []*result.Finding
	for k, v := range before {
		if !strings.HasPrefix(k, only) {
			continue
		}
		switch w, ok := after[k]; {
		case !ok:
			fs = append(fs, &result.Finding{Object: snapshotObject(namespace, k), Field: fieldExists, Want: present, Got: absent})
		case w != v:
			fs = append(fs, &result.Finding{Object: snapshotObject(namespace, k), Field: fieldVersion, Want: unchanged, Got: moved, Detail: "resourceVersion " + v + " -> " + w})
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && strings.HasPrefix(k, only) {
			fs = append(fs, &result.Finding{Object: snapshotObject(namespace, k), Field: fieldExists, Want: absent, Got: present})
		}
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// snapshotObject is a snapshot key ("Secret/name") as an object:
// "Secret ns/name".
func snapshotObject(namespace, key string) string {
	kind, name, _ := strings.Cut(key, "/")
	return kind + " " + namespace + "/" + name
}

// secretMoved is a check finding a records Secret's resourceVersion moved.
func secretMoved(s recordstore.Store) result.Prediction {
	return result.Prediction{Object: "Secret " + s.Namespace + "/" + s.SecretName(), Field: fieldVersion, Got: moved}
}
