package conformance

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// enginePins writes pins with today's pair and one more engine version
// (the "engines" group, as third_party/pins.json pins them).
func (r *repo) enginePins(tofu, extra, extraGo string) {
	r.write("third_party/pins.json", fmt.Sprintf(`{"schema":1,"go":"go1.26.8","tools":[
 {"name":"tofu","version":%q,"role":"subject","sha256":%q},
 {"name":"terraform","version":"1.11.4","role":"oracle"},
 {"name":"tofu-%[3]s","version":%[3]q,"engine":"tofu","group":"engines","source":{"go":%[4]q}},
 {"name":"kwok","version":"0.8.0","wrapper":{"dir":"kwok"}},
 {"name":"terraform-provider-random","version":"3.9.0"}],
 "providers":[{"namespace":"hashicorp","type":"random","version":"3.9.0","tool":"terraform-provider-random"}],
 "provider_hosts":["example.invalid"],
 "kind":{"version":"v0.33.0","node_images":[{"image":"img@sha256:1"}]}}`, tofu, tofuSHA, extra, extraGo))
}

func cellOf(t *testing.T, rep *Report, id, engine string) CellProof {
	t.Helper()
	for _, cp := range proofOf(t, rep, id).Cells {
		if strings.HasPrefix(cp.Cell.Engine, engine+" ") {
			return cp
		}
	}
	t.Fatalf("%s: no cell for %s in %+v", id, engine, proofOf(t, rep, id).Cells)
	return CellProof{}
}

// TestEngineCells: a run of another pinned engine version is its own cell
// (requirement x engine), shown and never required; it goes stale when its
// own pin moves and not when today's tofu pin does - and today's cell the
// other way round.
func TestEngineCells(t *testing.T) {
	r := newRepo(t)
	r.enginePins("1.12.6", "1.9.4", "go1.22.12")
	r.commit("pin tofu 1.9.4")
	old := result.Engine{Name: "tofu", Version: "1.9.4", SHA256: strings.Repeat("9", 64), Pinned: "1.9.4"}
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{crashPass()}})
	r.mustRecord(run{estate: "e1", substrate: "local", engine: old, stages: []result.Stage{crashPass()},
		clis: []string{"engines:tofu-1.9.4", "cli:terraform"}})
	r.commit("record both")

	rep := r.report()
	if cp := cellOf(t, rep, reqCrash, "tofu 1.9.4"); cp.Proof != Proven || cp.Required {
		t.Errorf("tofu 1.9.4's cell: %+v, want proven and not required", cp)
	}
	if cp := cellOf(t, rep, reqCrash, "tofu 1.12.6"); cp.Proof != Proven || !cp.Required {
		t.Errorf("tofu 1.12.6's cell: %+v, want proven and required", cp)
	}

	r.enginePins("1.12.6", "1.9.4", "go1.22.5") // only tofu 1.9.4's pin moves
	r.commit("rebuild 1.9.4 with another Go")
	rep = r.report()
	if cp := cellOf(t, rep, reqCrash, "tofu 1.9.4"); cp.Proof != Stale || !strings.Contains(cp.Why, "engines:tofu-1.9.4") {
		t.Errorf("tofu 1.9.4 after its pin moved: %+v, want stale naming its pin", cp)
	}
	if cp := cellOf(t, rep, reqCrash, "tofu 1.12.6"); cp.Proof != Proven {
		t.Errorf("tofu 1.12.6 after 1.9.4's pin moved: %+v, want still proven", cp)
	}

	r.mustRecord(run{estate: "e1", substrate: "local", engine: old, stages: []result.Stage{crashPass()},
		clis: []string{"engines:tofu-1.9.4", "cli:terraform"}})
	r.write("third_party/pins.json", strings.Replace(readFile(t, r.dir+"/third_party/pins.json"), `"sha256":"`+tofuSHA+`"`, `"sha256":"`+strings.Repeat("1", 64)+`"`, 1))
	r.commit("re-record 1.9.4, then rebuild today's tofu")
	rep = r.report()
	if cp := cellOf(t, rep, reqCrash, "tofu 1.9.4"); cp.Proof != Proven {
		t.Errorf("tofu 1.9.4 after today's tofu pin moved: %+v, want still proven", cp)
	}
	if cp := cellOf(t, rep, reqCrash, "tofu 1.12.6"); cp.Proof != Stale || !strings.Contains(cp.Why, "cli:tofu") {
		t.Errorf("tofu 1.12.6 after its pin moved: %+v, want stale naming cli:tofu", cp)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
