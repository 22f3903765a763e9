package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Many writers at once, in one process: every write lands whole, with its
// mode, and no temporary file is left.
func TestConcurrentWritesLandWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "probe.tfrc")
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Write(path, []byte(fmt.Sprintf("writer %02d\n", i)), 0o644)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) != len("writer 00\n") {
		t.Fatalf("got %q (%v)", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A failing fill leaves the destination as it was and nothing beside it.
func TestFailedFillLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("old"), 0o644)
	err := Place(path, func(tmp string) error {
		os.WriteFile(tmp, []byte("half"), 0o644)
		return fmt.Errorf("disk full")
	})
	if err == nil {
		t.Fatal("want the fill's error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("destination is %q, want old", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside it: %v", entries)
	}
}
