package report_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// zeroBytes is a memory figure of zero: what a report must not show for
// memory it could not read.
var zeroBytes = regexp.MustCompile(`(^|[^0-9.,])0 B\b`)

// TestMemoryNotMeasured: a report none of whose keys' memory could be read
// (a server without MEMORY USAGE) says "memory not measured" in text and
// HTML, orders its tables by keys, and shows no "0 B"; the same report with
// memory shows its figures.
func TestMemoryNotMeasured(t *testing.T) {
	mk := func(bytes int64) *report.Report {
		r := &report.Report{Source: report.Source{Kind: "redis", Target: "redis://127.0.0.1:6379", Nodes: 1}, Registry: "keyguard.yaml", Complete: true}
		for i, name := range []string{"promo:sku:{skuId:int}", "order:order:{orderId:int}:base", "cache:{id}"} {
			g := report.Group{Name: name, Kind: report.KindTemplate, Domain: strings.Split(name, ":")[0], Owner: "team", Keys: int64(7 - 2*i), Bytes: bytes * int64(7-2*i),
				Types: map[string]int64{"hash": int64(7 - 2*i)}, NoTTL: 1}
			r.Groups = append(r.Groups, g)
			r.Summary.Keys += g.Keys
			r.Summary.Bytes += g.Bytes
			r.TopKeys = append(r.TopKeys, report.TopKey{Key: strings.Split(name, ":")[0] + ":1", Type: "hash", Bytes: bytes, Template: name})
		}
		if bytes == 0 {
			r.Summary.BytesUnknown = r.Summary.Keys
			r.Notes = []string{"memory of 15 keys unknown: not included in bytes"}
		}
		r.Prefixes = report.PrefixTree(r.Groups, ':', report.DefaultPrefixDepth)
		return r
	}
	for _, bytes := range []int64{0, 4096} {
		r := mk(bytes)
		var text, html strings.Builder
		if err := r.WriteText(&text, report.TextOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		out := text.String()
		if bytes == 0 {
			if !r.MemoryUnmeasured() {
				t.Fatal("MemoryUnmeasured() = false for a report without memory figures")
			}
			for _, want := range []string{"15 keys, memory not measured", "keys by domain (memory not measured)", "templates and families by keys (memory not measured)"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in\n%s", want, out)
				}
			}
			if zeroBytes.MatchString(out) || strings.Contains(out, "largest keys") {
				t.Errorf("zero memory shown for memory not measured:\n%s", out)
			}
			if !strings.Contains(html.String(), "not measured") || zeroBytes.MatchString(html.String()) {
				t.Errorf("the HTML page shows 0 B or does not say memory was not measured")
			}
			continue
		}
		if r.MemoryUnmeasured() || !strings.Contains(out, "15 keys, 60.0 KiB") || !strings.Contains(out, "memory by domain") || !strings.Contains(out, "largest keys") {
			t.Errorf("a report with memory:\n%s", out)
		}
	}
}
