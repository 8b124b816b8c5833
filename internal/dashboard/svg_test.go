package dashboard

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestSquarify: the rectangles tile the area, each in proportion to its
// value, none overlapping, and equal values make squares.
// TestTreemapFolds: a domain of a thousand templates keeps its large ones
// and folds the rest into one rectangle that carries their totals.
func TestTreemapFolds(t *testing.T) {
	var items []tmItem
	var keys int64
	for i := range 1000 {
		size := 1.0
		if i < 5 {
			size = 100000
		}
		items = append(items, tmItem{Name: "t" + string(rune('a'+i%26)), Kind: "template", Size: size, Bytes: int64(size), Keys: 1})
		keys++
	}
	out := foldSmall(items, tmW*tmH)
	if len(out) != 6 || out[5].Kind != "rest" || out[5].Keys != 995 || out[5].Name != "995 smaller" {
		t.Fatalf("folded: %d items, last %+v", len(out), out[len(out)-1])
	}
	svg := string(treemapSVG([]tmDomain{{Name: "d", Color: palette[0], Size: 500995, Items: items}}, "memory"))
	if n := strings.Count(svg, `class="tm-item"`); n != 6 {
		t.Errorf("%d rectangles", n)
	}
}

func TestTreemapEscapes(t *testing.T) {
	svg := string(treemapSVG([]tmDomain{{Name: `<d&>`, Color: palette[0], Size: 1, Items: []tmItem{{Name: `"><script>x</script>`, Href: `/t?a=1&b="`, Size: 1, Bytes: 1}}}}, "memory"))
	if strings.Contains(svg, "<script>") || strings.Contains(svg, `<d&>`) || !strings.Contains(svg, "&lt;d&amp;&gt;") {
		t.Errorf("not escaped: %s", svg)
	}
}

func TestLineChart(t *testing.T) {
	times := []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}
	svg := string(lineChart("keys", times, []series{{Name: "keys", Color: "#000", Vals: []float64{0, 50, 100}}}, 300, 120, fmtShort, nil))
	if !strings.Contains(svg, `data-points="3"`) || !strings.Contains(svg, "12:00") || !strings.Contains(svg, "14:00") || !strings.Contains(svg, ">100<") {
		t.Errorf("chart: %s", svg)
	}
	// The line goes from the bottom left to the top right of the plot.
	if !strings.Contains(svg, `points="62,100 175,54 288,8"`) {
		t.Errorf("points: %s", svg)
	}
	if one := string(lineChart("keys", times[:1], []series{{Vals: []float64{7}}}, 300, 120, fmtShort, nil)); !strings.Contains(one, "<circle") {
		t.Errorf("a single audit shows no dot: %s", one)
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 7: 10, 12: 20, 210: 250, 999: 1000, 1001: 2000} {
		if got := niceCeil(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceCeil(%g) = %g, want %g", in, got, want)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtCount(1234567), "1,234,567"}, {fmtCount(-1000), "-1,000"}, {fmtCount(12), "12"},
		{fmtBytes(512), "512 B"}, {fmtBytes(1536), "1.5 KiB"}, {fmtBytes(300 << 20), "300.0 MiB"},
		{fmtDur(90 * time.Second), "1m30s"}, {fmtDur(26 * time.Hour), "1d2h"}, {fmtDur(50 * time.Hour), "2d2h"},
		{pct(1, 3), "33%"}, {pct(1, 2000), "<0.1%"}, {pct(0, 5), "0%"},
		{displayKey("a\x00b\xff", 0), `a\x00b\xff`}, {displayKey("订单:1", 0), "订单:1"}, {displayKey("k", 2048), "k… (2,048 bytes)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
