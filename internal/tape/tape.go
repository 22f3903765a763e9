// Package tape records the oracle's side of a run so that runs of the same
// estate against other subjects can replay it instead of running it
// again: the oracle's plans and observations do not depend on the
// subject, so a matrix of N engines needs the oracle once.
//
// The tape sits at the oracle side's I/O boundary: its engine calls (with
// the files they leave in the workspace and the requests they sent through
// the side's wire proxies), and gauntlet's own requests to its cluster.
// Entries are keyed by stage, by what was asked (the call's arguments,
// the request's method and URL) and by occurrence. A replay that asks for
// anything the recording did not hold has diverged: the run says so
// (Side.Diverged), and its caller runs that subject again with a live
// oracle. Nothing is guessed.
package tape

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/cluster"
)

// ErrDiverged is what a replay returns for a question the recording did
// not hold.
var ErrDiverged = errors.New("the oracle's replay diverged from its recording")

// Tape is one run's oracle side, as recorded.
type Tape struct {
	mu       sync.Mutex
	finished bool
	work     string // the recording run's work folder
	entries  map[string][]entry
	facts    facts
	engine   string
}

type facts struct {
	name, substrate string
	caps            cluster.Capabilities
}

// entry is one answer: an HTTP response or an engine call's outcome.
type entry struct {
	http *httpEntry
	call *callEntry
}

// New returns an empty tape.
func New() *Tape { return &Tape{entries: map[string][]entry{}} }

// Recorded reports whether a run recorded the tape whole (Side.Finish).
func (t *Tape) Recorded() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

// Entries is how many answers the tape holds.
func (t *Tape) Entries() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, es := range t.entries {
		n += len(es)
	}
	return n
}

// Side is one run's oracle side meeting the tape: recording into it, or
// replaying it. It is safe for concurrent use.
type Side struct {
	t      *Tape
	replay bool
	work   string

	mu       sync.Mutex
	scope    string
	cursor   map[string]int
	proxies  map[string]*wire.Proxy
	diverged []string
}

// Record starts recording a run whose work folder is work. A tape is
// recorded once.
func (t *Tape) Record(work string) (*Side, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished || t.work != "" {
		return nil, fmt.Errorf("tape: already recorded (in %s)", t.work)
	}
	t.work = work
	return &Side{t: t, work: work, scope: "setup", cursor: map[string]int{}, proxies: map[string]*wire.Proxy{}}, nil
}

// Replay starts replaying the tape for a run whose work folder is work.
func (t *Tape) Replay(work string) (*Side, error) {
	if !t.Recorded() {
		return nil, errors.New("tape: nothing recorded whole to replay")
	}
	return &Side{t: t, replay: true, work: work, scope: "setup", cursor: map[string]int{}, proxies: map[string]*wire.Proxy{}}, nil
}

// Replaying reports whether the side replays (else it records).
func (s *Side) Replaying() bool { return s.replay }

// Finish marks a recording whole, so that runs may replay it; engine is
// the subject it was recorded with, for the pages that say so. A run that
// stopped part way must not call it.
func (s *Side) Finish(engine string) {
	if s.replay {
		return
	}
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.t.finished, s.t.engine = true, engine
}

// RecordedWith is the subject of the run that recorded the tape.
func (t *Tape) RecordedWith() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.engine
}

// Scope starts the entries of one stage (or "setup", "teardown"):
// occurrences count within a scope, so a stage a subject cut short does
// not shift the next stage's answers.
func (s *Side) Scope(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scope = id
}

// Proxy names the wire proxy an engine with this kubeconfig talks to: a
// recorded call keeps the requests it sent through it, and a replayed
// one puts them back, firing the proxy's triggers as they did.
func (s *Side) Proxy(kubeconfig string, p *wire.Proxy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proxies[kubeconfig] = p
}

func (s *Side) proxy(kubeconfig string) *wire.Proxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proxies[kubeconfig]
}

// Diverged returns nil if every question of a replay had its recorded
// answer, else ErrDiverged naming the first questions that had none.
func (s *Side) Diverged() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.diverged) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrDiverged, strings.Join(s.diverged, "; "))
}

func (s *Side) diverge(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	s.mu.Lock()
	if len(s.diverged) < 5 {
		s.diverged = append(s.diverged, msg)
	}
	s.mu.Unlock()
	return fmt.Errorf("%w: %s", ErrDiverged, msg)
}

// key is where an answer is kept: its scope and the question, with this
// run's work folder written as <work> so runs in other folders ask alike.
func (s *Side) key(question string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scope + "\x00" + strings.ReplaceAll(question, s.work, "<work>")
}

// add records an answer.
func (s *Side) add(key string, e entry) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.t.entries[key] = append(s.t.entries[key], e)
}

// next takes the next recorded answer to a question.
func (s *Side) next(key string) (entry, bool) {
	s.mu.Lock()
	i := s.cursor[key]
	s.cursor[key] = i + 1
	s.mu.Unlock()
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	es := s.t.entries[key]
	if i >= len(es) {
		return entry{}, false
	}
	return es[i], true
}

// localize rewrites the recording run's work folder into this run's.
func (s *Side) localize(b []byte) []byte {
	if s.t.work == "" || s.t.work == s.work {
		return b
	}
	return []byte(strings.ReplaceAll(string(b), s.t.work, s.work))
}

// Unasked lists, for a finished replay, the recorded questions it never
// asked (by scope): a replay that asked less than the recording held
// followed another path, even if every answer it got was there.
func (s *Side) Unasked() []string {
	s.t.mu.Lock()
	keys := slices.Sorted(maps.Keys(s.t.entries))
	lens := map[string]int{}
	for _, k := range keys {
		lens[k] = len(s.t.entries[k])
	}
	s.t.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, k := range keys {
		if n := s.cursor[k]; n < lens[k] {
			scope, q, _ := strings.Cut(k, "\x00")
			out = append(out, fmt.Sprintf("%s: %s (asked %d of %d)", scope, q, n, lens[k]))
		}
	}
	return out
}
