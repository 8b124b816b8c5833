package dashboard

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/treemap"
)

// Charts are drawn here as SVG, on the server: no script, no network.
// Colours are presentation attributes, not style attributes, so that the
// page's Content-Security-Policy (no inline styles) allows them.

// palette is the domains' colours, in order of memory.
var palette = [...]string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#86bcb6", "#d37295"}

// colorUnregistered marks keys that match no template.
const colorUnregistered = "#8f8f8f"

// svgBuilder writes SVG text; attr and text values are escaped.
type svgBuilder struct{ strings.Builder }

func (b *svgBuilder) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

func esc(s string) string { return html.EscapeString(s) }

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return trimZero(strconv.FormatFloat(v, 'f', 1, 64))
}

func (b *svgBuilder) html() template.HTML { return template.HTML(b.String()) } // #nosec: every value written is escaped

// rect is a rectangle of a layout.
type rect = treemap.Rect

func squarify(values []float64, r rect) []rect { return treemap.Squarify(values, r) }

// tmItem is one rectangle of the treemap: a template, an inferred family,
// or the small ones of a domain folded together.
type tmItem struct {
	Name, Href, Tip string
	Kind            string // template|family|rest
	Keys, Bytes     int64
	Size            float64
}

// tmDomain is one domain of the treemap and its items, largest first.
type tmDomain struct {
	Name, Tip string
	Amount    string // its size as the label says it
	Color     string
	Size      float64
	Items     []tmItem
}

const (
	tmW       = 1000.0
	tmH       = 440.0
	tmBand    = 17.0 // the domain's name above its templates
	tmMinArea = 12.0 // smaller items are folded into one per domain
	charW     = 6.3  // average width of a character at 11px
)

