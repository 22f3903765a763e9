package conformance

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestStaleCells: `record --stale` re-proves exactly the required cells
// with a stage that was never recorded or only from inputs that changed;
// a proven cell, a cell whose current run failed and a cell no
// requirement names are left alone.
func TestStaleCells(t *testing.T) {
	r := newRepo(t)
	strict := result.Stage{ID: "strict", Verdict: result.NotRun, Reason: "needs live mode", Requirements: []string{"GAUNT-LIVE-STRICT-01"}}
	full := func(substrate string, stages ...result.Stage) string {
		return r.mustRecord(run{estate: "e1", substrate: substrate, engine: pinnedTofu(), stages: stages})
	}
	want := func(step string, names ...string) {
		t.Helper()
		needs, err := StaleCells(r.world(), r.verified())
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var got []string
		for _, n := range needs {
			got = append(got, n.Name())
		}
		if strings.Join(got, " ") != strings.Join(names, " ") {
			t.Errorf("%s: cells %v, want %v (%+v)", step, got, names, needs)
		}
	}
	want("nothing recorded", "e1/kind", "e1/local")

	full("local", coldPass(), crashPass(), strict)
	want("local recorded", "e1/kind")
	// An unpinned engine's run on kind is another cell: kind is still missing.
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: result.Engine{Name: "tofu", Version: "1.12.6", SHA256: "ab"}, stages: []result.Stage{coldPass(), crashPass()}})
	want("an unpinned run on kind", "e1/kind")
	// A run with --stages day2_crash leaves cold_deploy missing on kind.
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), selected: []string{"day2_crash"}, stages: []result.Stage{coldPass(), crashPass()}})
	want("kind with day2_crash only", "e1/kind")
	full("kind", coldPass(), crashPass())
	r.commit("record")
	want("both recorded")

	r.write("pkg/stage/record.go", "package stage\n\n// Failed says whether a check failed.\nfunc Failed() bool { return false }\n")
	r.commit("change the stage code")
	want("stage code changed", "e1/kind", "e1/local")
	needs, _ := StaleCells(r.world(), r.verified())
	if len(needs) != 2 || needs[0].Missing || !strings.Contains(needs[0].Why, "pkg/stage/record.go") {
		t.Errorf("stale cells should say what changed: %+v", needs)
	}

	full("local", coldPass(), crashPass(), strict)
	full("kind", coldPass(), stg("day2_crash", result.Fail, []string{reqCrash}))
	want("re-proved, kind failing at the current inputs")

	r.pins("1.12.6", tofuSHA, "0.8.1", "img@sha256:1") // kwok: a local pin
	r.commit("bump kwok")
	want("a local pin bumped", "e1/local")
}

func (r *repo) verified() *Ledger {
	r.t.Helper()
	l, err := Verify(r.ledger(), r.runs())
	if err != nil {
		r.t.Fatal(err)
	}
	if len(l.Problems) > 0 {
		r.t.Fatalf("ledger problems: %v", l.Problems)
	}
	return l
}

// TestStaleCellsFollowTheRegistry: `record --stale` re-proves what status
// calls stale when a requirement's registry entry changes - the cells
// that requirement needs, not another's - and runs recorded before
// inputs.json kept the entries.
func TestStaleCellsFollowTheRegistry(t *testing.T) {
	r := newRepo(t)
	strict := result.Stage{ID: "strict", Verdict: result.NotRun, Reason: "needs live mode", Requirements: []string{"GAUNT-LIVE-STRICT-01"}}
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass(), strict}})
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{coldPass(), crashPass()}})
	r.commit("record")
	cells := func() []Need {
		t.Helper()
		needs, err := StaleCells(r.world(), r.verified())
		if err != nil {
			t.Fatal(err)
		}
		return needs
	}
	if needs := cells(); len(needs) != 0 {
		t.Fatalf("all recorded: %+v", needs)
	}
	reg := mustRead(t, filepath.Join(r.dir, "conformance/requirements.yaml"))
	r.write("conformance/requirements.yaml", strings.Replace(reg, "statement: cold,", "statement: a cold deploy converges,", 1))
	r.commit("reword cold")
	needs := cells()
	if len(needs) != 1 || needs[0].Name() != "e1/kind" || !strings.Contains(needs[0].Why, reqCold+"'s registry entry") {
		t.Errorf("cold reworded (required on kind only): %+v, want e1/kind naming its entry", needs)
	}

	// Runs that kept no registry say nothing about any wording.
	r = newRepo(t)
	r.mustRecord(run{estate: "e1", substrate: "local", engine: pinnedTofu(), noRegistry: true, stages: []result.Stage{coldPass(), crashPass(), strict}})
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), noRegistry: true, stages: []result.Stage{coldPass(), crashPass()}})
	r.commit("record without the registry")
	if needs := cells(); len(needs) != 2 || !strings.Contains(needs[0].Why, "predates") {
		t.Errorf("runs without the registry: %+v, want both cells stale", needs)
	}
}
