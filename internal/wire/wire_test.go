package wire_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestProxy runs everything that needs a real API server against one
// local control plane (no pods: nothing here needs a node), each subtest
// with its own proxy and namespace.
func TestProxy(t *testing.T) {
	c := testenv.LocalCluster(t, "wire", local.WithPods(false))
	up := c.RESTConfig()
	direct := kubernetes.NewForConfigOrDie(up)

	t.Run("CountsWhatWasDone", func(t *testing.T) { testCounts(t, up, direct) })
	t.Run("WatchStreams", func(t *testing.T) { testWatchStreams(t, up, direct) })
	t.Run("WebSocketWatchUpgrade", func(t *testing.T) { testWebSocketWatch(t, up, direct) })
	t.Run("TriggerHTTP2", func(t *testing.T) { testTrigger(t, up, direct, "h2") })
	t.Run("TriggerHTTP1", func(t *testing.T) { testTrigger(t, up, direct, "http/1.1") })
	t.Run("TriggerHoldsNewRequests", func(t *testing.T) { testTriggerHolds(t, up, direct) })
	t.Run("CreateBodiesPassUnchanged", func(t *testing.T) { testBodies(t, up, direct) })
	t.Run("CloseEndsWatches", func(t *testing.T) { testClose(t, up) })
	t.Run("OverlapSeesConcurrency", func(t *testing.T) { testOverlap(t, up, direct) })
}

// testOverlap: creates sent one after the other never overlap in the
// proxy's numbering; eight sent at once from eight goroutines do.
func testOverlap(t *testing.T, up *rest.Config, direct kubernetes.Interface) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, "overlap")
	p := start(t, up)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limiter between the goroutines
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	overlaps := func(reqs []wire.Request) int {
		n := 0
		for i := range reqs {
			for j := i + 1; j < len(reqs); j++ {
				if wire.Overlap(reqs[i], reqs[j]) {
					n++
				}
			}
		}
		return n
	}
	for i := range 4 {
		if _, err := cms.Create(ctx, configMap(fmt.Sprintf("seq-%d", i), "v"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := overlaps(p.Log()); n != 0 {
		t.Errorf("four creates one after the other: %d overlapping pairs, want 0 (%v)", n, p.Log())
	}
	mark := p.Seq()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			if _, err := cms.Create(ctx, configMap(fmt.Sprintf("par-%d", i), "v"), metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	close(gate)
	wg.Wait()
	if n := overlaps(p.Since(mark)); n == 0 {
		t.Errorf("eight creates sent at once: no overlapping pair (%v)", p.Since(mark))
	}
}

// testCounts drives ConfigMaps through a client built from the written
// kubeconfig and checks that the counts and the log say exactly what was
// done, and that the cluster really saw it.
func testCounts(t *testing.T, up *rest.Config, direct kubernetes.Interface) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, "counts")
	p := start(t, up)

	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig mode: %v %v, want 0600", fi.Mode(), err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != p.URL() || len(cfg.CAData) == 0 {
		t.Fatalf("kubeconfig: host %q (want %q), CA inline: %v", cfg.Host, p.URL(), len(cfg.CAData) > 0)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	cms := cs.CoreV1().ConfigMaps(ns)

	for _, name := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, configMap(name, "v"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) < 2 {
		t.Fatalf("list: %v (%d items)", err, len(l.Items))
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted a: %v, want NotFound", err)
	}

	// The cluster itself agrees: b is there, a is not.
	if _, err := direct.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); err != nil {
		t.Fatalf("b upstream: %v", err)
	}
	if _, err := direct.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a upstream: %v, want NotFound", err)
	}

	want := map[wire.Key]int{
		{Verb: "create", Resource: "configmaps"}: 2,
		{Verb: "get", Resource: "configmaps"}:    2,
		{Verb: "list", Resource: "configmaps"}:   1,
		{Verb: "delete", Resource: "configmaps"}: 1,
	}
	if got := p.Counts(); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	if p.Total() != 6 {
		t.Errorf("total = %d, want 6", p.Total())
	}
	wantLog := []string{
		"1 create configmaps " + ns + "/a 201",
		"2 create configmaps " + ns + "/b 201",
		"3 get configmaps " + ns + "/a 200",
		"4 list configmaps " + ns + "/ 200",
		"5 delete configmaps " + ns + "/a 200",
		"6 get configmaps " + ns + "/a 404",
	}
	if got := summarize(p.Log()); !slices.Equal(got, wantLog) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLog, "\n"))
	}

	if got := summarize(p.Since(3)); !slices.Equal(got, wantLog[3:]) || p.Seq() != 6 {
		t.Errorf("Since(3) = %q with Seq %d, want the last three of the log and Seq 6", got, p.Seq())
	}

	p.Reset()
	if p.Total() != 0 || len(p.Counts()) != 0 || len(p.Log()) != 0 {
		t.Fatalf("after Reset: total %d, counts %v, log %v", p.Total(), p.Counts(), p.Log())
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	log := p.Log()
	if len(log) != 1 || log[0].Seq != 7 || log[0].Key() != (wire.Key{Verb: "get", Resource: "nonresource:/version"}) {
		t.Errorf("after Reset the log is %+v, want one get nonresource:/version with Seq 7", log)
	}
	if got := p.Since(0); len(got) != 1 || got[0].Seq != 7 {
		t.Errorf("after Reset Since(0) = %+v, want only Seq 7", got)
	}
}

