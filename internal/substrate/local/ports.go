package local

import (
	"fmt"
	"net"
	"strconv"
)

// freePort returns want if it can be bound on loopback right now, else a
// free port the kernel picks. The caller still retries the whole start if
// a port is taken between this check and the child binding it.
func freePort(want int) (int, error) {
	if want > 0 {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(want))); err == nil {
			l.Close()
			return want, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("no free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
