package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// TestRegistryCoversEveryStage: every requirement a stage claims is
// registered, every registered requirement is claimed by a stage, and
// every estate it must hold on exists.
func TestRegistryCoversEveryStage(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	reg, err := LoadRegistry(filepath.Join(root, "conformance", "requirements.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string][]string{}
	for _, s := range stage.All() {
		claims[s.ID()] = s.Requirements()
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
	runs := filepath.Join("..", "..", "..", "conformance", "runs")
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
