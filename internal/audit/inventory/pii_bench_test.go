package inventory_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// BenchmarkAddUnregisteredLongIDs: unregistered keys whose IDs are long
// enough to be personal data (19-digit snowflakes, 11-digit order
// numbers): each is inferred again for its values and judged with its
// family's evidence (pii.go).
func BenchmarkAddUnregisteredLongIDs(b *testing.B) {
	reg := loadReg(b)
	for _, c := range []struct {
		name string
		key  func(i int) string
	}{
		{"snowflake", func(i int) string {
			return "legacy:feed:" + strconv.FormatUint(1_790_000_000_000_000_000+uint64(i)*4_194_304, 10) + ":items"
		}},
		{"order11", func(i int) string { return "legacy:order:" + strconv.Itoa(13800000000+i) }},
		{"short", func(i int) string { return "legacy:cart:" + strconv.Itoa(100000+i) + ":items" }},
	} {
		b.Run(c.name, func(b *testing.B) {
			keys := make([]string, 1<<16)
			for i := range keys {
				keys[i] = c.key(i)
			}
			agg := inventory.New(reg, inventory.Options{})
			r := &inventory.Record{Node: "127.0.0.1:6379", Type: "list", Bytes: 200, Elements: 6, TTL: 30 * time.Minute, Freq: -1}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Key = keys[i&(1<<16-1)]
				add(agg, r)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
