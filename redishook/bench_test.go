package redishook

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// BenchmarkClassify measures what the hook adds per command before sending
// it: key extraction, registry lookup, rules, counters, writer mark.
func BenchmarkClassify(b *testing.B) {
	ctx := context.Background()
	cases := []struct {
		name string
		cmd  redis.Cmder
	}{
		{"GET", redis.NewStringCmd(ctx, "get", "order:cache:1024")},
		{"SET_EX", redis.NewStatusCmd(ctx, "set", "order:cache:1024", "v", "ex", int64(600))},
		{"HSET", redis.NewIntCmd(ctx, "hset", "order:order:1024:base", "amount", "99", "status", "paid")},
		{"GET_unregistered", redis.NewStringCmd(ctx, "get", "user_1024_token")},
		{"MGET_3_templates", redis.NewSliceCmd(ctx, "mget", "order:cache:1", "order:order:2:base", "promo:sku:3")},
	}
	for _, mode := range []Mode{Observe, Enforce} {
		h := New(testRegistry(b), Options{Service: "order-team", Mode: mode, Registerer: prometheus.NewRegistry(),
			Recorder: NewRecorder(nil, RecorderOptions{})})
		for _, c := range cases {
			b.Run(mode.String()+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := h.command(c.cmd); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		tx := []redis.Cmder{
			redis.NewStatusCmd(ctx, "multi"),
			redis.NewIntCmd(ctx, "hset", "order:order:1024:base", "amount", "99"),
			redis.NewBoolCmd(ctx, "pexpire", "order:order:1024:base", int64(3600000)),
			redis.NewSliceCmd(ctx, "exec"),
		}
		b.Run(mode.String()+"/TX_HSET_PEXPIRE", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := h.pipeline(tx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHookThroughput: GET and SET … EX (half each) from 8 concurrent
// goroutines through go-redis to a real redis-server, without the hook and
// with it in observe and enforce mode (with a Recorder). The three clients
// take turns in rounds (the order rotating each round) so that the noise of
// a shared machine hits them alike; per-mode ns/op and the throughput loss
// against no hook are reported as metrics.
func BenchmarkHookThroughput(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("order:cache:%d", i)
	}
	reg := testRegistry(b)
	modes := []string{"none", "noop-hook", "observe", "enforce"}
	clients := make([]*redis.Client, len(modes))
	for i, mode := range modes {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
		defer rdb.Close()
		switch mode {
		case "none":
		case "noop-hook": // go-redis's own cost of having a hook at all
			rdb.AddHook(noopHook{})
		default:
			m, _ := ParseMode(mode)
			New(reg, Options{Service: "order-team", Mode: m, Registerer: prometheus.NewRegistry(),
				Recorder: NewRecorder(rdb, RecorderOptions{})}).Install(rdb)
		}
		clients[i] = rdb
	}
	const workers, rounds = 8, 12
	run := func(rdb *redis.Client, ops int) (wall, cpu time.Duration, mallocs uint64) {
		var next atomic.Int64
		var wg sync.WaitGroup
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		start, cpu0 := time.Now(), processCPU()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1)
					if i > int64(ops) {
						return
					}
					k := keys[i%int64(len(keys))]
					var err error
					if i%2 == 0 {
						err = rdb.Set(ctx, k, "value", 10*time.Minute).Err()
					} else if err = rdb.Get(ctx, k).Err(); err == redis.Nil {
						err = nil
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		wall, cpu = time.Since(start), processCPU()-cpu0
		runtime.ReadMemStats(&ms)
		return wall, cpu, ms.Mallocs - m0
	}
	for _, c := range clients { // warm the pools
		run(c, 2000)
	}
	per := max(b.N/rounds, 1)
	wall := make([]time.Duration, len(modes))
	cpu := make([]time.Duration, len(modes))
	allocs := make([]uint64, len(modes))
	b.ResetTimer()
	for r := range rounds {
		for j := range modes {
			m := (j + r) % len(modes)
			w, c, a := run(clients[m], per)
			wall[m] += w
			cpu[m] += c
			allocs[m] += a
		}
	}
	b.StopTimer()
	total := float64(per * rounds)
	for i, mode := range modes {
		ns := float64(wall[i]) / total
		b.ReportMetric(ns, mode+"-ns/op")
		b.ReportMetric(float64(cpu[i])/total, mode+"-cpu-ns/op")
		b.ReportMetric(float64(allocs[i])/total, mode+"-allocs/op")
		if i > 0 {
			b.ReportMetric(100*(1-float64(wall[0])/float64(wall[i])), mode+"-loss-%")
		}
	}
}

// noopHook passes everything through: the baseline cost of a hook chain.
type noopHook struct{}

func (noopHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (noopHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (noopHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// BenchmarkFields measures what checking declared fields adds per command:
// an HSET of 3 fields to a template that declares none (what every HSET
// cost before fields existed) and to one that declares those 3; JSON string
// values of about 100 bytes and 4 KiB scanned for their top-level keys.
func BenchmarkFields(b *testing.B) {
	ctx := context.Background()
	big := `{"threshold":100,"discount":{"tiers":[` + strings.Repeat(`{"min":100,"pct":5,"note":"tier"},`, 120) + `{"min":0}]}}`
	cases := []struct {
		name string
		cmd  redis.Cmder
	}{
		{"HSET_3_undeclared_template", redis.NewIntCmd(ctx, "hset", "promo:sku:1024", "activityId", "7", "discountType", "PCT", "discountValue", "5")},
		{"HSET_3_declared", redis.NewIntCmd(ctx, "hset", "promo:activity:1024", "activityId", "7", "discountType", "PCT", "discountValue", "5")},
		{"SET_json_100B", redis.NewStatusCmd(ctx, "set", "promo:rule:1024", `{"threshold":100,"discount":5,"1":{"tiers":[1,2,3],"note":"spring sale"}}`, "ex", int64(600))},
		{"SET_json_4KiB", redis.NewStatusCmd(ctx, "set", "promo:rule:1024", big, "ex", int64(600))},
	}
	for _, mode := range []Mode{Observe, Enforce} {
		h := New(testRegistry(b), Options{Service: "promo-team", Mode: mode, Registerer: prometheus.NewRegistry()})
		for _, c := range cases {
			b.Run(mode.String()+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					if err := h.command(c.cmd); err != nil {
						b.Fatal(err)
					}
				}
				// CPU time is steadier than wall time on a shared machine.
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
