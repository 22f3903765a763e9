package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// exchange is one request's state shared between the handler and the
// ReverseProxy hooks, which find it in the request's context.
type exchange struct {
	entry *Request

	// Set when the response matched triggers.
	claimed []*trigger
	sent    Request // the request as f sees it
	release func()  // opens the gate
}

type exchangeKey struct{}

func exchangeOf(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "wire: proxy closed")
		return
	}
	defer p.handlers.Done()
	info := Classify(r.Method, r.URL)
	if !p.authorized(r) {
		p.ledger.setCode(p.ledger.add(info), http.StatusUnauthorized)
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized,
			"wire: this proxy needs the bearer token from the kubeconfig it wrote")
		return
	}

	// A trigger may be running: nothing that arrives now reaches the
	// cluster before it has (see After).
	select {
	case <-p.gate.opened():
	case <-r.Context().Done():
		return // the client gave up, or Close ended the request
	}

	if info.Verb == "create" && !strings.Contains(info.Resource, "/") {
		if err := p.peekCreate(r, &info); err != nil {
			p.ledger.setCode(p.ledger.add(info), http.StatusBadRequest)
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf("wire: read request body: %v", err))
			return
		}
	}

	x := &exchange{entry: p.ledger.add(info)}
	// Even when the response broke off: the request is over either way.
	defer p.ledger.finish(x.entry)
	finished := false
	defer func() {
		if x.release == nil {
			return
		}
		if !finished {
			// The response broke off on its way to the client (the
			// ReverseProxy aborts the handler): it was not sent, so
			// its triggers have not happened and stay armed.
			p.triggers.rearm(x.claimed)
			p.o.logger.Warnf("wire: %s %s: response not fully sent; trigger not fired", r.Method, r.URL.Path)
		}
		x.release()
	}()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
	finished = true
	if len(x.claimed) > 0 {
		// Every body write was already flushed (FlushInterval -1); this
		// covers a response with no body at all.
		_ = http.NewResponseController(w).Flush()
		p.triggers.fire(x.claimed, x.sent)
	}
}

// modifyResponse runs when the upstream's response headers are in and
// before any of it is written to the client.
func (p *Proxy) modifyResponse(res *http.Response) error {
	x := exchangeOf(res.Request.Context())
	if x == nil {
		return nil
	}
	sent := p.ledger.setCode(x.entry, res.StatusCode)
	if res.StatusCode/100 != 2 {
		return nil
	}
	if claimed := p.triggers.claim(sent); len(claimed) > 0 {
		// Close the gate before the client can see a byte, and drop the
		// length so an HTTP/1.1 client, like an HTTP/2 one, only sees
		// the response end when the handler returns, after f.
		x.claimed, x.sent, x.release = claimed, sent, p.gate.hold()
		res.Header.Del("Content-Length")
		res.ContentLength = -1
	}
	return nil
}

// proxyError answers a request the upstream did not: unreachable,
// refused, timed out, or the client's own context ended.
func (p *Proxy) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if x := exchangeOf(r.Context()); x != nil {
		p.ledger.setCode(x.entry, http.StatusBadGateway)
	}
	if r.Context().Err() == nil {
		p.o.logger.Warnf("wire: %s %s: upstream %s: %v", r.Method, r.URL.Path, p.target.Host, err)
	}
	writeStatus(w, http.StatusBadGateway, "", fmt.Sprintf("wire: upstream %s: %v", p.target.Host, err))
}

// writeStatus answers with a Kubernetes Status, so client-go and kubectl
// show the message rather than "unknown error".
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	b, err := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
	if err != nil {
		b = []byte(msg)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
