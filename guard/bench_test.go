package guard_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/redistest"
)

type benchEnv struct {
	keys   []string
	single map[string]func(key string) error
	batch  map[string]func(keys []string) error
}

// newBenchEnv starts a server, claims 1000 keys and returns one write
// function per variant: "guard", "raw-evalsha" (the same script, same
// arguments, through go-redis EvalSha), "hset" (no guard) and
// "guard-best-effort".
func newBenchEnv(b *testing.B) *benchEnv {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := b.Context()
	const ttl = time.Hour
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("order:order:%d:base", i)
	}
	g := guard.New(rdb, nsOrder, guard.Options{TTL: ttl})
	be := guard.New(rdb, nsOrder, guard.Options{TTL: ttl, BestEffort: true})
	sha := guard.ScriptSHA()
	if err := rdb.ScriptLoad(ctx, guard.Script()).Err(); err != nil {
		b.Fatal(err)
	}
	// Claim every key first so all variants measure the steady state.
	for _, k := range keys {
		if _, err := g.Set(ctx, k, "amount", "0"); err != nil {
			b.Fatal(err)
		}
	}
	ttlMS := ttl.Milliseconds()
	env := &benchEnv{keys: keys}
	env.single = map[string]func(key string) error{
		"guard": func(key string) error {
			_, err := g.Set(ctx, key, "amount", "99")
			return err
		},
		"raw-evalsha": func(key string) error {
			return rdb.EvalSha(ctx, sha, []string{key}, "set", nsOrder, ttlMS, "amount", "99").Err()
		},
		"hset": func(key string) error {
			return rdb.HSet(ctx, key, "amount", "99").Err()
		},
		"guard-best-effort": func(key string) error {
			_, err := be.Set(ctx, key, "amount", "99")
			return err
		},
	}
	env.batch = map[string]func(keys []string) error{
		"guard": func(keys []string) error {
			ops := make([]guard.SetOp, len(keys))
			for i, k := range keys {
				ops[i] = guard.SetOp{Key: k, Field: "amount", Value: "99"}
			}
			_, err := g.SetPipelined(ctx, ops)
			return err
		},
		"raw-evalsha": func(keys []string) error {
			pipe := rdb.Pipeline()
			for _, k := range keys {
				pipe.EvalSha(ctx, sha, []string{k}, "set", nsOrder, ttlMS, "amount", "99")
			}
			_, err := pipe.Exec(ctx)
			return err
		},
		"hset": func(keys []string) error {
			pipe := rdb.Pipeline()
			for _, k := range keys {
				pipe.HSet(ctx, k, "amount", "99")
			}
			_, err := pipe.Exec(ctx)
			return err
		},
		"guard-best-effort": func(keys []string) error {
			ops := make([]guard.SetOp, len(keys))
			for i, k := range keys {
				ops[i] = guard.SetOp{Key: k, Field: "amount", Value: "99"}
			}
			_, err := be.SetPipelined(ctx, ops)
			return err
		},
	}
	return env
}

var benchVariants = []string{"guard", "raw-evalsha", "hset", "guard-best-effort"}

const benchBatch = 100

// BenchmarkSet compares, side by side on one server, a guarded one-field
// write with raw EVALSHA of the same script through go-redis (the target:
// within 10%) and with a plain HSET (the cost of the guard), each
// unpipelined and in pipelines of 100. ns/op is per write in every case.
//
//	go test -run '^$' -bench BenchmarkSet -benchmem -count 5 ./guard
func BenchmarkSet(b *testing.B) {
	env := newBenchEnv(b)
	keys := env.keys
	for _, name := range benchVariants {
		set := env.single[name]
		b.Run("unpipelined/"+name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := set(keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	for _, name := range benchVariants {
		run := env.batch[name]
		b.Run(fmt.Sprintf("pipelined%d/%s", benchBatch, name), func(b *testing.B) {
			b.ReportAllocs()
			// ns/op is per write: b.N writes in batches of benchBatch.
			for i := 0; i < b.N; i += benchBatch {
				start := i % len(keys)
				n := min(benchBatch, b.N-i, len(keys)-start)
				if err := run(keys[start : start+n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetPaired runs the variants interleaved (one write, or one batch
// of 100, of each per iteration, in rotating order) and reports each one's
// ns per write plus the ratios. On a shared, noisy machine this pairs the
// measurements in time, so load from elsewhere hits all variants alike.
//
//	go test -run '^$' -bench BenchmarkSetPaired -count 5 ./guard
func BenchmarkSetPaired(b *testing.B) {
	env := newBenchEnv(b)
	keys := env.keys
	variants := benchVariants[:3] // guard, raw-evalsha, hset
	report := func(b *testing.B, total []time.Duration, writes int) {
		per := make([]float64, len(total))
		for v, d := range total {
			per[v] = float64(d.Nanoseconds()) / float64(writes)
			b.ReportMetric(per[v], variants[v]+"-ns/write")
		}
		b.ReportMetric(per[0]/per[1], "guard/raw")
		b.ReportMetric(per[0]/per[2], "guard/hset")
	}
	b.Run("unpipelined", func(b *testing.B) {
		total := make([]time.Duration, len(variants))
		i := 0
		for b.Loop() {
			key := keys[i%len(keys)]
			for j := range variants {
				v := (i + j) % len(variants)
				start := time.Now()
				if err := env.single[variants[v]](key); err != nil {
					b.Fatal(err)
				}
				total[v] += time.Since(start)
			}
			i++
		}
		report(b, total, i)
	})
	b.Run(fmt.Sprintf("pipelined%d", benchBatch), func(b *testing.B) {
		total := make([]time.Duration, len(variants))
		i := 0
		for b.Loop() {
			start := (i * benchBatch) % len(keys)
			batch := keys[start : start+benchBatch]
			for j := range variants {
				v := (i + j) % len(variants)
				t0 := time.Now()
				if err := env.batch[variants[v]](batch); err != nil {
					b.Fatal(err)
				}
				total[v] += time.Since(t0)
			}
			i++
		}
		report(b, total, i*benchBatch)
	})
}
