package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestContentRoundTripsAndIsCounted: what Bazel uploads it gets back, under
// any path prefix, and /status says so.
func TestContentRoundTripsAndIsCounted(t *testing.T) {
	c, err := newCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	blob := "a compiled archive"
	url := srv.URL + "/prefix/cas/" + digest(blob)
	if code, _ := do(t, http.MethodGet, url, ""); code != http.StatusNotFound {
		t.Fatalf("GET before PUT: %d, want 404", code)
	}
	if code, body := do(t, http.MethodPut, url, blob); code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, body)
	}
	if code, body := do(t, http.MethodGet, url, ""); code != http.StatusOK || body != blob {
		t.Fatalf("GET after PUT: %d %q", code, body)
	}
	if code, _ := do(t, http.MethodHead, url, ""); code != http.StatusOK {
		t.Fatalf("HEAD after PUT: %d", code)
	}
	ac := srv.URL + "/ac/" + digest("an action")
	if code, _ := do(t, http.MethodPut, ac, "an action result, any bytes"); code != http.StatusOK {
		t.Fatalf("PUT ac: %d", code)
	}
	if got := c.stats.snapshot(); got["cas"]["hits"] != 2 || got["cas"]["misses"] != 1 || got["cas"]["uploads"] != 1 || got["ac"]["uploads"] != 1 {
		t.Errorf("stats %v", got)
	}
}

// TestContentThatDoesNotMatchItsDigestIsRefused: a corrupt upload is never
// served to a later build.
func TestContentThatDoesNotMatchItsDigestIsRefused(t *testing.T) {
	c, err := newCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	url := srv.URL + "/cas/" + digest("the real bytes")
	if code, _ := do(t, http.MethodPut, url, "other bytes"); code != http.StatusBadRequest {
		t.Fatalf("mismatched PUT: %d, want 400", code)
	}
	if code, _ := do(t, http.MethodGet, url, ""); code != http.StatusNotFound {
		t.Fatalf("GET after a refused PUT: %d, want 404", code)
	}
}

func TestOnlyLoopbackIsServed(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:9092": true, "[::1]:9092": true, "localhost:9092": true,
		"0.0.0.0:9092": false, ":9092": false, "10.0.0.5:9092": false,
	} {
		if err := loopbackOnly(addr); (err == nil) != ok {
			t.Errorf("%s: error %v, want allowed=%v", addr, err, ok)
		}
	}
}
