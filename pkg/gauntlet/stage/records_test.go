package stage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
)

const stateJSON = `{"version": 4, "serial": 3, "lineage": "l-1", "resources": [
 {"mode": "managed", "type": "kubernetes_config_map_v1", "name": "one", "instances": [{"attributes": {}}]},
 {"mode": "managed", "type": "kubernetes_config_map_v1", "name": "many", "instances": [{"index_key": 0, "attributes": {}}, {"index_key": 1, "attributes": {}}]},
 {"mode": "data", "type": "terraform_remote_state", "name": "network", "instances": [{"attributes": {}}]}]}`

// edited applies a record edit to stateJSON and decodes the result the
// way the record-store checks read it.
func edited(t *testing.T, edit func(map[string]any) error) ([]string, error) {
	t.Helper()
	var st map[string]any
	if err := json.Unmarshal([]byte(stateJSON), &st); err != nil {
		t.Fatal(err)
	}
	if err := edit(st); err != nil {
		return nil, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := recordstore.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Managed, nil
}

func TestRecordEdits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(map[string]any) error
		gone, new string
	}{
		{name: "drop a single instance", edit: dropInstance("kubernetes_config_map_v1.one"), gone: "kubernetes_config_map_v1.one"},
		{name: "drop one of a count", edit: dropInstance("kubernetes_config_map_v1.many[1]"), gone: "kubernetes_config_map_v1.many[1]"},
		{name: "slip one in", edit: injectInstance(ghostAddress), new: ghostAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := edited(t, tc.edit)
			if err != nil {
				t.Fatal(err)
			}
			if tc.gone != "" && slices.Contains(got, tc.gone) {
				t.Errorf("%s still in %v", tc.gone, got)
			}
			if tc.new != "" && !slices.Contains(got, tc.new) {
				t.Errorf("%s not in %v", tc.new, got)
			}
			if want := 4 - btoi(tc.gone != "") + btoi(tc.new != ""); len(got) != want {
				t.Errorf("%d addresses %v, want %d: the edit touched more than its victim", len(got), got, want)
			}
		})
	}
	if _, err := edited(t, dropInstance("kubernetes_config_map_v1.absent")); err == nil {
		t.Error("dropping an address the state lacks: no error")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCopyConfigLeavesStateAndDotDirs(t *testing.T) {
	from, to := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	for name, body := range map[string]string{
		"main.tf": "x", "gauntlet.auto.tfvars.json": "{}", ".terraform.lock.hcl": "lock", "modules/m/main.tf": "m",
		"terraform.tfstate": "{}", "terraform.tfstate.backup": "{}", ".terraform/terraform.tfstate": "{}", ".home/x": "h",
	} {
		p := filepath.Join(from, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyConfig(from, to); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"main.tf": true, "gauntlet.auto.tfvars.json": true, ".terraform.lock.hcl": true, "modules/m/main.tf": true,
		"terraform.tfstate": false, "terraform.tfstate.backup": false, ".terraform": false, ".home": false,
	} {
		_, err := os.Stat(filepath.Join(to, name))
		if got := err == nil; got != want {
			t.Errorf("%s copied: %v, want %v", name, got, want)
		}
	}
}
