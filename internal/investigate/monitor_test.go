package investigate

import (
	"testing"

	"github.com/keyguard/keyguard/internal/monitor"
)

// BenchmarkCaptureLine is the work of the capture loop per MONITOR line:
// parse, then attribute (a key of the investigation, and one that is not).
func BenchmarkCaptureLine(b *testing.B) {
	lines := []string{
		`1796067219.685909 [0 127.0.0.1:60708] "hset" "promo:sku:1001" "couponAmount" "10" "promoTotal" "30"`,
		`1796067219.685910 [0 127.0.0.1:60709] "set" "cache:product:detail:88" "{\"name\":\"x\",\"price\":1}" "EX" "600"`,
	}
	bytes := 0
	for _, l := range lines {
		bytes += len(l) + 3
	}
	b.SetBytes(int64(bytes / len(lines)))
	a := NewAttributor(0, func(k string) bool { return hasSegment(k, "1001", ':') })
	i := 0
	for b.Loop() {
		l, err := monitor.Parse(lines[i%2])
		if err != nil {
			b.Fatal(err)
		}
		a.Feed(&l)
		i++
	}
}
