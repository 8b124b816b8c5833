package inventory_test

import (
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
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
			add(agg, r)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	// Values long enough to hold personal data: each is matched and judged
	// (pii.go), which short IDs are not.
	b.Run("registered-snowflake-ids", func(b *testing.B) {
		long := make([]string, 4096)
		for i := range long {
			long[i] = "order:order:" + strconv.FormatUint(1_790_000_000_000_000_000+uint64(i)*4_194_304, 10) + ":base"
		}
		agg := inventory.New(reg, inventory.Options{})
		r := &inventory.Record{Node: "127.0.0.1:6379", Type: "hash", Bytes: 200, Elements: 6, TTL: 30 * time.Minute, Freq: 5}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Key = long[i&4095]
			add(agg, r)
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
			add(agg, r)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("unregistered", func(b *testing.B) {
		ukeys := make([]string, 1<<16) // more than the Checker remembers: each key is new to it, as in a walk
		for i := range ukeys {
			ukeys[i] = "legacy:cart:" + strconv.Itoa(100000+i) + ":items"
		}
		agg := inventory.New(reg, inventory.Options{})
		r := &inventory.Record{Node: "127.0.0.1:6379", Type: "list", Bytes: 200, Elements: 6, TTL: 30 * time.Minute, Freq: -1}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Key = ukeys[i&(1<<16-1)]
			add(agg, r)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	}) // What the live walker does for each unregistered string: Classify,
	// then Add; the values are not JSON, so no field names come back.
	b.Run("unregistered-needsfields", func(b *testing.B) {
		ukeys := make([]string, 1<<16)
		for i := range ukeys {
			ukeys[i] = "tmp_data_2024032115" + strconv.Itoa(1000+i%9000) + "_" + strconv.Itoa(i)
		}
		agg := inventory.New(reg, inventory.Options{})
		r := &inventory.Record{Node: "127.0.0.1:6379", Type: "string", Bytes: 60, Elements: 1, TTL: -1, Freq: -1}
		asked := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Key = ukeys[i&(1<<16-1)]
			cl := agg.Classify(r.Key)
			if cl.Fields {
				asked++
			}
			agg.Add(r, cl)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(asked)/float64(b.N), "asked/op")
	})
}

// BenchmarkReportJSON builds the report of an audit with every finding
// list at its cap (10,000 per rule, 5 rules) and writes its JSON.
func BenchmarkReportJSON(b *testing.B) {
	agg := inventory.New(loadReg(b), inventory.Options{})
	for i := range 30_000 {
		add(agg, rec(fmt.Sprintf("order:order:%d:base", i), ttl(-1), size(int64(i), 1)))
		add(agg, rec(fmt.Sprintf("user_%d_token", i), typ("string"), size(int64(i), 1), ttl(-1)))
		add(agg, rec(fmt.Sprintf("order:order:%d:base", 100000+i), typ("string"), size(int64(2<<20+i), 1)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := agg.Report(meta())
		if err := rep.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(len(rep.Findings)), "findings")
		}
	}
}
