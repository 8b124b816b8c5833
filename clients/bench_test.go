package clients

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/keyguard/keyguard/guard"
)

// BenchmarkOverhead measures, per runtime on one redis-server, a guarded
// write (the script by EVALSHA) against a plain HSET of the same field on
// the same client, in alternating rounds inside the runtime so that both
// see the same load; b.N writes of each. It reports both latencies and
// their ratio (bench/RESULTS.md):
//
//	go test ./clients -run '^$' -bench Overhead -benchtime 2000x
func BenchmarkOverhead(b *testing.B) {
	tg := serverTarget(b)
	for _, name := range runtimeNames {
		if name == "python-async" { // the driver's bench op is synchronous
			continue
		}
		b.Run(name, func(b *testing.B) {
			var plain, guarded float64
			if name == "go" {
				plain, guarded = goOverhead(b, tg, b.N)
			} else {
				rt := startRuntime(b, name, tg)
				var r struct {
					PlainNS   float64 `json:"plain_ns"`
					GuardedNS float64 `json:"guarded_ns"`
				}
				rt.Do(b, req{"op": "bench", "n": b.N, "prefix": "bench:" + name}).must(b, name+" bench", &r)
				plain, guarded = r.PlainNS, r.GuardedNS
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(plain, "plain-ns/write")
			b.ReportMetric(guarded, "guarded-ns/write")
			b.ReportMetric(guarded/plain, "guarded/plain")
		})
	}
}

// goOverhead is the drivers' bench op for the Go guard.
func goOverhead(b *testing.B, tg *target, n int) (plain, guarded float64) {
	ctx := context.Background()
	g := guard.New(tg.rdb, "bench:go", guard.Options{TTL: time.Hour})
	var p, q time.Duration
	for rnd := range 4 {
		t0 := time.Now()
		for i := range n {
			if err := tg.rdb.HSet(ctx, fmt.Sprintf("bench:go:plain:%d", i%100), "f", "v").Err(); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for i := range n {
			if _, err := g.Set(ctx, fmt.Sprintf("bench:go:guarded:%d", i%100), "f", "v"); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		if rnd > 0 { // the first round warms up
			p += t1.Sub(t0)
			q += t2.Sub(t1)
		}
	}
	return float64(p) / float64(3*n), float64(q) / float64(3*n)
}
