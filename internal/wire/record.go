package wire

import (
	"maps"
	"sync"
)

// Key is what Counts counts by: a verb on a resource, e.g. "create
// configmaps" or "get nonresource:/version".
type Key struct{ Verb, Resource string }

func (k Key) String() string { return k.Verb + " " + k.Resource }

// Request is one request that came through the proxy, as Classify and the
// proxy understood it.
type Request struct {
	// Seq numbers requests in the order the proxy took them in, from 1.
	// Reset does not restart it, so evidence quoting Seq stays unambiguous.
	Seq int
	// Verb, Resource, Namespace and Name are as Classify describes. A
	// create's Name comes from its JSON body; it is empty when the body
	// was not JSON, was over the body limit, or asked for generateName.
	Verb, Resource, Namespace, Name string
	// GenerateName is a create's metadata.generateName, if any: the
	// server picks the name, which the proxy does not read back.
	GenerateName string
	// Method and Path are the raw HTTP request line, without the query.
	Method, Path string
	// Code is the status sent to the client: the upstream's, 502 when the
	// upstream could not be reached, 401 for a client without the proxy's
	// token; 0 until the status is known. An open watch has its 200.
	Code int
	// Done is the Seq of the last request the proxy had taken in when this
	// one's response was sent in full (0 while it is in flight): a later
	// request numbered at most Done was in flight at the same time.
	Done int
}

// Overlap reports whether a and b were in flight at the same time: the
// later one was taken in before the earlier one's response was sent (or
// while it is still in flight). Counted in the proxy's own numbering, no
// clock: two requests the engine sent one after the other never overlap.
func Overlap(a, b Request) bool {
	if a.Seq > b.Seq {
		a, b = b, a
	}
	return a.Seq != b.Seq && (a.Done == 0 || b.Seq <= a.Done)
}

// Key is the request's counting key.
func (r Request) Key() Key { return Key{Verb: r.Verb, Resource: r.Resource} }

// ledger records requests. Entries are pointers so the handler can fill
// in the status code when the response is sent while the order of the
// log stays the order of arrival.
type ledger struct {
	mu     sync.Mutex
	seq    int
	log    []*Request
	counts map[Key]int
}

// add records r at arrival and returns the live entry, numbered.
func (l *ledger) add(r Request) *Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	r.Seq = l.seq
	e := &r
	l.log = append(l.log, e)
	if l.counts == nil {
		l.counts = map[Key]int{}
	}
	l.counts[r.Key()]++
	return e
}

// finish marks an entry's response as sent in full.
func (l *ledger) finish(e *Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Done = l.seq
}

// setCode sets an entry's status code and returns a copy of it.
func (l *ledger) setCode(e *Request, code int) Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Code = code
	return *e
}

// Counts is how many requests of each kind the proxy has taken in since
// it started or since Reset, counted on arrival (an open watch counts).
// Requests refused for want of the proxy's token count too, with their
// 401 in the log: they are evidence of a misconfigured client.
func (p *Proxy) Counts() map[Key]int {
	p.ledger.mu.Lock()
	defer p.ledger.mu.Unlock()
	out := make(map[Key]int, len(p.ledger.counts))
	maps.Copy(out, p.ledger.counts)
	return out
}

// Total is the number of requests since start or Reset.
func (p *Proxy) Total() int {
	p.ledger.mu.Lock()
	defer p.ledger.mu.Unlock()
	return len(p.ledger.log)
}

// Log returns the requests since start or Reset in the order the proxy
// took them in (after any hold for a trigger, see After).
func (p *Proxy) Log() []Request {
	p.ledger.mu.Lock()
	defer p.ledger.mu.Unlock()
	out := make([]Request, len(p.ledger.log))
	for i, e := range p.ledger.log {
		out[i] = *e
	}
	return out
}

// Seq is the number of the last request the proxy took in, 0 before the
// first. Reset does not restart it, so it marks a point to read Since.
func (p *Proxy) Seq() int {
	p.ledger.mu.Lock()
	defer p.ledger.mu.Unlock()
	return p.ledger.seq
}

// Since returns the requests in the log numbered after seq, in order:
// what came through since Seq returned seq, without copying the whole log.
func (p *Proxy) Since(seq int) []Request {
	p.ledger.mu.Lock()
	defer p.ledger.mu.Unlock()
	i := len(p.ledger.log)
	for i > 0 && p.ledger.log[i-1].Seq > seq {
		i--
	}
	out := make([]Request, 0, len(p.ledger.log)-i)
	for _, e := range p.ledger.log[i:] {
		out = append(out, *e)
	}
	return out
}

// Reset forgets the counts and the log, e.g. between the stages of a run.
// Requests in flight finish without reappearing.
func (p *Proxy) Reset() {
	p.ledger.mu.Lock()
	defer p.ledger.mu.Unlock()
	p.ledger.log, p.ledger.counts = nil, nil
}
