// Package log is the small logger gauntlet's packages report progress through.
//
// Library users pass their own implementation or use Discard; the gauntlet
// command prints to the terminal with the elapsed time since start.
package log

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Logger receives progress lines. Implementations must be safe for
// concurrent use: clusters start in parallel and both report.
type Logger interface {
	// Infof reports progress a person watching wants to see.
	Infof(format string, args ...any)
	// Warnf reports something that did not stop the work but may matter.
	Warnf(format string, args ...any)
}

// Discard returns a Logger that drops everything. It is the default
// wherever a Logger option is not given.
func Discard() Logger { return discard{} }

type discard struct{}

func (discard) Infof(string, ...any) {}
func (discard) Warnf(string, ...any) {}

// New returns a Logger writing one line per call to w, prefixed with the
// time elapsed since New was called, e.g. "[  12.3s] kube-apiserver: ready".
func New(w io.Writer) Logger {
	return &writer{w: w, start: time.Now()}
}

type writer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (l *writer) Infof(format string, args ...any) { l.line("", format, args) }
func (l *writer) Warnf(format string, args ...any) { l.line("WARNING: ", format, args) }

func (l *writer) line(prefix, format string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "[%6.1fs] %s%s\n", time.Since(l.start).Seconds(), prefix, fmt.Sprintf(format, args...))
}

// Prefixed returns a Logger that puts prefix before every line of l,
// e.g. the cluster's name when two clusters report at once.
func Prefixed(l Logger, prefix string) Logger { return prefixed{l: l, p: prefix} }

type prefixed struct {
	l Logger
	p string
}

func (p prefixed) Infof(format string, args ...any) {
	p.l.Infof("%s", p.p+fmt.Sprintf(format, args...))
}
func (p prefixed) Warnf(format string, args ...any) {
	p.l.Warnf("%s", p.p+fmt.Sprintf(format, args...))
}
