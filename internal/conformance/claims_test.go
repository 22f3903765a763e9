package conformance

import (
	"strings"
	"testing"
)

// A stage's pass proves only the requirements its run claimed: migrate
// verifies GAUNT-RECORDS-01 only on an estate whose state lives in the
// cluster, so a metrics-server migrate row is no proof of it.
func TestStageProofCountsOnlyClaimedRequirements(t *testing.T) {
	rows := []Row{{Run: "r1", Stage: "migrate", Requirements: []string{"GAUNT-MIG-01"}}}
	p, why := stageProof(Requirement{ID: "GAUNT-RECORDS-01"}, "migrate", rows, nil, nil)
	if p != NotRun || !strings.Contains(why, "did not verify GAUNT-RECORDS-01") {
		t.Errorf("an unclaimed requirement: %s (%s), want not run naming it", p, why)
	}
	// The claimed one is judged on the row (here: no current tree, so stale).
	if p, why := stageProof(Requirement{ID: "GAUNT-MIG-01"}, "migrate", rows, nil, nil); p != Stale {
		t.Errorf("a claimed requirement: %s (%s), want the row judged (stale: no current inputs)", p, why)
	}
}
