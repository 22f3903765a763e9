package gauntlettest

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// loopbackUp brings the loopback interface up: a network namespace made
// by `unshare --net` (Bazel's --config=hermetic) starts with it down, and
// both control planes listen on 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("a socket to configure lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading lo's flags: %w", err)
	}
	if ifr.Uint16()&unix.IFF_UP != 0 {
		return nil
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing lo up: %w", err)
	}
	return nil
}
