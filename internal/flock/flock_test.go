package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSecondHolderWaitsAndGivesUpWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, 10*time.Millisecond, func() { waited = true }); err == nil || !waited {
		t.Fatalf("a held lock was taken again (err %v, waited %v)", err, waited)
	}
	unlock()
	again, err := Lock(context.Background(), path, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("a released lock cannot be taken: %v", err)
	}
	again()
}

// TestLockPIDRecordsTheHolderAndRefusesItself: the file names the holder
// while it holds the lock and is emptied on release; the same process
// asking again is ErrSelf, not a wait for itself; a plain Lock writes
// nothing.
func TestLockPIDRecordsTheHolderAndRefusesItself(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := LockPID(context.Background(), path, 10*time.Millisecond, func(string) { t.Error("waited for a free lock") })
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want this pid", b)
	}
	if _, err := LockPID(context.Background(), path, 10*time.Millisecond, func(string) {}); !errors.Is(err, ErrSelf) {
		t.Errorf("a second LockPID in the same process: %v, want ErrSelf", err)
	}
	unlock()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("released lock file holds %q", b)
	}
	plain, err := Lock(context.Background(), path, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("Lock wrote %q into the file", b)
	}
}