// testWatchStreams opens a watch through the proxy and creates an object
// directly on the cluster: the event can only arrive in time if the
// proxy passes the endless response on as it comes.
func testWatchStreams(t *testing.T, up *rest.Config, direct kubernetes.Interface) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, "watch")
	p := start(t, up)
	cs := kubernetes.NewForConfigOrDie(p.RESTConfig())

	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := direct.CoreV1().ConfigMaps(ns).Create(ctx, configMap("streamed", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ctx, w, watch.Added, "streamed", 20*time.Second)

	counts := p.Counts()
	if counts[wire.Key{Verb: "watch", Resource: "configmaps"}] != 1 || p.Total() != 1 {
		t.Errorf("counts = %v, want just one watch configmaps", counts)
	}
	if log := p.Log(); len(log) != 1 || log[0].Code != 200 || log[0].Namespace != ns {
		t.Errorf("log = %+v, want the open watch with its 200", log)
	}
}

// testTrigger checks After's contract over one client protocol: it fires
// once, for the matching create only, after the object is committed and
// before the client's call returns; not for another name, not for a
// failed create; and Every fires every time.
func testTrigger(t *testing.T, up *rest.Config, direct kubernetes.Interface, proto string) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, map[string]string{"h2": "trigger-h2", "http/1.1": "trigger-h1"}[proto])
	p := start(t, up)
	cfg := p.RESTConfig()
	cfg.NextProtos = []string{proto}
	assertProto(t, ctx, cfg, map[string]string{"h2": "HTTP/2.0", "http/1.1": "HTTP/1.1"}[proto])
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)

	var (
		mu       sync.Mutex
		fired    []wire.Request
		returned atomic.Bool // set once the client's Create of b returned
		problems []string
	)
	p.After(wire.Match{Verb: "create", Resource: "configmaps", Namespace: ns, Name: "b"}, func(r wire.Request) {
		mu.Lock()
		defer mu.Unlock()
		fired = append(fired, r)
		// The object is committed: the cluster, asked directly, has it.
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := direct.CoreV1().ConfigMaps(ns).Get(gctx, "b", metav1.GetOptions{}); err != nil {
			problems = append(problems, fmt.Sprintf("b not upstream when f ran: %v", err))
		}
		// Checked last, after that round trip: the client has had every
		// chance to see its response complete, and must not have.
		if returned.Load() {
			problems = append(problems, "the client's Create returned before f did")
		}
	})

	if _, err := cms.Create(ctx, configMap("a", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, configMap("b", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	returned.Store(true)
	// Once only: the same create again fails (409) and, after a delete,
	// succeeds, and neither fires it.
	if _, err := cms.Create(ctx, configMap("b", "v"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create of b: %v, want AlreadyExists", err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, configMap("b", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(fired) != 1 || fired[0].Name != "b" || fired[0].Code != 201 || fired[0].Verb != "create" {
		t.Errorf("fired %+v, want once for the create of b with 201", fired)
	}
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()

	// A failed create does not fire, and leaves the trigger armed.
	if _, err := direct.CoreV1().ConfigMaps(ns).Create(ctx, configMap("c", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cFired atomic.Int32
	p.After(wire.Match{Verb: "create", Name: "c"}, func(wire.Request) { cFired.Add(1) })
	if _, err := cms.Create(ctx, configMap("c", "v"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create of existing c: %v, want AlreadyExists", err)
	}
	if n := cFired.Load(); n != 0 {
		t.Fatalf("trigger on c fired %d times for a 409", n)
	}
	if err := direct.CoreV1().ConfigMaps(ns).Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, configMap("c", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := cFired.Load(); n != 1 {
		t.Fatalf("trigger on c fired %d times after its create succeeded, want 1", n)
	}

	// Every fires each time; cancel stops it.
	var deletes atomic.Int32
	cancel := p.After(wire.Match{Verb: "delete", Resource: "configmaps"}, func(wire.Request) { deletes.Add(1) }, wire.Every())
	for _, name := range []string{"a", "b"} {
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := cms.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := deletes.Load(); n != 2 {
		t.Errorf("Every trigger fired %d times, want 2 (two deletes before cancel)", n)
	}
}

// testTriggerHolds sends a request from another client, on another
// connection, while f runs: it must not reach the cluster until f has
// returned, so an engine cannot slip a request past a kill.
func testTriggerHolds(t *testing.T, up *rest.Config, direct kubernetes.Interface) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, "hold")
	p := start(t, up)
	cs := kubernetes.NewForConfigOrDie(p.RESTConfig())

	// A second client on its own connection (HTTP/1.1, so not a stream
	// of the first client's HTTP/2 connection), opened beforehand.
	other := p.RESTConfig()
	other.NextProtos = []string{"http/1.1"}
	otherCS := kubernetes.NewForConfigOrDie(other)
	if _, err := otherCS.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}

	var otherErr error
	otherDone := make(chan struct{})
	var totalInF atomic.Int64
	p.After(wire.Match{Verb: "create", Name: "x"}, func(wire.Request) {
		totalInF.Store(int64(p.Total()))
		sent := make(chan struct{})
		go func() {
			defer close(otherDone)
			_, otherErr = otherCS.CoreV1().ConfigMaps(ns).Get(withWroteRequest(ctx, sent), "x", metav1.GetOptions{})
		}()
		select {
		case <-sent: // the other request is on its way to the proxy
		case <-ctx.Done():
			return
		}
		// Held, it cannot complete while f runs, however long f takes.
		// Not held, it completes in milliseconds. The window only sets
		// how surely a broken hold is caught; a working one never fails.
		select {
		case <-otherDone:
			t.Errorf("a request sent while f ran completed before f returned: %+v", p.Log())
		case <-time.After(500 * time.Millisecond):
		}
		if int64(p.Total()) != totalInF.Load() {
			t.Errorf("a request sent while f ran was forwarded before f returned: %+v", p.Log())
		}
	})
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("x", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-otherDone:
	case <-ctx.Done():
		t.Fatal("the held request never completed after f returned")
	}
	if otherErr != nil {
		t.Fatalf("held request: %v", otherErr)
	}
	log := p.Log()
	last := log[len(log)-1]
	if last.Verb != "get" || last.Name != "x" || last.Code != 200 || int64(last.Seq) <= totalInF.Load() {
		t.Errorf("held get forwarded as %+v, want after the create (Seq > %d) and 200", last, totalInF.Load())
	}
}

// testBodies checks that create bodies reach the cluster byte for byte
// whether the proxy reads them whole, stops at its limit, or meets one
// of unknown length, and that generateName creates are logged sensibly.
func testBodies(t *testing.T, up *rest.Config, direct kubernetes.Interface) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, "bodies")
	p := start(t, up, wire.WithBodyLimit(512))
	cs := kubernetes.NewForConfigOrDie(p.RESTConfig())
	big := strings.Repeat("0123456789", 200) // well over the 512-byte limit

	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("big", big), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gen := configMap("", "v")
	gen.GenerateName = "gen-"
	made, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, gen, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Bodies of unknown length (chunked), under and over the limit.
	hc, err := rest.HTTPClientFor(p.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"chunked-small": "v", "chunked-big": big} {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, data)
		req, err := http.NewRequestWithContext(ctx, "POST", p.URL()+"/api/v1/namespaces/"+ns+"/configmaps",
			io.NopCloser(strings.NewReader(body))) // NopCloser hides the length
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 201 {
			t.Fatalf("create %s: %d %s", name, res.StatusCode, msg)
		}
	}

	for name, data := range map[string]string{"big": big, made.Name: "v", "chunked-small": "v", "chunked-big": big} {
		cm, err := direct.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s upstream: %v", name, err)
		}
		if cm.Data["k"] != data {
			t.Errorf("%s upstream has %d bytes of data, want %d", name, len(cm.Data["k"]), len(data))
		}
	}
	// Over the limit or generateName: created, counted, but nameless.
	log := p.Log()
	got := summarize(log)
	if len(log) != 4 || got[0] != "1 create configmaps "+ns+"/ 201" || got[1] != "2 create configmaps "+ns+"/ 201" || log[1].GenerateName != "gen-" {
		t.Fatalf("log %v (generateName %q), want the big and the generated create without names", got, log[1].GenerateName)
	}
	// The chunked ones ran in map order; only the small one is named.
	named := map[string]int{}
	for _, r := range log[2:] {
		named[r.Name]++
		if r.Code != 201 {
			t.Errorf("chunked create logged as %+v", r)
		}
	}
	if !maps.Equal(named, map[string]int{"chunked-small": 1, "": 1}) {
		t.Errorf("chunked creates were named %v, want chunked-small and one nameless", named)
	}
	if n := p.Counts()[wire.Key{Verb: "create", Resource: "configmaps"}]; n != 4 {
		t.Errorf("create configmaps = %d, want 4", n)
	}
}

// testClose closes a proxy with a watch open through it: Close must end
// the watch rather than wait for it, and a second Close is harmless.
func testClose(t *testing.T, up *rest.Config) {
	ctx := bound(t, time.Minute)
	p, err := wire.Start(ctx, up)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(p.RESTConfig())
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		t.Fatalf("close with an open watch: %v", err)
	}
	if err := p.Close(cctx); err != nil {
		t.Fatalf("second close: %v", err)
	}
	// The watch ends (its channel closes) instead of hanging.
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				goto ended
			}
		case <-cctx.Done():
			t.Fatal("watch still open after Close")
		}
	}
