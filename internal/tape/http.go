package tape

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"k8s.io/client-go/rest"
)

// httpEntry is a response as recorded: whole, since gauntlet's own
// requests are reads and writes, never watches.
type httpEntry struct {
	status int
	header http.Header
	body   []byte
	err    string // the transport's error, when there was no response
}

// Wrap makes cfg's requests go through the tape: recorded on their way to
// the cluster, or answered from the recording.
func (s *Side) Wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &roundTripper{s: s, base: rt} })
	return cfg
}

type roundTripper struct {
	s    *Side
	base http.RoundTripper
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	key := rt.s.key("http " + req.Method + " " + req.URL.RequestURI())
	if rt.s.replay {
		if req.Body != nil {
			req.Body.Close()
		}
		e, ok := rt.s.next(key)
		if !ok || e.http == nil {
			return nil, rt.s.diverge("no recorded answer to %s %s", req.Method, req.URL.RequestURI())
		}
		if e.http.err != "" {
			return nil, errors.New(e.http.err)
		}
		body := rt.s.localize(e.http.body)
		return &http.Response{
			Status: http.StatusText(e.http.status), StatusCode: e.http.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: e.http.header.Clone(), Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
		}, nil
	}
	res, err := rt.base.RoundTrip(req)
	if err != nil {
		rt.s.add(key, entry{http: &httpEntry{err: err.Error()}})
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		rt.s.add(key, entry{http: &httpEntry{err: err.Error()}})
		return nil, err
	}
	rt.s.add(key, entry{http: &httpEntry{status: res.StatusCode, header: res.Header.Clone(), body: body}})
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	return res, nil
}
