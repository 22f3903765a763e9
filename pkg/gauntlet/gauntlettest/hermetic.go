package gauntlettest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// HermeticEnv, set to 1 (Bazel's --config=hermetic does), makes Run first
// assert that the test sees no more than a remote executor would give it:
// a network namespace with loopback only, and a $HOME and $TMPDIR inside
// the test's own temporary directory - so the pinned toolchain can only
// come from the declared seed, never from a cache the machine happens to
// hold.
const HermeticEnv = "GAUNTLET_HERMETIC"

func assertHermetic(t testing.TB) {
	t.Helper()
	if os.Getenv(HermeticEnv) != "1" {
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("$%s=1: %v", HermeticEnv, err)
	}
	// Bazel 7's test runner leaves $TMPDIR as the machine's (/tmp) where a
	// remote executor gives the action's own: point it at the test's temp
	// dir, for this process and every tool it starts, before asserting.
	if tmp := os.Getenv("TEST_TMPDIR"); tmp != "" && !inside(tmp, os.Getenv("TMPDIR")) {
		t.Setenv("TMPDIR", tmp)
	}
	if err := hermetic(os.Getenv("TEST_TMPDIR")); err != nil {
		t.Fatalf("$%s=1, but the test is not hermetic: %v", HermeticEnv, err)
	}
	t.Logf("hermetic: loopback-only network, $HOME and $TMPDIR in the test's own temp dir")
}

func hermetic(testTmp string) error {
	ifs, err := net.Interfaces()
	if err != nil {
		return fmt.Errorf("listing network interfaces: %w", err)
	}
	var other []string
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			other = append(other, i.Name)
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("network interfaces besides loopback: %s (run it in a network namespace of its own: bazel test --config=hermetic)", strings.Join(other, ", "))
	}
	if testTmp == "" {
		return fmt.Errorf("no $TEST_TMPDIR: not run by Bazel")
	}
	for _, v := range []string{"HOME", "TMPDIR"} {
		p := os.Getenv(v)
		if p == "" {
			return fmt.Errorf("$%s is unset", v)
		}
		if !inside(testTmp, p) {
			return fmt.Errorf("$%s=%s is outside the test's temp dir %s", v, p, testTmp)
		}
	}
	return nil
}

// inside reports whether path p is dir or under it.
func inside(dir, p string) bool {
	if p == "" {
		return false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
