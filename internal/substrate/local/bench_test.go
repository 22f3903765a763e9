package local_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
)

// BenchmarkLocalClusterStartStop measures start-to-ready (goal: <= 4 s on
// the 2-core reference machine), stop, and the control plane's peak RSS
// (the sum of every child's high-water mark).
//
//	go test -run '^$' -bench LocalCluster -benchtime 5x ./internal/substrate/local/
func BenchmarkLocalClusterStartStop(b *testing.B) {
	tc := testenv.Toolchain(b, local.Tools()...)
	p := local.New(tc)
	var ready, stop time.Duration
	var rss int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		start := time.Now()
		c, err := p.Start(ctx, "bench")
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		ready += time.Since(start)
		lc := c.(*local.Cluster)
		var sum int64
		for _, pid := range lc.PIDs() {
			sum += highWaterKB(pid)
		}
		rss = max(rss, sum)
		start = time.Now()
		if err := c.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		stop += time.Since(start)
	}
	b.ReportMetric(ready.Seconds()/float64(b.N), "ready-s/op")
	b.ReportMetric(stop.Seconds()/float64(b.N), "stop-s/op")
	b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
}

// highWaterKB reads a process's peak resident set (VmHWM) in KiB.
func highWaterKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
