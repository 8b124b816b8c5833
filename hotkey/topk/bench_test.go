package topk

import (
	"strconv"
	"testing"
)

// BenchmarkObserve is the cost of one observed key on a Zipf(1.1) stream
// of 100,000 keys: single goroutine, and all cores (RunParallel).
func BenchmarkObserve(b *testing.B) {
	stream, _ := zipfStream(1, 1.1, 100_000, 1<<20)
	b.Run("serial", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			sk.Observe(stream[i&(1<<20-1)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				sk.Observe(stream[i&(1<<20-1)])
				i += 7
			}
		})
	})
	b.Run("one-hot-key", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		key := "cache:product:detail:P" + strconv.Itoa(1001)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sk.Observe(key)
			}
		})
	})
}