// treemapSVG draws domains and their items, areas proportional to Size.
func treemapSVG(doms []tmDomain, by string) template.HTML {
	var b svgBuilder
	b.f(`<svg class="treemap" viewBox="0 0 %s %s" role="img" aria-label="%s" data-by="%s">`, num(tmW), num(tmH), esc("treemap of "+by+" by domain and template"), esc(by))
	sizes := make([]float64, len(doms))
	var total float64
	for i, d := range doms {
		sizes[i] = d.Size
		total += d.Size
	}
	if total <= 0 {
		b.f(`<text x="%s" y="%s" class="empty" text-anchor="middle">no keys</text></svg>`, num(tmW/2), num(tmH/2))
		return b.html()
	}
	for i, dr := range squarify(sizes, rect{X: 0, Y: 0, W: tmW, H: tmH}) {
		d := doms[i]
		if dr.W <= 0 || dr.H <= 0 {
			continue
		}
		b.f(`<g class="tm-domain" data-domain="%s">`, esc(d.Name))
		b.f(`<rect class="tm-frame" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
			num(dr.X), num(dr.Y), num(dr.W), num(dr.H), d.Color, esc(d.Tip))
		inner := rect{X: dr.X + 1, Y: dr.Y + 1, W: dr.W - 2, H: dr.H - 2}
		if dr.H >= 2.5*tmBand && dr.W >= 48 {
			label := d.Name
			if d.Amount != "" && float64(len([]rune(d.Name))+len(d.Amount)+3)*charW < dr.W-8 {
				label += " · " + d.Amount
			}
			b.f(`<text class="tm-dlabel" x="%s" y="%s">%s</text>`, num(dr.X+4), num(dr.Y+12.5), esc(fitLabel(label, dr.W-8)))
			inner.Y += tmBand - 1
			inner.H -= tmBand - 1
		}
		treemapItems(&b, d, inner)
		b.f(`</g>`)
	}
	b.f(`</svg>`)
	return b.html()
}

func treemapItems(b *svgBuilder, d tmDomain, r rect) {
	if r.W <= 0 || r.H <= 0 {
		return
	}
	items := foldSmall(d.Items, r.W*r.H)
	sizes := make([]float64, len(items))
	for i, it := range items {
		sizes[i] = it.Size
	}
	for i, ir := range squarify(sizes, r) {
		it := items[i]
		if ir.W <= 0 || ir.H <= 0 {
			continue
		}
		fill := shade(d.Color, i)
		if it.Href != "" {
			b.f(`<a href="%s">`, esc(it.Href))
		}
		b.f(`<rect class="tm-item" x="%s" y="%s" width="%s" height="%s" fill="%s" data-name="%s" data-kind="%s" data-keys="%d" data-bytes="%d"><title>%s</title></rect>`,
			num(ir.X), num(ir.Y), num(ir.W), num(ir.H), fill, esc(it.Name), it.Kind, it.Keys, it.Bytes, esc(it.Tip))
		if ir.W >= 44 && ir.H >= 15 {
			ink := inkOn(fill)
			b.f(`<text class="tm-label" x="%s" y="%s" fill="%s">%s</text>`, num(ir.X+4), num(ir.Y+12), ink, esc(fitLabel(it.Name, ir.W-8)))
			if ir.H >= 29 {
				amount := fmtBytes(it.Bytes)
				if it.Bytes == 0 {
					amount = fmtCount(it.Keys) + " keys"
				}
				b.f(`<text class="tm-amount" x="%s" y="%s" fill="%s">%s</text>`, num(ir.X+4), num(ir.Y+25), ink, esc(fitLabel(amount, ir.W-8)))
			}
		}
		if it.Href != "" {
			b.f(`</a>`)
		}
	}
}

// foldSmall folds the items whose rectangle would be under tmMinArea into
// one "rest" item, so a domain of 1,000 templates stays readable.
func foldSmall(items []tmItem, area float64) []tmItem {
	var total float64
	for _, it := range items {
		total += it.Size
	}
	if total <= 0 {
		return nil
	}
	min := tmMinArea * total / area
	var out []tmItem
	rest := tmItem{Kind: "rest"}
	n := 0
	for _, it := range items {
		if it.Size <= 0 {
			continue
		}
		if it.Size >= min {
			out = append(out, it)
			continue
		}
		n++
		rest.Size += it.Size
		rest.Keys += it.Keys
		rest.Bytes += it.Bytes
	}
	if n == 1 && rest.Size > 0 { // one item alone is not worth a fold
		for _, it := range items {
			if it.Size > 0 && it.Size < min {
				return append(out, it)
			}
		}
	}
	if n > 0 {
		rest.Name = fmt.Sprintf("%d smaller", n)
		rest.Tip = fmt.Sprintf("%d smaller items: %s, %s keys", n, fmtBytes(rest.Bytes), fmtCount(rest.Keys))
		out = append(out, rest)
	}
	return out
}

// fitLabel cuts s to about width pixels.
func fitLabel(s string, width float64) string {
	n := int(width / charW)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	return string(r[:n-1]) + "…"
}

// shade lightens a colour a little more for each later item, so that
// neighbours of one domain stay apart.
func shade(hex string, i int) string {
	f := []float64{0, 0.18, 0.32, 0.1, 0.25, 0.4}[i%6]
	r, g, b := rgb(hex)
	mix := func(c int) int { return int(math.Round(float64(c) + (255-float64(c))*f)) }
	return fmt.Sprintf("#%02x%02x%02x", mix(r), mix(g), mix(b))
}

// rgb reads a colour #rrggbb.
func rgb(hex string) (r, g, b int) {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	return int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)
}

// inkOn is the text colour that reads on a fill.
func inkOn(fill string) string {
	r, g, b := rgb(fill)
	if 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) > 150 {
		return "#1d232a"
	}
	return "#ffffff"
}

// series is one line of a chart, a value per time of the chart.
type series struct {
	Name  string
	Color string
	Vals  []float64
}

// lineChart draws series over times; fmtY writes the axis values.
func lineChart(label string, times []time.Time, ss []series, w, h float64, fmtY func(float64) string, marks []time.Time) template.HTML {
	const left, right, top, bottom = 62.0, 12.0, 8.0, 20.0
	var b svgBuilder
	b.f(`<svg class="chart" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" data-points="%d">`, num(w), num(h), num(w), num(h), esc(label), len(times))
	pw, ph := w-left-right, h-top-bottom
	top_ := 0.0
	for _, s := range ss {
		for _, v := range s.Vals {
			top_ = max(top_, v)
		}
	}
	ymax := niceCeil(top_)
	for i := range 3 {
		v := ymax * float64(i) / 2
		y := top + ph - ph*float64(i)/2
		b.f(`<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, num(left), num(w-right), num(y), num(y))
		b.f(`<text class="axis" x="%s" y="%s" text-anchor="end">%s</text>`, num(left-5), num(y+3.5), esc(fmtY(v)))
	}
	if len(times) == 0 {
		b.f(`<text class="empty" x="%s" y="%s" text-anchor="middle">no audit yet</text></svg>`, num(left+pw/2), num(top+ph/2))
		return b.html()
	}
	t0, t1 := times[0], times[len(times)-1]
	span := t1.Sub(t0)
	xAt := func(i int) float64 {
		if span <= 0 {
			return left + pw/2
		}
		return left + pw*float64(times[i].Sub(t0))/float64(span)
	}
	yAt := func(v float64) float64 {
		if ymax <= 0 {
			return top + ph
		}
		return top + ph - ph*v/ymax
	}
	layout := "15:04"
	if span > 20*time.Hour {
		layout = "01-02 15:04"
	}
	b.f(`<text class="axis" x="%s" y="%s" text-anchor="start">%s</text>`, num(left), num(h-5), t0.UTC().Format(layout))
	if span > 0 {
		b.f(`<text class="axis" x="%s" y="%s" text-anchor="end">%s</text>`, num(w-right), num(h-5), t1.UTC().Format(layout))
	}
	for _, m := range marks {
		if m.Before(t0) || m.After(t1) {
			continue
		}
		x := left + pw/2
		if span > 0 {
			x = left + pw*float64(m.Sub(t0))/float64(span)
		}
		b.f(`<line class="mark" x1="%s" x2="%s" y1="%s" y2="%s"><title>registry changed at %s: from here the lines move by the registry too</title></line>`,
			num(x), num(x), num(top), num(top+ph), m.UTC().Format("2006-01-02 15:04"))
	}
	for _, s := range ss {
		var pts strings.Builder
		for i, v := range s.Vals {
			fmt.Fprintf(&pts, "%s,%s ", num(xAt(i)), num(yAt(v)))
		}
		b.f(`<polyline class="line" points="%s" stroke="%s" fill="none" data-series="%s"><title>%s</title></polyline>`,
			strings.TrimSpace(pts.String()), s.Color, esc(s.Name), esc(s.Name))
		if n := len(s.Vals); n > 0 {
			b.f(`<circle cx="%s" cy="%s" r="2.6" fill="%s"><title>%s: %s</title></circle>`, num(xAt(n-1)), num(yAt(s.Vals[n-1])), s.Color, esc(s.Name), esc(fmtY(s.Vals[n-1])))
		}
	}
	b.f(`</svg>`)
	return b.html()
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// barSVG is a thin horizontal bar filled to frac.
func barSVG(frac float64, class string) template.HTML {
	frac = max(min(frac, 1), 0)
	var b svgBuilder
	b.f(`<svg class="bar %s" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect class="bar-bg" width="100" height="8"/><rect class="bar-fg" width="%s" height="8"/></svg>`, esc(class), num(frac*100))
	return b.html()
}

// histogramSVG draws the TTL histogram: keys per bar, their memory in the
// tooltips unless noMemory (none was measured).
func histogramSVG(bars []TTLBar, noMemory bool) template.HTML {
	const w, h, top, bottom = 520.0, 190.0, 16.0, 34.0
	var b svgBuilder
	b.f(`<svg class="chart histogram" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="keys by remaining TTL">`, num(w), num(h), num(w), num(h))
	var hi int64
	for _, x := range bars {
		hi = max(hi, x.Keys)
	}
	if len(bars) == 0 || hi == 0 {
		b.f(`<text class="empty" x="%s" y="%s" text-anchor="middle">no TTL data</text></svg>`, num(w/2), num(h/2))
		return b.html()
	}
	slot := w / float64(len(bars))
	ph := h - top - bottom
	for i, x := range bars {
		bh := ph * float64(x.Keys) / float64(hi)
		if x.Keys > 0 {
			bh = max(bh, 1.5)
		}
		cx := slot*float64(i) + slot/2
		class := "hbar"
		switch x.Label {
		case "no TTL":
			class = "hbar hbar-none"
		case "unknown":
			class = "hbar hbar-unknown"
		}
		tip := esc(x.Label) + ": " + fmtCount(x.Keys) + " keys"
		if !noMemory {
			tip += ", " + fmtBytes(x.Bytes)
		}
		b.f(`<rect class="%s" x="%s" y="%s" width="%s" height="%s" data-keys="%d"><title>%s</title></rect>`,
			class, num(cx-slot*0.36), num(top+ph-bh), num(slot*0.72), num(bh), x.Keys, tip)
		if x.Keys > 0 {
			b.f(`<text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`, num(cx), num(top+ph-bh-4), fmtShort(float64(x.Keys)))
		}
		b.f(`<text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`, num(cx), num(h-bottom+14), esc(x.Label))
	}
	b.f(`</svg>`)
	return b.html()
}

// ttlRangeSVG draws a template's remaining TTLs on a log axis: the span
// from the shortest to the longest, the median, and the declared TTL.
func ttlRangeSVG(t *TemplateRow) template.HTML {
	const w, h, left, right, axisY = 640.0, 104.0, 16.0, 16.0, 66.0
	var b svgBuilder
	b.f(`<svg class="chart ttlrange" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="remaining TTL of the keys">`, num(w), num(h), num(w), num(h))
	declared := t.TTL.Seconds() + t.Jitter.Seconds()
	hiSec := max(float64(t.TTLMax), declared, 60) * 3
	hi := math.Log10(hiSec) // the axis runs from 1 s to hiSec
	x := func(sec float64) float64 {
		return left + (w-left-right)*math.Log10(max(sec, 1))/hi
	}
	anchor := func(px float64) string {
		switch {
		case px > w-70:
			return "end"
		case px < 70:
			return "start"
		}
		return "middle"
	}
	b.f(`<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, num(left), num(w-right), num(axisY), num(axisY))
	for _, tk := range []struct {
		s     float64
		label string
	}{{1, "1s"}, {10, "10s"}, {60, "1m"}, {600, "10m"}, {3600, "1h"}, {6 * 3600, "6h"}, {86400, "1d"}, {7 * 86400, "7d"}, {30 * 86400, "30d"}, {365 * 86400, "1y"}} {
		if tk.s > hiSec {
			break
		}
		b.f(`<line class="tick" x1="%s" x2="%s" y1="%s" y2="%s"/><text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`,
			num(x(tk.s)), num(x(tk.s)), num(axisY), num(axisY+4), num(x(tk.s)), num(axisY+16), tk.label)
	}
	dx := x(declared)
	if t.TTL > 0 {
		label := "declared " + fmtDur(t.TTL)
		if t.Jitter > 0 {
			label += "+" + fmtDur(t.Jitter)
		}
		b.f(`<line class="ttl-declared" x1="%s" x2="%s" y1="%s" y2="%s"/><text class="axis declared" x="%s" y="%s" text-anchor="%s">%s</text>`,
			num(dx), num(dx), num(16), num(axisY), num(dx), num(12), anchor(dx), esc(label))
	}
	if t.WithTTL > 0 {
		x0, x1 := x(float64(t.TTLMin)), x(float64(t.TTLMax))
		b.f(`<rect class="ttl-span" x="%s" y="%s" width="%s" height="14" data-min="%d" data-max="%d"><title>%s to %s remaining</title></rect>`,
			num(x0), num(axisY-22), num(max(x1-x0, 3)), t.TTLMin, t.TTLMax, fmtSec(t.TTLMin), fmtSec(t.TTLMax))
		px := x(float64(t.TTLP50))
		ly := axisY - 28.0
		if t.TTL > 0 && math.Abs(px-dx) < 90 {
			ly = axisY + 32 // clear of the declared TTL's label
		}
		b.f(`<line class="ttl-p50" x1="%s" x2="%s" y1="%s" y2="%s"/><text class="axis" x="%s" y="%s" text-anchor="%s">median %s</text>`,
			num(px), num(px), num(axisY-25), num(axisY-5), num(px), num(ly), anchor(px), fmtSec(t.TTLP50))
	} else {
		b.f(`<text class="empty" x="%s" y="%s" text-anchor="middle">no key of this template has a TTL</text>`, num(w/2), num(axisY-14))
	}
	b.f(`</svg>`)
	return b.html()
}
