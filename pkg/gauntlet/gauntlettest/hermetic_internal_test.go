package gauntlettest

import (
	"os"
	"strings"
	"testing"
)

func TestHermeticRefusesHomeOutsideTheTestTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", "/root")
	t.Setenv("TMPDIR", tmp)
	err := hermetic(tmp)
	if err == nil {
		t.Fatal("a $HOME outside the test's temp dir (or a machine with a network interface) passed as hermetic")
	}
	// This machine has interfaces besides loopback, which is found first;
	// in a network namespace of its own, $HOME is.
	if !strings.Contains(err.Error(), "network interfaces besides loopback") && !strings.Contains(err.Error(), "$HOME=/root is outside") {
		t.Errorf("err %v names neither the network nor $HOME", err)
	}
	if err := hermetic(""); err == nil {
		t.Error("no $TEST_TMPDIR passed as hermetic")
	}
}

func TestInside(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"/a/b", "/a/b", true}, {"/a/b", "/a/b/c", true}, {"/a/b", "/a", false},
		{"/a/b", "/a/bc", false}, {"/a/b", "/tmp", false}, {"/a/b", "", false},
	} {
		if got := inside(c.dir, c.p); got != c.want {
			t.Errorf("inside(%q, %q) = %v", c.dir, c.p, got)
		}
	}
}

// TestEvidenceDir: $GAUNTLET_EVIDENCE_DIR/<estate>/<sub> when set (the
// folder CI keeps), else a temporary folder of the test.
func TestEvidenceDir(t *testing.T) {
	t.Setenv(EvidenceEnv, "/kept")
	if got := evidenceDir(t, "e", "mutant-m"); got != "/kept/e/mutant-m" {
		t.Errorf("with %s set: %s", EvidenceEnv, got)
	}
	t.Setenv(EvidenceEnv, "")
	if got := evidenceDir(t, "e"); !strings.HasPrefix(got, os.TempDir()) {
		t.Errorf("unset: %s, want a folder under %s", got, os.TempDir())
	}
}
