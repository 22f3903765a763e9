package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerFile records the pid of the process that owns a cluster directory.
const ownerFile = "owner.pid"

// sweepStale removes cluster directories under parent whose owning process
// is gone: a run killed with SIGKILL cannot clean up after itself (its
// children die with it through Pdeathsig, but its files stay), so the next
// start does it.
func sweepStale(parent string, warn func(string, ...any)) {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, "gauntlet-local-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // not ours, or still being created
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if err := os.RemoveAll(d); err == nil {
			warn("removed %s, left by a gauntlet process (pid %d) that no longer runs", d, pid)
		}
	}
}

func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
}
