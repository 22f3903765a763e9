package rawstate

import (
	"strings"
	"testing"
)

const doc = `{"version":4,"serial":7,"lineage":"l","resources":[
{"mode":"managed","type":"kubernetes_config_map_v1","name":"mid","instances":[{"schema_version":0,"create_before_destroy":true,"attributes":{}}]},
{"mode":"managed","type":"kubernetes_config_map_v1","name":"top","instances":[{"schema_version":0,"attributes":{}}]},
{"module":"module.m","mode":"managed","type":"kubernetes_config_map_v1","name":"top","instances":[{"create_before_destroy":true}]}]}`

// TestCreateBeforeDestroy reads the flag where the engine wrote it, and
// where it did not (false), and clearing it is read back as cleared with
// the serial bumped; a module's resource of the same name is left alone.
func TestCreateBeforeDestroy(t *testing.T) {
	for addr, want := range map[string]bool{"kubernetes_config_map_v1.mid": true, "kubernetes_config_map_v1.top": false} {
		if got, err := CreateBeforeDestroy([]byte(doc), addr); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := CreateBeforeDestroy([]byte(doc), "kubernetes_config_map_v1.gone"); err == nil {
		t.Error("an address not in the state read as a flag")
	}
	out, err := SetCreateBeforeDestroy([]byte(doc), "kubernetes_config_map_v1.mid", false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := CreateBeforeDestroy(out, "kubernetes_config_map_v1.mid"); got {
		t.Error("the flag is still set")
	}
	if !strings.Contains(string(out), `"serial": 8`) || !strings.Contains(string(out), `"lineage": "l"`) {
		t.Errorf("serial not bumped or lineage lost:\n%s", out)
	}
	back, err := SetCreateBeforeDestroy(out, "kubernetes_config_map_v1.top", true)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := CreateBeforeDestroy(back, "kubernetes_config_map_v1.top"); !got {
		t.Error("the flag was not set")
	}
	if _, err := SetCreateBeforeDestroy([]byte(doc), "kubernetes_config_map_v1.gone", true); err == nil {
		t.Error("an address not in the state was edited")
	}
}
