// Package wire is a reverse proxy on loopback in front of a Kubernetes API
// server. The engine under test talks to its cluster through it, by a
// kubeconfig the proxy writes; gauntlet's own reads go to the cluster
// directly and are not seen.
//
// The proxy sees every request the engine makes, so it can count them in
// Kubernetes terms ("create configmaps" = 2) for evidence, and act at an
// exact point of the engine's run: After calls a func once the response
// to a given request has been sent, before the engine can send anything
// else, which is how a stage kills an engine right after one create.
//
// It streams (watches reach the client event by event), passes upgrade
// requests through, and authenticates upstream as the rest.Config it was
// given. Its clients need only the kubeconfig it writes: the proxy's own
// CA, and a random token that keeps other local users off a port that
// speaks with the upstream's credentials.
package wire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// Proxy is a running proxy. Its methods are safe for concurrent use.
type Proxy struct {
	o      *options
	target *url.URL
	url    string
	caPEM  []byte
	token  string
	qps    float32
	burst  int

	upstream, upgrades http.RoundTripper
	rp                 *httputil.ReverseProxy
	srv                *http.Server
	stop               context.CancelFunc // ends every request's context
	served             chan struct{}      // closed when Serve has returned

	ledger   ledger
	triggers triggers
	gate     *gate

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup // requests being handled

	closeOnce sync.Once
	closeErr  error
}

// Start listens on 127.0.0.1 (a free port) with a serving certificate
// from a CA of the proxy's own, and forwards every request to upstream,
// authenticated as upstream is. ctx bounds only the start; the proxy
// runs until Close. An upstream that cannot be reached does not stop
// Start: requests then get 502.
func Start(ctx context.Context, upstream *rest.Config, opts ...Option) (*Proxy, error) {
	if upstream == nil {
		return nil, errors.New("wire: start: no upstream rest.Config")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wire: start: %w", err)
	}
	o := defaults()
	for _, opt := range opts {
		opt.apply(o)
	}
	target, _, err := rest.DefaultServerUrlFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("wire: upstream %q: %w", upstream.Host, err)
	}
	rt, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("wire: upstream %s transport: %w", target.Host, err)
	}
	// Upgrades (exec, port-forward, websocket watches) need HTTP/1.1 all
	// the way: HTTP/2 has no Upgrade, and a transport that negotiates h2
	// would turn them into errors. Leaving out "h2" from ALPN is how
	// client-go itself gets an HTTP/1.1-only transport.
	h1 := rest.CopyConfig(upstream)
	h1.NextProtos = []string{"http/1.1"}
	upgrades, err := rest.TransportFor(h1)
	if err != nil {
		return nil, fmt.Errorf("wire: upstream %s upgrade transport: %w", target.Host, err)
	}
	pki, err := newServingPKI(7 * 24 * time.Hour)
	if err != nil {
		return nil, fmt.Errorf("wire: serving certificate: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("wire: listen: %w", err)
	}

	base, stop := context.WithCancel(context.Background())
	p := &Proxy{
		o: o, target: target, url: "https://" + ln.Addr().String(), caPEM: pki.caPEM,
		token: rand.Text(), qps: upstream.QPS, burst: upstream.Burst,
		upstream: rt, upgrades: upgrades, stop: stop, served: make(chan struct{}), gate: newGate(),
	}
	errLog := stdlog.New(warnWriter{o.logger}, "wire: ", 0)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The proxy authenticates upstream as the rest.Config does;
			// the client's token only proved it may use the proxy, and
			// client-go's auth round trippers would not replace it.
			pr.Out.Header.Del("Authorization")
		},
		Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if isUpgrade(r.Header) {
				return p.upgrades.RoundTrip(r)
			}
			return p.upstream.RoundTrip(r)
		}),
		// Flush every write at once: a watch is an endless response whose
		// events must reach the engine as they happen. With -1 the
		// ReverseProxy also flushes the headers straight away, which a
		// watch's client waits for before it reports the watch open.
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.proxyError,
		ErrorLog:       errLog,
	}
	p.srv = &http.Server{
		Handler:   http.HandlerFunc(p.serve),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pki.cert}, MinVersion: tls.VersionTLS12},
		// Bounds a client that connects and never finishes its headers.
		// There is no write timeout: watches last as long as they last.
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          errLog,
	}
	go func() {
		defer close(p.served)
		if err := p.srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			o.logger.Warnf("wire: %s stopped serving: %v", p.url, err)
		}
	}()
	return p, nil
}

// URL is the proxy's address, "https://127.0.0.1:PORT".
func (p *Proxy) URL() string { return p.url }

// CAData is the PEM certificate of the CA that signed the proxy's
// serving certificate.
func (p *Proxy) CAData() []byte { return append([]byte(nil), p.caPEM...) }

// RESTConfig is a client config for the proxy: its URL, its CA and its
// token, with the upstream config's QPS and Burst.
func (p *Proxy) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            p.url,
		BearerToken:     p.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData()},
		QPS:             p.qps,
		Burst:           p.burst,
	}
}

// Close stops the proxy: it closes the listener and every connection,
// ends the requests in flight (open watches and upgraded connections
// would otherwise never end) and waits, bounded by ctx, for their
// handlers, so no trigger is still running when it returns nil. Calling
// it again returns the first call's result.
func (p *Proxy) Close(ctx context.Context) error {
	p.closeOnce.Do(func() { p.closeErr = p.close(ctx) })
	return p.closeErr
}

func (p *Proxy) close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	// Not http.Server.Shutdown: it would wait for watches that never end
	// and give each idle HTTP/2 client a second to hang up, when every
	// request is being ended anyway.
	p.stop()
	err := p.srv.Close()
	done := make(chan struct{})
	// If ctx ends first this goroutine outlives Close until the last
	// handler returns (a trigger's f that never does would keep it).
	go func() {
		p.handlers.Wait()
		<-p.served
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("wire: close %s: requests still being handled: %w", p.url, ctx.Err())
	}
	// The upstream transports may be shared with other clients of the
	// same config (client-go caches them), so only idle ones are closed.
	utilnet.CloseIdleConnectionsFor(p.upstream)
	utilnet.CloseIdleConnectionsFor(p.upgrades)
	if err != nil {
		return fmt.Errorf("wire: close %s: %w", p.url, err)
	}
	return nil
}

// enter admits a request unless the proxy is closing; admitted requests
// call p.handlers.Done when finished.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.handlers.Add(1)
	return true
}

// authorized checks the client's token in constant time.
func (p *Proxy) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(p.token)) == 1
}

func isUpgrade(h http.Header) bool {
	for _, v := range h.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// warnWriter turns net/http's log lines into warnings.
type warnWriter struct {
	l interface{ Warnf(string, ...any) }
}

func (w warnWriter) Write(b []byte) (int, error) {
	w.l.Warnf("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
