package conformance

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestRunAtMissingCommit: a run folder that is self-consistent but names
// a commit this repository does not have is a ledger problem once the
// ledger is verified in its repository, and its rows prove nothing.
func TestRunAtMissingCommit(t *testing.T) {
	r := newRepo(t)
	in := r.inputsNow("e1", "local")
	res := &result.Run{Estate: result.Estate{Name: "e1"}, Subject: pinnedTofu(),
		Oracle: result.Engine{Name: "terraform", Version: "1.11.4", SHA256: tfSHA, Pinned: "1.11.4"}, Substrate: "local substrate",
		Commit: strings.Repeat("ab", 20), StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), Stages: []result.Stage{crashPass()}}
	id := RunID(res, "local")
	rb, _ := json.Marshal(res)
	ib, _ := in.Encode()
	r.write(filepath.Join("conformance/runs", id, RunJSON), string(rb))
	r.write(filepath.Join("conformance/runs", id, InputsJSON), string(ib))
	r.write(filepath.Join("conformance/runs", id, EvidenceMD), "# Evidence\n")
	r.write(filepath.Join("conformance/runs", id, JUnitXML), "<testsuites/>\n")
	if _, err := Append(r.ledger(), r.runs(), id); err != nil {
		t.Fatal(err)
	}
	r.commit("a made-up run")
	l, err := VerifyIn(context.Background(), Git{Dir: r.dir}, r.ledger(), r.runs())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Problems) != 1 || !strings.Contains(l.Problems[0].What, "does not exist") || len(l.Rows) != 0 {
		t.Errorf("problems %v, rows %d; want the missing commit named and no row", l.Problems, len(l.Rows))
	}
	// A run at a real commit verifies.
	r.mustRecord(run{estate: "e1", substrate: "kind", engine: pinnedTofu(), stages: []result.Stage{crashPass()}})
	r.commit("a real run")
	if l, _ := VerifyIn(context.Background(), Git{Dir: r.dir}, r.ledger(), r.runs()); len(l.Rows) != 1 {
		t.Errorf("a run at an existing commit: %d rows, problems %v", len(l.Rows), l.Problems)
	}
}

// TestOldInputsAreStale: a run recorded before inputs.json kept the
// registry entries cannot say which wording it proved: stale, named.
func TestOldInputsAreStale(t *testing.T) {
	q := Requirement{ID: "GAUNT-X-01", Statement: "x", Estates: []string{"e"}, Substrates: []string{"local"}}
	if why := RequirementChanged(&Inputs{}, q); !strings.Contains(why, "predates") {
		t.Errorf("no registry in the inputs: %q", why)
	}
	if why := RequirementChanged(&Inputs{Requirements: map[string]string{}}, q); !strings.Contains(why, "was not in the registry") {
		t.Errorf("an entry added since: %q", why)
	}
	if why := RequirementChanged(&Inputs{Requirements: map[string]string{q.ID: q.EntryHash()}}, q); why != "" {
		t.Errorf("the same entry: %q", why)
	}
	q2 := q
	q2.Gap = "a reviewed reason"
	if q2.EntryHash() != q.EntryHash() {
		t.Error("a gap changed the entry's hash: it says whether a gate waits, not what a run showed")
	}
}

// TestDeclinedEstate: an estate whose estate.yaml declines the stage that
// verifies a requirement (a skip) is shown with its reason and never
// waited for; every estate of the corpus is listed, recorded or not.
func TestDeclinedEstate(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	r.mustRecord(run{estate: "e2", substrate: "local", engine: pinnedTofu(), stages: []result.Stage{
		{ID: "day2_crash", Verdict: result.NotRun, Reason: "the estate skips it: one object only", Requirements: []string{reqCrash}}}})
	r.commit("e2 skips the crash stage")
	w := r.world()
	w.Estates = []string{"e1", "e2", "e3"}
	// The estate's judge: e2's not-run is what it expects only once its
	// estate.yaml declines the stage.
	declined := false
	w.Judge = func(estate, run string) ([]string, error) {
		if estate == "e2" && !declined {
			return []string{"day2_crash: not run: the estate skips it: one object only"}, nil
		}
		return nil, nil
	}
	rep := r.deriveWith(w)
	// Without the declaration e2's not-run is its own cell's failure, and
	// the gate blocks on it; a stage that did not run exercises nothing.
	wantProof(t, rep, reqCrash, Proven, "")
	if g, _ := rep.Gate(nil); g.Code != ExitFailed || !blockingHas(g, "estate e2 on local failed") {
		t.Errorf("e2 not declining its not-run stage: gate %+v, want it blocked on e2's cell", g)
	}
	declined = true
	w.Declines = func(estate, stage string) string {
		if estate == "e2" && stage == "day2_crash" {
			return "the estate skips it: one object only"
		}
		return ""
	}
	rep = r.deriveWith(w)
	wantProof(t, rep, reqCrash, Proven, "")
	got := map[string]EstateProof{}
	for _, ep := range proofOf(t, rep, reqCrash).Estates {
		got[ep.Estate] = ep
	}
	if ep := got["e1"]; !ep.Required || ep.Proof != Proven {
		t.Errorf("e1: %+v", ep)
	}
	if ep := got["e2"]; ep.Required || !strings.Contains(ep.Why, "declined by estate.yaml: day2_crash: the estate skips it") {
		t.Errorf("e2: %+v", ep)
	}
	if ep := got["e3"]; ep.Required || !strings.Contains(ep.Why, "no run of this estate") {
		t.Errorf("e3: %+v", ep)
	}
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\ne2\n", "declined by estate.yaml", "\ne3\n  no run recorded"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text view lacks %q:\n%s", want, b.String())
		}
	}
	var md strings.Builder
	g, _ := rep.Gate(nil)
	if err := WriteMarkdown(&md, rep, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### e2") || !strings.Contains(md.String(), "| requirement | local | kind | why |") {
		t.Errorf("status.md:\n%s", md.String())
	}
}

// world is what `gauntlet status` and `record --stale` read, as report
// builds it.
func (r *repo) world() World {
	r.t.Helper()
	reg, err := LoadRegistry(filepath.Join(r.dir, "conformance", "requirements.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	tree, err := NewTree(context.Background(), r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	v, sha, _ := tree.PinnedCLI("tofu")
	return World{
		Registry: reg, Current: tree,
		Coverage:   ComputeCoverage(reg, map[string][]string{"cold_deploy": {reqCold}, "day2_crash": {reqCrash}, "strict": {"GAUNT-LIVE-STRICT-01"}}),
		Needs:      map[string][]string{"strict": {"live mode"}},
		SubjectHas: func(c string) bool { return c != "live mode" },
		Engine:     PinnedCLI{Name: "tofu", Version: v, SHA256: sha},
		Oracle:     PinnedCLI{Name: "terraform", Version: "1.11.4"},
	}
}

func (r *repo) deriveWith(w World) *Report {
	r.t.Helper()
	l, err := Verify(r.ledger(), r.runs())
	if err != nil {
		r.t.Fatal(err)
	}
	rep, err := Derive(w, l)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}
