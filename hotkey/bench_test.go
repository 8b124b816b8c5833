package hotkey

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// benchParallelism goroutines per core: enough for network-bound reads.
const benchParallelism = 16

// BenchmarkRead compares, in one run, reads of a hot key through plain
// go-redis GET and through the Cache's local tier: the hot key alone, and
// a mix where 1 read in 20 goes to a key without a local tier (a 95% hit
// ratio), both against one real redis-server on loopback.
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 64})
	b.Cleanup(func() { rdb.Close() })
	reg := testRegistry(b)
	hot, cold := "cache:product:detail:P1001", "config:global:banner"
	value := `{"sku":"P1001","name":"phone","price":1999,"stock":12}`
	pr := prometheus.NewRegistry()
	c, err := New(ctx, reg, rdb, Options{Service: "bench", Registerer: pr, NoReports: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	load := func(context.Context, string) (string, error) { return value, nil }
	for _, k := range []string{hot, cold} {
		if err := c.Set(ctx, k, value); err != nil {
			b.Fatal(err)
		}
		rdb.Set(ctx, k, value, 0) // the key itself, for the plain GET
	}
	run := func(b *testing.B, read func(key string) error, mix bool) {
		b.SetParallelism(benchParallelism)
		b.ReportAllocs()
		cpu0 := processCPU()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				key := hot
				if mix && i%20 == 19 {
					key = cold
				}
				i++
				if err := read(key); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	plain := func(key string) error { return rdb.Get(ctx, key).Err() }
	sdk := func(key string) error { _, err := c.Get(ctx, key, load); return err }
	b.Run("hot/go-redis-get", func(b *testing.B) { run(b, plain, false) })
	b.Run("hot/local-tier", func(b *testing.B) {
		h0, m0 := localCounts(b, pr)
		run(b, sdk, false)
		reportHitRatio(b, pr, h0, m0)
	})
	b.Run("mix95/go-redis-get", func(b *testing.B) { run(b, plain, true) })
	b.Run("mix95/local-tier", func(b *testing.B) {
		h0, m0 := localCounts(b, pr)
		run(b, sdk, true)
		// The cold key has no local tier: count its reads as misses.
		h1, m1 := localCounts(b, pr)
		hits, misses := h1-h0, m1-m0+float64(b.N)/20
		b.ReportMetric(100*hits/(hits+misses), "hit-%")
	})
}

func localCounts(b *testing.B, pr *prometheus.Registry) (hits, misses float64) {
	return counter(b, pr, MetricLocal, "result", "hit"), counter(b, pr, MetricLocal, "result", "miss")
}

func reportHitRatio(b *testing.B, pr *prometheus.Registry, h0, m0 float64) {
	h1, m1 := localCounts(b, pr)
	if h, m := h1-h0, m1-m0; h+m > 0 {
		b.ReportMetric(100*h/(h+m), "hit-%")
	}
}

// BenchmarkClusterHotKey is one hot key read from a 3-master Cluster:
// plain GET (every read on one node); plain GET of a random one of its 6
// copies (the splitting alone); through the Cache with the 6 copies and
// no local tier (splitting, and concurrent reads of the key in this
// process share one GET); and with the local tier too. It reports the
// busiest node's share of the GETs and the GETs the server saw per read.
func BenchmarkClusterHotKey(b *testing.B) {
	ctx := context.Background()
	cl := redistest.StartCluster(b, 3)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs, PoolSize: 64})
	b.Cleanup(func() { cc.Close() })
	reg := testRegistry(b)
	key := "goods:hot:area:110101:20010"
	value := `{"sku":20010,"name":"phone","price":1999}`
	load := func(context.Context, string) (string, error) { return value, nil }
	noLocal, err := New(ctx, reg, cc, Options{Service: "bench", PromoteAbove: math.MaxFloat64, NoReports: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { noLocal.Close() })
	local, err := New(ctx, reg, cc, Options{Service: "bench", NoReports: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { local.Close() })
	if err := noLocal.Set(ctx, key, value); err != nil {
		b.Fatal(err)
	}
	cc.Set(ctx, key, value, 0)
	nodes := make([]*redis.Client, len(cl.Nodes))
	for i, n := range cl.Nodes {
		nodes[i] = redis.NewClient(&redis.Options{Addr: n.Addr})
		b.Cleanup(func() { nodes[i].Close() })
	}
	run := func(b *testing.B, read func() error) {
		for _, n := range nodes {
			n.ConfigResetStat(ctx)
		}
		b.SetParallelism(benchParallelism)
		var failed atomic.Bool
		cpu0 := processCPU()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := read(); err != nil && !failed.Swap(true) {
					b.Error(err)
				}
			}
		})
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "client-cpu-ns/op")
		total, busiest := 0, 0
		for _, n := range nodes {
			g := commandCalls(b, n, "get")
			total += g
			busiest = max(busiest, g)
		}
		if total > 0 {
			b.ReportMetric(100*float64(busiest)/float64(total), "busiest-node-%")
		}
		b.ReportMetric(float64(total)/float64(b.N), "server-gets/read")
	}
	copies := ReplicaKeys(key, 6)
	b.Run("plain-get", func(b *testing.B) { run(b, func() error { return cc.Get(ctx, key).Err() }) })
	b.Run("plain-get-random-copy", func(b *testing.B) {
		run(b, func() error { return cc.Get(ctx, copies[rand.IntN(len(copies))]).Err() })
	})
	b.Run("replicas-6", func(b *testing.B) {
		run(b, func() error { _, err := noLocal.Get(ctx, key, load); return err })
	})
	b.Run("replicas-6+local-tier", func(b *testing.B) {
		run(b, func() error { _, err := local.Get(ctx, key, load); return err })
	})
}
