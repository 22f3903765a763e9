package recordstore

import (
	"strings"
	"testing"
)

func TestDecodeAddresses(t *testing.T) {
	rec, err := decode([]byte(`{"version":4,"serial":7,"lineage":"l-1","resources":[
	 {"mode":"managed","type":"kubernetes_config_map_v1","name":"one","instances":[{}]},
	 {"mode":"data","type":"terraform_remote_state","name":"network","instances":[{}]},
	 {"module":"module.ns","mode":"managed","type":"kubernetes_role_v1","name":"r","instances":[{"index_key":0},{"index_key":1}]},
	 {"mode":"managed","type":"kubernetes_secret_v1","name":"s","instances":[{"index_key":"a"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"data.terraform_remote_state.network", "kubernetes_config_map_v1.one", `kubernetes_secret_v1.s["a"]`,
		"module.ns.kubernetes_role_v1.r[0]", "module.ns.kubernetes_role_v1.r[1]"}
	if strings.Join(rec.Managed, " ") != strings.Join(want, " ") || rec.Serial != 7 || rec.Lineage != "l-1" {
		t.Fatalf("decoded %+v, want addresses %v, serial 7, lineage l-1", rec, want)
	}
	if _, err := decode([]byte(`{"version":3}`)); err == nil {
		t.Fatal("a version 3 state decoded")
	}
}

func TestChecksNameWhatDiffers(t *testing.T) {
	s := Store{Namespace: "ns", Suffix: "app"}
	rec := &Record{Serial: 3, Managed: []string{"a.x", "b.y"}}
	err := Manages(s, rec, []string{"b.y", "c.z"})
	if err == nil || !strings.Contains(err.Error(), "lacks c.z") || !strings.Contains(err.Error(), "holds a.x") ||
		!strings.Contains(err.Error(), "tfstate-default-app") {
		t.Fatalf("Manages: %v", err)
	}
	if err := Manages(s, rec, []string{"b.y", "a.x"}); err != nil {
		t.Fatal(err)
	}
	before := Snapshot{"Secret/a": "1", "Lease/l": "2", "Secret/b": "5"}
	after := Snapshot{"Secret/a": "3", "Lease/l": "9", "Secret/c": "4"}
	err = Unchanged("ns", before, after, "Secret/")
	if err == nil || err.Error() != "namespace ns: Secret/a changed (resourceVersion 1 -> 3); Secret/b went; Secret/c appeared" {
		t.Fatalf("Unchanged: %v", err)
	}
	if err := Unchanged("ns", before, Snapshot{"Secret/a": "1", "Secret/b": "5", "Lease/l": "3"}, "Secret/"); err != nil {
		t.Fatalf("a Lease change counted with only Secret/: %v", err)
	}
}
