// Command bazel-cache is a Bazel HTTP remote cache for one machine: it
// serves GET, HEAD and PUT of /ac/<sha256> (action results) and
// /cas/<sha256> (content, verified against its digest on upload) from a
// directory, on loopback only. It exists so that the `remote-cache` config
// of .bazelrc can be exercised where no cache service is reachable:
//
//	go run ./tools/bazel-cache --dir ~/.cache/gauntlet-bazel-remote   # listens on 127.0.0.1:9092
//	bazel test --config=remote-cache //...                            # reads
//	bazel test --config=ci //...                                      # reads and writes
//
// GET /status reports hits, misses and uploads as JSON. Nothing is ever
// evicted: delete the directory to empty the cache.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9092", "loopback address to listen on")
	dir := flag.String("dir", defaultDir(), "directory holding the cache")
	flag.Parse()
	if err := run(*addr, *dir); err != nil {
		fmt.Fprintf(os.Stderr, "bazel-cache: %v\n", err)
		os.Exit(1)
	}
}

func defaultDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return "bazel-remote-cache"
	}
	return filepath.Join(d, "gauntlet-bazel-remote")
}

func run(addr, dir string) error {
	if err := loopbackOnly(addr); err != nil {
		return err
	}
	c, err := newCache(dir)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	log.Printf("serving the Bazel HTTP cache in %s on http://%s", dir, l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Printf("stopped: %s", c.stats.String())
	return nil
}

// loopbackOnly refuses any address another machine could reach: the cache
// has no authentication.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q: only loopback addresses (127.0.0.1, ::1, localhost) are served", addr)
	}
	return nil
}

// stats counts what the cache did, per kind ("ac" or "cas").
type stats struct {
	Hits, Misses, Uploads, Rejected [2]atomic.Int64
}

func (s *stats) String() string {
	b, _ := json.Marshal(s.snapshot())
	return string(b)
}

func (s *stats) snapshot() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for i, kind := range kinds {
		out[kind] = map[string]int64{
			"hits": s.Hits[i].Load(), "misses": s.Misses[i].Load(),
			"uploads": s.Uploads[i].Load(), "rejected": s.Rejected[i].Load(),
		}
	}
	return out
}

var (
	kinds  = [2]string{"ac", "cas"}
	pathRE = regexp.MustCompile(`/(ac|cas)/([0-9a-f]{64})$`)
)

type cache struct {
	dir   string
	stats stats
}

func newCache(dir string) (*cache, error) {
	for _, k := range kinds {
		if err := os.MkdirAll(filepath.Join(dir, k), 0o755); err != nil {
			return nil, err
		}
	}
	return &cache{dir: dir}, nil
}

func (c *cache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/status" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c.stats.snapshot())
		return
	}
	// Bazel may put a prefix before /ac/ or /cas/ (--remote_cache=http://host/prefix).
	m := pathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.Error(w, "want /ac/<sha256> or /cas/<sha256>", http.StatusNotFound)
		return
	}
	kind := 0
	if m[1] == "cas" {
		kind = 1
	}
	path := filepath.Join(c.dir, m[1], m[2][:2], m[2])
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		c.get(w, r, kind, path)
	case http.MethodPut:
		c.put(w, r, kind, path, m[2])
	default:
		http.Error(w, "GET, HEAD or PUT", http.StatusMethodNotAllowed)
	}
}

func (c *cache) get(w http.ResponseWriter, r *http.Request, kind int, path string) {
	f, err := os.Open(path)
	if err != nil {
		c.stats.Misses[kind].Add(1)
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	c.stats.Hits[kind].Add(1)
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, f)
}

// put stores the body under path, atomically; content (cas) must hash to
// its name, or it is refused and nothing is stored.
func (c *cache) put(w http.ResponseWriter, r *http.Request, kind int, path, digest string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), r.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if got := hex.EncodeToString(h.Sum(nil)); kinds[kind] == "cas" && got != digest {
		c.stats.Rejected[kind].Add(1)
		http.Error(w, fmt.Sprintf("content hashes to %s, not %s", got, digest), http.StatusBadRequest)
		return
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	c.stats.Uploads[kind].Add(1)
	w.WriteHeader(http.StatusOK)
}
