package estates_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/mutant"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

// TestKillMatrix runs corpus-k8s-metrics-server's gauntlet with every mutant engine as
// the subject, on the local substrate: each must be caught by a stage it
// names (mutation score 100%), and the planted survivor - the identity
// mutant, tofu unchanged - must be reported as a survivor.
func TestKillMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the kill matrix is eleven gauntlet runs (minutes)")
	}
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("under Bazel each mutant is its own target, //estates:<estate>_mutant_<name> (bazel/defs.bzl mutant_tests)")
	}
	if os.Getenv(EstatesEnv) != "all" {
		t.Skip("conformance tier, not the smoke tier: `bazel test //estates:all_mutants` (a target per mutant, cached by content) or `gauntlet mutants corpus-k8s-metrics-server` runs it; " + EstatesEnv + "=all runs it here")
	}
	spec := gauntlettest.Load(t, "corpus-k8s-metrics-server")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	m, err := mutant.Run(ctx, spec, mutant.Options{
		Mutants: append(mutant.All(), mutant.Identity()),
		Offline: true,
		Logger:  gauntlettest.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("GAUNTLET_EVIDENCE_DIR")
	if out == "" {
		out = t.TempDir()
	}
	if _, err := mutant.WriteAll(out, m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Rows {
		switch {
		case r.Name == mutant.Identity().Name:
			if r.Status != mutant.Survived {
				t.Errorf("the planted survivor (identity, tofu unchanged) is %s, want survived: %s%s", r.Status, r.KilledBy, r.Why)
			}
		case r.Status != mutant.Killed:
			t.Errorf("mutant %s %s: %s", r.Name, r.Status, r.Why)
		default:
			t.Logf("mutant %s killed by %s: %s: %s", r.Name, r.KilledBy, r.Check, r.Detail)
		}
	}
	if err := m.Err(); err == nil {
		t.Error("the matrix with a planted survivor reports no defect")
	}
	k, n := m.Score()
	t.Logf("mutation score %d/%d (the identity mutant included, which must survive) in %s; matrix in %s", k, n, m.Duration.Round(time.Second), out)
}
