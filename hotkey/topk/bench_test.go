package topk

import (
	"testing"
)

// BenchmarkObserve is the cost of one observed key: a Zipf(1.1) stream
// over 100,000 keys (64 Ki draws, replayed; the keys' bytes mostly miss
// the CPU caches) and over 1,000 keys (they stay cached, as the key a
// hook just saw does), from one goroutine and from all (RunParallel), and
// one key hammered from all goroutines (its buckets shared between
// cores). cpu-ns/op is the process's CPU time per observation, steadier
// than wall time on a shared machine.
func BenchmarkObserve(b *testing.B) {
	const n = 1 << 16
	small, _ := zipfStream(1, 1.1, 1000, n)
	b.Run("zipf-1k-keys-serial", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		b.ReportAllocs()
		cpu0 := processCPU()
		i := 0
		for b.Loop() {
			sk.Observe(small[i&(n-1)])
			i++
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	stream, _ := zipfStream(1, 1.1, 100_000, n)
	b.Run("zipf-serial", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		b.ReportAllocs()
		cpu0 := processCPU()
		i := 0
		for b.Loop() {
			sk.Observe(stream[i&(n-1)])
			i++
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("zipf-parallel", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		b.ReportAllocs()
		cpu0 := processCPU()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				sk.Observe(stream[i&(n-1)])
				i += 7
			}
		})
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("one-key-parallel", func(b *testing.B) {
		sk := New(Options{K: 32, Seed: 1})
		key := "cache:product:detail:P1001"
		b.ReportAllocs()
		cpu0 := processCPU()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sk.Observe(key)
			}
		})
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkHash is the key hash alone, for comparison.
func BenchmarkHash(b *testing.B) {
	const n = 1 << 16
	stream, _ := zipfStream(1, 1.1, 100_000, n)
	var s uint64
	i := 0
	cpu0 := processCPU()
	for b.Loop() {
		s += hashString(1, stream[i&(n-1)])
		i++
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	_ = s
}
