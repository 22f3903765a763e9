package flock

import (
	"context"
	"path/filepath"
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
