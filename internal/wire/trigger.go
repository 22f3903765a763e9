package wire

import (
	"sync"
)

// Match selects requests for After. Each empty field matches anything;
// the others must equal the Request's field exactly (so "configmaps"
// does not match "configmaps/status").
type Match struct{ Verb, Resource, Namespace, Name string }

func (m Match) matches(r Request) bool {
	return (m.Verb == "" || m.Verb == r.Verb) &&
		(m.Resource == "" || m.Resource == r.Resource) &&
		(m.Namespace == "" || m.Namespace == r.Namespace) &&
		(m.Name == "" || m.Name == r.Name)
}

// TriggerOption configures one After registration.
type TriggerOption interface{ applyTrigger(*trigger) }

type triggerOptionFunc func(*trigger)

func (f triggerOptionFunc) applyTrigger(t *trigger) { f(t) }

// Every makes a trigger fire on every matching response instead of only
// the first; f may then run for two responses at once. Default: once.
func Every() TriggerOption { return triggerOptionFunc(func(t *trigger) { t.every = true }) }

// After calls f with the request once the successful (2xx) response to
// a request matching m has been sent to the client, and returns a cancel
// func that stops later calls (it does not wait for a call in progress).
// By default f fires once, on the first such response; see Every.
//
// The point of After is to act at an exact place in an engine's run, such
// as killing it right after the create of one object committed. So:
//
//   - f runs after the whole response body has been written and flushed
//     to the client, on the handler's goroutine, before the handler
//     returns. The end of the response (HTTP/2 END_STREAM, the last
//     HTTP/1.1 chunk) is only signalled when the handler returns; the
//     proxy drops a matched response's Content-Length to make HTTP/1.1
//     work that way too. A client therefore cannot see its call complete
//     before f has returned.
//   - From just before the response's headers are sent until f returns,
//     the proxy holds every newly arriving request at its door. Requests
//     already forwarded carry on (an engine runs several in parallel, and
//     open watches never end), but nothing the client sends after seeing
//     the response reaches the cluster before f has run, on any
//     connection.
//
// Because of that hold, f must be quick and must not itself send requests
// through the proxy: they would wait for f, which waits for them. Reading
// the cluster directly (not through the proxy) is fine.
//
// A response that fails part-way to the client (it went away) is not
// "sent": f is not called and a once-only trigger stays armed.
func (p *Proxy) After(m Match, f func(Request), opts ...TriggerOption) (cancel func()) {
	t := &trigger{m: m, f: f}
	for _, o := range opts {
		o.applyTrigger(t)
	}
	return p.triggers.add(t)
}

type trigger struct {
	m     Match
	f     func(Request)
	every bool

	// Guarded by triggers.mu.
	claimed   bool // a once-only trigger has been taken by a response
	cancelled bool
}

type triggers struct {
	mu    sync.Mutex
	list  []*trigger
	fired int // calls of f so far
}

func (ts *triggers) add(t *trigger) func() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.list = append(ts.list, t)
	return func() {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		t.cancelled = true
		for i, x := range ts.list {
			if x == t {
				ts.list = append(ts.list[:i:i], ts.list[i+1:]...)
				break
			}
		}
	}
}

// claim takes every live trigger matching r, in registration order. A
// once-only trigger is claimed by exactly one response even when two
// matching responses race.
func (ts *triggers) claim(r Request) []*trigger {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []*trigger
	for _, t := range ts.list {
		if t.cancelled || t.claimed || !t.m.matches(r) {
			continue
		}
		if !t.every {
			t.claimed = true
		}
		out = append(out, t)
	}
	return out
}

// fire calls the claimed triggers not cancelled since they were claimed.
func (ts *triggers) fire(claimed []*trigger, r Request) {
	for _, t := range claimed {
		ts.mu.Lock()
		live := !t.cancelled
		if live {
			ts.fired++
		}
		ts.mu.Unlock()
		if live {
			t.f(r)
		}
	}
}

// rearm gives back once-only triggers whose response never got out.
func (ts *triggers) rearm(claimed []*trigger) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range claimed {
		t.claimed = false
	}
}

// gate holds new requests while a trigger's response is going out and its
// f runs. It is not a lock that requests hold: requests only wait for it
// to be open on arrival, so long-running ones (watches) cannot block a
// trigger and a trigger cannot block them.
type gate struct {
	mu    sync.Mutex
	holds int
	open  chan struct{} // closed whenever holds == 0
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	close(g.open)
	return g
}

// opened returns a channel that is closed once no hold is in place.
func (g *gate) opened() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// hold closes the gate until the returned release is called (once or
// more; later calls do nothing).
func (g *gate) hold() (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holds == 0 {
		g.open = make(chan struct{})
	}
	g.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.holds--; g.holds == 0 {
				close(g.open)
			}
		})
	}
}

// Fired is how many times a trigger's f has been called on this proxy.
func (p *Proxy) Fired() int {
	p.triggers.mu.Lock()
	defer p.triggers.mu.Unlock()
	return p.triggers.fired
}

// Replay takes requests recorded on another proxy into this one's log, in
// order, as if they had come through it, and fires the triggers their
// successful responses match, as the proxy does for a response it sent.
// It is how a replayed engine call (engine.CallTape) leaves the same
// traffic and the same trigger calls as the call it stands for.
func (p *Proxy) Replay(reqs []Request) {
	for _, r := range reqs {
		old := r.Seq
		e := p.ledger.add(r)
		if r.Done != 0 {
			// Renumbered as a block: what overlapped when recorded
			// overlaps in the replay.
			p.ledger.mu.Lock()
			e.Done = r.Done + e.Seq - old
			p.ledger.mu.Unlock()
		}
		sent := p.ledger.setCode(e, r.Code)
		if r.Code/100 != 2 {
			continue
		}
		if claimed := p.triggers.claim(sent); len(claimed) > 0 {
			p.triggers.fire(claimed, sent)
		}
	}
}