ended:
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Fatal("request after Close succeeded")
	}
}

// TestUnreachableUpstream: a proxy in front of nothing starts, and its
// clients get a prompt 502 with the reason, not a hang.
func TestUnreachableUpstream(t *testing.T) {
	ctx := bound(t, 30*time.Second)
	p := start(t, &rest.Config{Host: "https://" + closedPort(t), TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	cfg := p.RESTConfig()
	cfg.Timeout = 20 * time.Second // a hang fails here, not at the test deadline
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Get(ctx, "x", metav1.GetOptions{})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.Status().Code != http.StatusBadGateway || !strings.Contains(se.Status().Message, "connection refused") {
		t.Fatalf("get through a proxy to nothing: %v, want a 502 saying connection refused", err)
	}
	if log := p.Log(); len(log) != 1 || log[0].Code != http.StatusBadGateway || log[0].Name != "x" {
		t.Errorf("log = %+v, want the get of x with 502", log)
	}
}

// TestClientsNeedTheKubeconfig: the proxy is reachable only with its own
// CA (a client trusting the system roots refuses it) and only with its
// token (anything else gets 401 and is not forwarded).
func TestClientsNeedTheKubeconfig(t *testing.T) {
	ctx := bound(t, 30*time.Second)
	p := start(t, &rest.Config{Host: "https://" + closedPort(t)})

	if _, err := http.DefaultClient.Get(p.URL() + "/version"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client without the proxy's CA: %v, want a certificate error", err)
	}
	cfg := p.RESTConfig()
	cfg.BearerToken = ""
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", p.URL()+"/api/v1/namespaces/default/configmaps/x", nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", res.StatusCode)
	}
	if log := p.Log(); len(log) != 1 || log[0].Code != http.StatusUnauthorized {
		t.Errorf("log = %+v, want one 401", log)
	}
}

