package inventory_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/keyguard/keyguard/inventory"
)

// BenchmarkAdd measures the per-record cost of the aggregation, the part
// of an audit that runs once per key.
func BenchmarkAdd(b *testing.B) {
	reg := loadReg(b)
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = "order:order:" + strconv.Itoa(100000+i) + ":base"
	}
	b.Run("registered-clean", func(b *testing.B) {
		agg := inventory.New(reg, inventory.Options{})
		r := &inventory.Record{Node: "127.0.0.1:6379", Type: "hash", Bytes: 200, Elements: 6, TTL: 30 * time.Minute, Freq: 5}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Key = keys[i&4095]
			agg.Add(r)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("registered-no-ttl", func(b *testing.B) {
		agg := inventory.New(reg, inventory.Options{})
		r := &inventory.Record{Node: "127.0.0.1:6379", Type: "hash", Bytes: 200, Elements: 6, TTL: -1, Freq: -1}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Key = keys[i&4095]
			agg.Add(r)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("unregistered", func(b *testing.B) {
		ukeys := make([]string, 4096)
		for i := range ukeys {
			ukeys[i] = "legacy:cart:" + strconv.Itoa(100000+i) + ":items"
		}
		agg := inventory.New(reg, inventory.Options{})
		r := &inventory.Record{Node: "127.0.0.1:6379", Type: "list", Bytes: 200, Elements: 6, TTL: 30 * time.Minute, Freq: -1}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Key = ukeys[i&4095]
			agg.Add(r)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
