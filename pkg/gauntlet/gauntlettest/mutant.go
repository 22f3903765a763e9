package gauntlettest

import (
	"context"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/mutant"
)

// MutantTimeout bounds one mutant's run (its expected stages and what they
// depend on, stopping once one caught it).
const MutantTimeout = 15 * time.Minute

// Mutant runs the estate in dir with one mutant engine (mutant.Select's
// name) as the subject and asserts the kill: a stage the mutant names must
// catch it - or, for the identity mutant (tofu unchanged), nothing may.
// One mutant per test lets a build system cache and spread the kill matrix
// mutant by mutant (bazel/defs.bzl mutant_tests). It returns the row.
func Mutant(t *testing.T, dir, name string) mutant.Row {
	t.Helper()
	assertHermetic(t)
	ms, err := mutant.Select([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	spec := Load(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), MutantTimeout)
	defer cancel()
	m, err := mutant.Run(ctx, spec, mutant.Options{Mutants: ms, Offline: true, Logger: Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	out := evidenceDir(t, spec.Name, "mutant-"+name)
	if _, err := mutant.WriteAll(out, m); err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 1 {
		t.Fatalf("the kill matrix of one mutant has %d rows", len(m.Rows))
	}
	r := m.Rows[0]
	want := mutant.Killed
	if name == mutant.Identity().Name {
		want = mutant.Survived
	}
	if r.Status != want {
		t.Fatalf("mutant %s is %s, want %s: %s (kill matrix in %s)", name, r.Status, want, r.Why, out)
	}
	t.Logf("mutant %s %s by %s: %s: %s (%s; kill matrix in %s)", name, r.Status, r.KilledBy, r.Check, r.Detail, r.Duration.Round(time.Second), out)
	return r
}
