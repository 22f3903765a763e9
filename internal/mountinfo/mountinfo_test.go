package mountinfo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestUnder: only mounts at or under root (not a sibling that shares its
// prefix), unescaped, deepest first, whether root ends in a slash or not.
func TestUnder(t *testing.T) {
	info := strings.Join([]string{
		"22 1 0:21 / / rw - ext4 /dev/sda1 rw",
		`30 22 0:30 / /tmp/run/a rw - tmpfs tmpfs rw`,
		`31 30 0:31 / /tmp/run/a/b\040c rw - overlay overlay rw`,
		`32 22 0:32 / /tmp/runner rw - tmpfs tmpfs rw`,
		`33 22 0:33 / /tmp/run rw - tmpfs tmpfs rw`,
		`34 33 0:34 / /tmp/run/overlay2/abc/merged rw - overlay overlay rw`,
		"",
	}, "\n")
	want := []string{"/tmp/run/overlay2/abc/merged", "/tmp/run/a/b c", "/tmp/run/a", "/tmp/run"}
	for _, root := range []string{"/tmp/run", "/tmp/run/"} {
		if got := Under(info, root); !slices.Equal(got, want) {
			t.Errorf("Under(%q) = %q, want %q", root, got, want)
		}
	}
	if got := Under(info, "/elsewhere"); len(got) != 0 {
		t.Errorf("Under(/elsewhere) = %q, want none", got)
	}
}

// TestUnmount detaches a tmpfs mounted inside another, inner first, and
// says what it detached; a mountinfo file it cannot read is an error.
func TestUnmount(t *testing.T) {
	if _, err := Unmount(filepath.Join(t.TempDir(), "none"), "/"); err == nil || !strings.Contains(err.Error(), "read mounts") {
		t.Errorf("a missing mountinfo file: %v", err)
	}
	root := t.TempDir()
	inner := filepath.Join(root, "inner")
	for _, m := range []string{root, inner} {
		if err := os.MkdirAll(m, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", m, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("skipped, not passed: cannot mount a tmpfs here (%v)", err)
		}
		defer syscall.Unmount(m, syscall.MNT_DETACH) // only if the test fails
	}
	done, err := Unmount(Self, root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{inner, root}; !slices.Equal(done, want) {
		t.Errorf("unmounted %q, want %q", done, want)
	}
	b, err := os.ReadFile(Self)
	if err != nil {
		t.Fatal(err)
	}
	if left := Under(string(b), root); len(left) > 0 {
		t.Errorf("still mounted: %q", left)
	}
}
