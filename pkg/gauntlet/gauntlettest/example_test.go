package gauntlettest_test

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

// An estate kept in another module is one line of test code: a folder with
// an estate.yaml, run by gauntlettest.Run, each stage a subtest. The
// example is compiled, not run (it starts two clusters);
// TestFromAnotherModule runs exactly this from a scratch module.
func ExampleRun() {
	// In estates_test.go beside estates/my-root/estate.yaml:
	_ = func(t *testing.T) {
		gauntlettest.Run(t, "estates/my-root", gauntlet.WithStages("cold_deploy", "drift_reconverge"))
	}
}

// One mutant engine per test, so a build system caches and spreads the
// kill matrix: the stage the mutant names must catch it.
func ExampleMutant() {
	_ = func(t *testing.T) {
		row := gauntlettest.Mutant(t, "estates/corpus-k8s-metrics-server", "exit-code-lies")
		t.Logf("%s: %s by %s", row.Name, row.Status, row.KilledBy)
	}
}
