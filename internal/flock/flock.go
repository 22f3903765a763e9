// Package flock takes exclusive file locks between gauntlet processes
// (parallel test binaries building the same tool or node image, or
// running gauntlet's own Docker engine).
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Lock takes an exclusive flock on path, polling every interval until ctx
// ends, and calls waiting once if another process holds it. The kernel
// drops the lock when its holder dies, so a crashed process never wedges
// the others. The returned func releases it.
func Lock(ctx context.Context, path string, interval time.Duration, waiting func()) (func(), error) {
	return lock(ctx, path, interval, false, func(string) {
		if waiting != nil {
			waiting()
		}
	})
}

// ErrSelf is LockPID's refusal to wait for a lock this very process holds.
var ErrSelf = errors.New("this process holds the lock already")

// LockPID is Lock that also writes this process's pid into the file while
// it holds it: waiting is told the holder's pid, and a holder that is
// this process is ErrSelf instead of a wait that never ends (a flock
// belongs to an open file, so one process can block on itself).
func LockPID(ctx context.Context, path string, interval time.Duration, waiting func(pid string)) (func(), error) {
	return lock(ctx, path, interval, true, waiting)
}

func lock(ctx context.Context, path string, interval time.Duration, withPID bool, waiting func(pid string)) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			if !withPID {
				return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
			}
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return func() { f.Truncate(0); syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		holder := ""
		if withPID {
			b, _ := os.ReadFile(path)
			if holder = strings.TrimSpace(string(b)); holder == strconv.Itoa(os.Getpid()) {
				f.Close()
				return nil, fmt.Errorf("lock %s: %w", path, ErrSelf)
			}
		}
		if !told && waiting != nil {
			waiting(holder)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(interval):
		}
	}
}
