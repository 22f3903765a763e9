package wire_test

import (
	"context"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// BenchmarkProxyGet measures what the proxy adds to a ConfigMap get: the
// same client-go get, direct and through the proxy, alternating, each
// reported in µs and as a ratio (goal: well under 2x on loopback).
//
//	go test -run '^$' -bench ProxyGet -benchtime 2000x ./internal/wire/
func BenchmarkProxyGet(b *testing.B) {
	c := testenv.LocalCluster(b, "wire-bench", local.WithPods(false))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := wire.Start(ctx, c.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)

	// No client-side rate limit: it would measure itself, not the proxy.
	unlimited := func(cfg *rest.Config) kubernetes.Interface {
		cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		return kubernetes.NewForConfigOrDie(cfg)
	}
	direct, proxied := unlimited(c.RESTConfig()), unlimited(p.RESTConfig())
	if _, err := direct.CoreV1().ConfigMaps("default").Create(ctx, configMap("bench", "v"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	get := func(cs kubernetes.Interface) time.Duration {
		start := time.Now()
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "bench", metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	get(direct) // open both connections outside the measurement
	get(proxied)

	var d, pr time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d += get(direct)
		pr += get(proxied)
	}
	b.ReportMetric(float64(d.Microseconds())/float64(b.N), "direct-µs/get")
	b.ReportMetric(float64(pr.Microseconds())/float64(b.N), "proxy-µs/get")
	b.ReportMetric(float64(pr)/float64(d), "proxy/direct")
}