// TestStartRejectsBadInput: no upstream, or an upstream config client-go
// cannot use, fails Start with the reason rather than later.
func TestStartRejectsBadInput(t *testing.T) {
	ctx := bound(t, 10*time.Second)
	if _, err := wire.Start(ctx, nil); err == nil {
		t.Error("Start(nil) succeeded")
	}
	bad := &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("not a certificate")}}
	if _, err := wire.Start(ctx, bad); err == nil {
		t.Error("Start with unusable CA data succeeded")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := wire.Start(done, &rest.Config{Host: "https://127.0.0.1:1"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context: %v", err)
	}
}

// start starts a proxy closed by t.Cleanup, with a bound.
func start(t *testing.T, up *rest.Config, opts ...wire.Option) *wire.Proxy {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := wire.Start(ctx, up, append([]wire.Option{wire.WithLogger(testenv.Logger(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func bound(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace directly on the cluster, so the proxy
// under test does not see it.
func namespace(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
	return name
}

func configMap(name, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": data}}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitEvent waits, at most d, for an event of type typ about name.
func waitEvent(t *testing.T, ctx context.Context, w watch.Interface, typ watch.EventType, name string, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed before the event")
			}
			if cm, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == typ && cm.Name == name {
				return
			}
		case <-timer.C:
			t.Fatalf("no %s event for %s within %s: the proxy is holding the stream back", typ, name, d)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// assertProto checks which HTTP version a client config really speaks to
// the proxy, so a test meant for one protocol cannot pass on the other.
func assertProto(t *testing.T, ctx context.Context, cfg *rest.Config, want string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", cfg.Host+"/version", nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Proto != want {
		t.Fatalf("client spoke %s to the proxy, want %s", res.Proto, want)
	}
}

func summarize(log []wire.Request) []string {
	var out []string
	for _, r := range log {
		out = append(out, fmt.Sprintf("%d %s %s/%s %d", r.Seq, r.Key(), r.Namespace, r.Name, r.Code))
	}
	return out
}

// withWroteRequest closes sent once the request has been written out.
func withWroteRequest(ctx context.Context, sent chan struct{}) context.Context {
	var once sync.Once
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(sent) }) },
	})
}
