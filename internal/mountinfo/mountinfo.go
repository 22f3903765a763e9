// Package mountinfo reads a /proc/<pid>/mountinfo text for the mount
// points under a folder and detaches them: what a run, a dockerd or an
// interrupted debootstrap left mounted must go before its folder can.
package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Self is this process's mountinfo file.
const Self = "/proc/self/mountinfo"

// Under lists the mount points at or under root in a mountinfo text,
// deepest first (the order to unmount them in). root is cleaned first, so
// "/a/" and "/a" list the same; "/ab" is not under "/a".
func Under(mountinfo, root string) []string {
	root = filepath.Clean(root)
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescape(f[4])
		if mp == root || strings.HasPrefix(mp, root+"/") {
			out = append(out, mp)
		}
	}
	// A mount inside another has more path elements than it, so it comes
	// first.
	sort.SliceStable(out, func(i, j int) bool { return strings.Count(out[i], "/") > strings.Count(out[j], "/") })
	return out
}

// Unmount lazily detaches every mount at or under root that the mountinfo
// file at path (Self, or another process's) lists, deepest first, and
// returns what it detached. A mount that will not detach does not stop
// the rest; the error names each one.
func Unmount(path, root string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	var done, failed []string
	for _, mp := range Under(string(b), root) {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", mp, err))
			continue
		}
		done = append(done, mp)
	}
	if len(failed) > 0 {
		return done, fmt.Errorf("unmount under %s (as root?): %s", root, strings.Join(failed, "; "))
	}
	return done, nil
}

// unescape undoes mountinfo's \ooo escapes (a space, tab, newline or
// backslash in a path: \040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
