package report_test

import (
	"fmt"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// BenchmarkPrefixTreeFamilies: the prefix tree of a report with 10,000
// inferred families (the most a report lists), which reads each name's
// segments. Parsed as templates to be matched, each name cost ~60 µs of
// automata the tree never used: 0.6 s a report.
func BenchmarkPrefixTreeFamilies(b *testing.B) {
	groups := make([]report.Group, 10000)
	for i := range groups {
		groups[i] = report.Group{Name: fmt.Sprintf("team%c%c:item%d:{id:int}:{attr}", 'a'+i%26, 'a'+i/26%26, i), Kind: report.KindPrefix, Keys: int64(1 + i%7), Bytes: int64(100 * (1 + i%7))}
	}
	b.ReportAllocs()
	for b.Loop() {
		if p := report.PrefixTree(groups, ':', report.DefaultPrefixDepth); len(p) == 0 {
			b.Fatal("no prefixes")
		}
	}
}
