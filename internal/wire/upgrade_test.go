package wire_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testWebSocketWatch upgrades a watch to a WebSocket through the proxy,
// as kube-apiserver allows, and reads an event from it: the upgrade
// is passed through (101, the server's accept key) and the upgraded
// connection carries data both ways' worth of framing from the real
// server. Exec and port-forward upgrade the same way but need a node.
func testWebSocketWatch(t *testing.T, up *rest.Config, direct kubernetes.Interface) {
	ctx := bound(t, time.Minute)
	ns := namespace(t, ctx, direct, "websocket")
	p := start(t, up)

	br, closeConn := websocketGet(t, ctx, p, "/api/v1/namespaces/"+ns+"/configmaps?watch=true")
	defer closeConn()
	if _, err := direct.CoreV1().ConfigMaps(ns).Create(ctx, configMap("upgraded", "v"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		op, payload, err := readFrame(br)
		if err != nil {
			t.Fatalf("reading the upgraded watch: %v", err)
		}
		if op == 0x8 { // close
			t.Fatalf("server closed the websocket: %q", payload)
		}
		if strings.Contains(string(payload), `"ADDED"`) && strings.Contains(string(payload), `"upgraded"`) {
			break
		}
	}
	log := p.Log()
	if len(log) != 1 || log[0].Verb != "watch" || log[0].Resource != "configmaps" || log[0].Code != http.StatusSwitchingProtocols {
		t.Errorf("log = %+v, want one watch configmaps with 101", log)
	}
}

// websocketGet opens an HTTP/1.1 connection to the proxy, trusting only
// its CA, and upgrades GET path to a WebSocket. Reads are bounded by
// ctx's deadline.
func websocketGet(t *testing.T, ctx context.Context, p *wire.Proxy, path string) (*bufio.Reader, func()) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAData())
	u, err := url.Parse(p.URL())
	if err != nil {
		t.Fatal(err)
	}
	d := tls.Dialer{Config: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	key := base64.StdEncoding.EncodeToString(nonce)
	req, err := http.NewRequestWithContext(ctx, "GET", p.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	req.Header.Set("Origin", "http://localhost") // the server's WebSocket handler insists on one
	req.Header.Set("Authorization", "Bearer "+p.RESTConfig().BearerToken)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		t.Fatalf("upgrade: %s %s", res.Status, body)
	}
	// RFC 6455: the accept key proves the far end (the API server, not
	// the proxy) read this handshake.
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got, want := res.Header.Get("Sec-WebSocket-Accept"), base64.StdEncoding.EncodeToString(sum[:]); got != want {
		t.Fatalf("Sec-WebSocket-Accept %q, want %q", got, want)
	}
	return br, func() { conn.Close() }
}

// readFrame reads one WebSocket frame (RFC 6455 section 5.2) and returns
// its opcode and payload. Server frames are unmasked, but a mask is
// honoured anyway.
func readFrame(r io.Reader) (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 16<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	var mask [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(r, mask[:]); err != nil {
			return 0, nil, err
		}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
	}
	return h[0] & 0x0f, payload, nil
}
