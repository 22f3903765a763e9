package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestFindingsAreData(t *testing.T) {
	a := &Finding{Address: "a.x", Field: "plan", Want: "no-op", Got: "create"}
	b := &Finding{Object: "ConfigMap ns/b", Field: "exists", Want: "present", Got: "absent"}
	read := Measure("read Secret ns/a.x", errors.New("connection refused"))
	err := errors.Join(fmt.Errorf("subject: %w", Findings(a, b)), fmt.Errorf("oracle: %w", read))
	Stamp(err, "the check", "subject")
	if fs := FindingsIn(err); len(fs) != 2 || fs[0].Side != "subject" || fs[1].Check != "the check" {
		t.Errorf("findings in a joined error: %+v", fs)
	}
	if ms := MeasurementErrorsIn(err); len(ms) != 1 || ms[0].Op != "read Secret ns/a.x" {
		t.Errorf("measurement errors: %+v", ms)
	}
	if Unclassified(err) || !Unclassified(errors.New("a.x: create")) || Unclassified(nil) {
		t.Error("Unclassified is wrong")
	}
	p := Prediction{Address: "a.x", Field: "plan", Got: "create"}
	if !p.Matches("the check", "subject", a) || p.Matches("the check", "oracle", a) || p.Matches("the check", "subject", b) {
		t.Error("a prediction matches the wrong finding")
	}
	if (Prediction{Check: "other", Address: "a.x", Field: "plan", Got: "create"}).Matches("the check", "subject", a) {
		t.Error("a prediction for another check matched")
	}
}

// A run recorded before findings existed reads as before, and the new
// fields survive a round trip.
func TestBreakJSONExtended(t *testing.T) {
	var old Break
	if err := json.Unmarshal([]byte(`{"name":"x","corruption":"c","victim":"a.x","outcome":"proved","failed":true,"detail":"d"}`), &old); err != nil || old.Outcome != Proved || old.Predictions != nil {
		t.Fatalf("old break: %+v %v", old, err)
	}
	nb := Break{Name: "x", Outcome: OffTarget, Predictions: []Prediction{{Address: "a.x", Field: "plan", Got: "create"}},
		Got: []Finding{{Side: "subject", Address: "a.x", Field: "plan", Want: "no-op", Got: "delete"}}}
	raw, err := json.Marshal(nb)
	if err != nil {
		t.Fatal(err)
	}
	var back Break
	if err := json.Unmarshal(raw, &back); err != nil || back.Got[0].Got != "delete" || back.Predictions[0].Field != "plan" {
		t.Errorf("round trip: %s -> %+v %v", raw, back, err)
	}
}

// A finding stamped with its side inside a SideError names the side once,
// and a finding two checks share is copied, each copy naming its check.
func TestSideOnceAndCopies(t *testing.T) {
	f := &Finding{Address: "a.x", Field: "state", Want: "absent", Got: "present"}
	err := &SideError{Side: "subject", Err: Stamp(f, "", "subject")}
	if got := err.Error(); got != "subject: a.x state: want absent, got present" {
		t.Errorf("SideError: %q", got)
	}
	one, two := Copies(err, "first", ""), Copies(err, "second", "")
	if len(one) != 1 || len(two) != 1 || one[0].Check != "first" || two[0].Check != "second" || f.Check != "" {
		t.Errorf("copies %+v %+v, the finding itself %+v", one, two, f)
	}
}
