package runstate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// mountsUnder lists the mount points at or under root in a mountinfo
// text, deepest first (the order to unmount them in).
func mountsUnder(mountinfo, root string) []string {
	root = filepath.Clean(root)
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeOctal(f[4])
		if mp == root || strings.HasPrefix(mp, root+"/") {
			out = append(out, mp)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.Count(out[i], "/") > strings.Count(out[j], "/") })
	return out
}

// unescapeOctal undoes mountinfo's \ooo escapes (space, tab, newline,
// backslash in paths).
func unescapeOctal(s string) string {
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

// unmountUnder detaches every mount under root, deepest first.
func unmountUnder(mountinfoPath, root string) ([]string, error) {
	b, err := os.ReadFile(mountinfoPath)
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	var done, failed []string
	for _, mp := range mountsUnder(string(b), root) {
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
