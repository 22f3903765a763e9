package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// TestRegistryCoversEveryStage: every requirement a stage claims is
// registered, every registered requirement is claimed by a stage, and
// every estate it must hold on exists.
func TestRegistryCoversEveryStage(t *testing.T) {
	root := filepath.Join("..", "..")
	reg, err := LoadRegistry(filepath.Join(root, "conformance", "requirements.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string][]string{}
	for _, s := range stage.Default().Stages() {
		claims[s.Info().ID] = s.Info().AllRequirements()
	}
	cov := ComputeCoverage(reg, claims)
	if !cov.Clean() {
		t.Errorf("uncovered %v, unregistered %v", cov.Uncovered, cov.Unregistered)
	}
	for _, q := range reg.Requirements {
		for _, e := range q.Estates {
			if _, err := os.Stat(filepath.Join(root, "estates", e, "estate.yaml")); err != nil {
				t.Errorf("%s must hold on estate %s: %v", q.ID, e, err)
			}
		}
	}
}

func TestRegistryRejects(t *testing.T) {
	for name, y := range map[string]string{
		"no cells":      "requirements:\n- {id: GAUNT-X-01, statement: x}\n",
		"bad substrate": "requirements:\n- {id: GAUNT-X-01, statement: x, estates: [e], substrates: [moon]}\n",
		"old paths":     "requirements:\n- {id: GAUNT-X-01, statement: x, estates: [e], substrates: [local], paths: [a.go]}\n",
		"bad id":        "requirements:\n- {id: x-1, statement: x, estates: [e], substrates: [local]}\n",
	} {
		if _, err := ParseRegistry(name, []byte(y)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRealLedgerVerifies: the ledger committed in this repository
// rebuilds, line for line, from its run folders.
func TestRealLedgerVerifies(t *testing.T) {
	runs := filepath.Join("..", "..", "conformance", "runs")
	l, err := Verify(filepath.Join(runs, "ledger.jsonl"), runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Problems {
		t.Errorf("ledger %s", p)
	}
	if len(l.Rows)+len(l.History) == 0 {
		t.Error("the committed ledger has no rows")
	}
}

// TestRealClosure: in this repository, the runner's closure holds what
// the tampering touched (the runner, the stage recorder), the
// pins are split per substrate, and pins.json is not counted as code.
func TestRealClosure(t *testing.T) {
	needTools(t)
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skipf("needs the whole checkout (not a test's runfiles): %v", err)
	}
	tree, err := NewTree(context.Background(), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	local, err := tree.Inputs("corpus-k8s-metrics-server", "local", nil)
	if err != nil {
		t.Fatal(err)
	}
	kind, err := tree.Inputs("corpus-k8s-metrics-server", "kind", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pkg/gauntlet/runner.go", "pkg/gauntlet/stage/record.go"} {
		if local.Code[f] == "" {
			t.Errorf("%s is not in the run's closure", f)
		}
	}
	for _, p := range []string{"pkg/gauntlet", "pkg/gauntlet/stage", "std", "sigs.k8s.io/yaml@v1.6.0"} {
		if local.Compiled[p] == "" {
			t.Errorf("%s is not in the run's compiled closure: %v", p, local.Compiled)
		}
	}
	for _, p := range []string{"internal/conformance", "internal/evidence", "tools/gauntlet"} {
		if local.Compiled[p] != "" {
			t.Errorf("%s is in the run's compiled closure", p)
		}
	}
	if !strings.HasPrefix(local.Compiled["third_party"], "source ") {
		t.Errorf("third_party (the pins) is keyed by its compiled content %q: a pin bump would stale every proof", local.Compiled["third_party"])
	}
	// v1 recordings are judged by the whole CLI's source, as they were.
	for _, f := range []string{"internal/conformance/ledger.go", "tools/gauntlet/run.go", "go.mod", "go.sum"} {
		if tree.v1code[f] == "" {
			t.Errorf("%s is not in the CLI's source closure (v1)", f)
		}
	}
	if local.Code["third_party/pins.json"] != "" || tree.v1code["third_party/pins.json"] != "" || local.Code["internal/conformance/conformance_test.go"] != "" {
		t.Error("pins.json or a test file counted as code")
	}
	for _, p := range []string{"cli:tofu", "cli:terraform", "go", "local:kwok", "local:etcd", "provider:terraform-provider-kubernetes"} {
		if local.Pins[p] == "" {
			t.Errorf("local inputs lack pin %s: %v", p, local.Pins)
		}
	}
	if local.Pins["kind"] != "" || kind.Pins["local:kwok"] != "" || kind.Pins["kind"] == "" || kind.Pins["kind:kubelet"] == "" {
		t.Errorf("substrate pins are not split: local %v, kind %v", local.Pins, kind.Pins)
	}
	if local.Corpus == "" || local.EstateFiles["estates/corpus-k8s-metrics-server/estate.yaml"] == "" {
		t.Errorf("estate inputs: corpus %q, files %v", local.Corpus, local.EstateFiles)
	}
	if v, sha, ok := tree.PinnedCLI("tofu"); !ok || v == "" || len(sha) != 64 {
		t.Errorf("pinned tofu %q %q %v", v, sha, ok)
	}
}
