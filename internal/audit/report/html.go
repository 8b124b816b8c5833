package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/treemap"
)

// HTML report sizes: the file stays small enough to open anywhere; the
// JSON has everything.
const (
	htmlFindings = 1000
	htmlGroups   = 200
	htmlPrefixes = 100
	htmlTreemap  = 300
	treemapW     = 960.0
	treemapH     = 480.0
)

// WriteHTML writes a self-contained HTML page (inline CSS and SVG, no
// script, no network): summary, a memory treemap by domain and template,
// the TTL histogram, findings by rule, the findings table, groups and the
// largest keys.
func (r *Report) WriteHTML(w io.Writer) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"bytes": r.bytesOrDash, "count": fmtCount, "show": show, "showKey": showKey, "ttl": ttlText, "ms": fmtMS,
		"sec": fmtSec, "approx": func(s int64) string { return fmtApprox(secDur(s)) }, "dash": human.OrDash, "doc": r.docURL, "plural": human.Plural[int64], "f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
	}).Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	// The page is bounded (htmlFindings, htmlGroups): render it whole
	// first, so that a failure leaves no half page behind.
	var b bytes.Buffer
	if err := t.Execute(&b, r.htmlView()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

type htmlView struct {
	R            *Report
	Est          string
	Domains      []tmDomain
	TreemapBy    string
	TTL          []ttlBar
	Rules        []ruleRow
	Findings     []Finding
	FindingsMore int64
	Groups       []Group
	GroupsMore   int64
	Prefixes     []Prefix
	PrefixesMore int64
	W, H         float64
}

type tmDomain struct {
	X, Y, W, H float64
	Name, Tip  string
	Label      string
	Items      []tmItem
}

type tmItem struct {
	X, Y, W, H float64
	Tip        string
	Label      string
	Fill       string
	Class      string
}

type ttlBar struct {
	X, Y, W, H float64
	Label, Tip string
}

type ruleRow struct {
	Rule, Doc, Severity string
	Count, Omitted      int64
}

func (r *Report) htmlView() *htmlView {
	v := &htmlView{R: r, W: treemapW, H: treemapH}
	if r.Estimate {
		v.Est = "~"
	}
	v.Findings = r.Findings[:min(len(r.Findings), htmlFindings)]
	v.FindingsMore = int64(len(r.Findings)-len(v.Findings)) + sumValues(r.FindingsOmitted)
	v.Groups = r.Groups[:min(len(r.Groups), htmlGroups)]
	v.GroupsMore = int64(len(r.Groups) - len(v.Groups))
	v.Prefixes = r.Prefixes[:min(len(r.Prefixes), htmlPrefixes)]
	v.PrefixesMore = int64(len(r.Prefixes) - len(v.Prefixes))
	v.treemap(r.Groups)
	v.ttlBars(r.TTLHistogram)
	for _, row := range r.ruleRows() {
		v.Rules = append(v.Rules, ruleRow{Rule: row.Rule, Doc: r.docURL(row.Rule), Severity: row.Severity.String(), Count: row.Count, Omitted: row.Omitted})
	}
	return v
}

// treemap lays out memory by domain, then by group inside each domain,
// with the squarified algorithm (Bruls, Huizing, van Wijk 2000).
func (v *htmlView) treemap(groups []Group) {
	size := func(g Group) float64 { return float64(g.Bytes) }
	v.TreemapBy = "memory"
	var total int64
	for _, g := range groups {
		total += g.Bytes
	}
	if total == 0 {
		size = func(g Group) float64 { return float64(g.Keys) }
		v.TreemapBy = "keys (no memory figures)"
	}
	type dom struct {
		name  string
		size  float64
		items []Group
		rest  float64
		restN int
	}
	idx := map[string]int{}
	var ds []dom
	for i, g := range groups {
		if size(g) <= 0 {
			continue
		}
		name := domainLabel(g)
		j, ok := idx[name]
		if !ok {
			j = len(ds)
			idx[name] = j
			ds = append(ds, dom{name: name})
		}
		ds[j].size += size(g)
		if i < htmlTreemap {
			ds[j].items = append(ds[j].items, g)
		} else {
			ds[j].rest += size(g)
			ds[j].restN++
		}
	}
	slices.SortStableFunc(ds, func(a, b dom) int { return cmp.Compare(b.size, a.size) })
	sizes := make([]float64, len(ds))
	for i, d := range ds {
		sizes[i] = d.size
	}
	for i, dr := range squarify(sizes, rect{X: 0, Y: 0, W: treemapW, H: treemapH}) {
		d := ds[i]
		td := tmDomain{X: dr.X, Y: dr.Y, W: dr.W, H: dr.H, Name: d.name, Tip: d.name + ": " + amount(d.size, v.TreemapBy)}
		inner := rect{X: dr.X + 2, Y: dr.Y + 2, W: dr.W - 4, H: dr.H - 4}
		if dr.H > 40 && dr.W > 60 {
			td.Label = fitLabel(d.name, dr.W-6)
			inner = rect{X: dr.X + 2, Y: dr.Y + 16, W: dr.W - 4, H: dr.H - 18}
		}
		var isz []float64
		for _, g := range d.items {
			isz = append(isz, size(g))
		}
		if d.rest > 0 {
			isz = append(isz, d.rest)
		}
		hue := int(nameHash(d.name) % 360)
		if inner.W > 1 && inner.H > 1 {
			for k, ir := range squarify(isz, inner) {
				it := tmItem{X: ir.X, Y: ir.Y, W: ir.W, H: ir.H, Class: "t"}
				light := 45 + (k%4)*8
				var name string
				if k < len(d.items) {
					g := d.items[k]
					name = g.Name
					it.Tip = fmt.Sprintf("%s (%s, owner %s): %s, %s", show(g.Name), g.Kind, human.OrDash(g.Owner), human.Plural(g.Keys, "key"), v.R.bytesOrDash(g.Bytes))
					if g.Kind == KindPrefix && !v.R.WithoutRegistry() {
						it.Class = "u" // unregistered: there is a registry to miss
					}
				} else {
					name = fmt.Sprintf("%d smaller groups", d.restN)
					it.Tip = name + ": " + amount(d.rest, v.TreemapBy)
				}
				it.Fill = fmt.Sprintf("hsl(%d,50%%,%d%%)", hue, light)
				if ir.H >= 14 {
					it.Label = fitLabel(show(name), ir.W-4)
				}
				td.Items = append(td.Items, it)
			}
		}
		v.Domains = append(v.Domains, td)
	}
}

func amount(v float64, by string) string {
	if by == "memory" {
		return fmtBytes(int64(v))
	}
	return fmtCount(int64(v)) + " keys"
}

// fitLabel cuts a label to what fits in width pixels of 11px text.
func fitLabel(s string, width float64) string {
	n := int((width - 2) / 6.5)
	r := []rune(s)
	switch {
	case n < 4:
		return ""
	case len(r) <= n:
		return s
	}
	return string(r[:n-1]) + "…"
}

func (v *htmlView) ttlBars(h []TTLBucket) {
	var most int64
	for _, b := range h {
		most = max(most, b.Keys)
	}
	if most == 0 {
		return
	}
	const chartH, barW, gap = 140.0, 56.0, 8.0
	for i, b := range h {
		bh := chartH * float64(b.Keys) / float64(most)
		v.TTL = append(v.TTL, ttlBar{X: float64(i) * (barW + gap), Y: chartH - bh, W: barW, H: bh, Label: b.Label,
			Tip: fmt.Sprintf("%s: %s, %s", b.Label, human.Plural(b.Keys, "key"), v.R.bytesOrDash(b.Bytes))})
	}
}

type rect = treemap.Rect

func squarify(values []float64, r rect) []rect { return treemap.Squarify(values, r) }

const htmlTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>keyguard audit: {{show .R.Source.Target}}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.meta{color:#555}.bad{color:#b00020;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:110px}
.card b{display:block;font-size:20px}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f6f6}td.n{text-align:right;font-variant-numeric:tabular-nums}td.d2{padding-left:1.6em}td.d3{padding-left:2.8em}td.d4{padding-left:4em}
.sev-error{color:#b00020}.sev-warning{color:#9a6700}.sev-info{color:#555}
code{font-size:12px;word-break:break-all}
svg text{font:11px system-ui,sans-serif;pointer-events:none}
rect.d{fill:#fafafa;stroke:#999}rect.t{stroke:#fff}rect.u{stroke:#b00020;stroke-dasharray:3 2}
rect.bar{fill:#4a78b5}
pre{background:#f6f6f6;padding:8px;overflow:auto}
</style>
</head>
<body>
<h1>keyguard {{.R.Source.Kind}} audit of {{show .R.Source.Target}}</h1>
<div class="meta">{{.R.Source.Nodes}} node(s) · registry {{show .R.Registry}} · started {{.R.StartedAt.Format "2006-01-02 15:04:05 MST"}} · took {{ms .R.DurationMS}} ·
{{if .R.Complete}}complete{{else}}<span class="bad">INCOMPLETE</span>{{end}}{{if .R.Estimate}} · <span class="bad">estimates from a sample</span>{{end}}</div>
{{range .R.Stopped}}<div class="bad">stopped: {{show .Node}} after {{count .Keys}} keys{{if .Cursor}} at cursor {{.Cursor}}{{end}}: {{.Reason}}</div>{{end}}
{{with .R.Coverage}}<div class="meta">coverage: {{.Summary}}</div><details><summary class="meta">nodes walked</summary><ul>{{range .NodeLines}}<li>{{.}}</li>{{end}}</ul></details>{{range .NotCovered}}<div class="bad">not covered: {{.String}}</div>{{end}}{{end}}
<div class="cards">
<div class="card">keys<b>{{.Est}}{{count .R.Summary.Keys}}</b></div>
<div class="card">memory<b>{{if .R.MemoryUnmeasured}}not measured{{else}}{{.Est}}{{bytes .R.Summary.Bytes}}{{end}}</b></div>
{{if .R.WithoutRegistry}}<div class="card">registry<b>none</b>families inferred from the names</div>{{else}}<div class="card">unregistered<b>{{.Est}}{{count .R.Summary.Unregistered}}</b></div>{{end}}
<div class="card">without TTL<b>{{.Est}}{{count .R.Summary.NoTTL}}</b></div>
<div class="card">findings{{with .R.Sample}} in the {{plural .KeysSeen "key"}} read{{end}}<b>{{count .R.Summary.Findings}}</b>{{plural .R.Summary.BySeverity.Error "error"}} · {{plural .R.Summary.BySeverity.Warning "warning"}}</div>
</div>
{{if .Domains}}
<h2>Memory by domain and template</h2>
<p class="meta">Area is {{.TreemapBy}}. {{if .R.WithoutRegistry}}Families are inferred from the key names (no registry).{{else}}Dashed red outlines are unregistered families.{{end}} Hover for figures.</p>
<svg width="{{f1 .W}}" height="{{f1 .H}}" viewBox="0 0 {{f1 .W}} {{f1 .H}}" role="img" aria-label="memory treemap">
{{range .Domains}}<g><rect class="d" x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}"><title>{{.Tip}}</title></rect>{{if .Label}}<text x="{{f1 .X}}" y="{{f1 .Y}}" dx="4" dy="12" font-weight="600">{{.Label}}</text>{{end}}
{{range .Items}}<rect class="{{.Class}}" x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}" fill="{{.Fill}}"><title>{{.Tip}}</title></rect>{{if .Label}}<text x="{{f1 .X}}" y="{{f1 .Y}}" dx="3" dy="12">{{.Label}}</text>{{end}}
{{end}}</g>
{{end}}</svg>
{{end}}
{{if .Prefixes}}
<h2>Memory by prefix</h2>
<table><tr><th>prefix</th><th>keys</th><th>memory</th><th>no TTL</th><th>groups</th></tr>
{{range .Prefixes}}<tr><td class="d{{.Depth}}"><code>{{show .Prefix}}</code></td><td class="n">{{$.Est}}{{count .Keys}}</td><td class="n">{{$.Est}}{{bytes .Bytes}}</td><td class="n">{{count .NoTTL}}</td><td class="n">{{.Groups}}</td></tr>
{{end}}</table>
{{if .PrefixesMore}}<p class="meta">{{count .PrefixesMore}} more prefixes in the JSON and CSV reports.</p>{{end}}
{{end}}
{{if .TTL}}
<h2>Remaining TTL</h2>
<svg width="660" height="180" viewBox="0 0 660 180" role="img" aria-label="TTL histogram">
{{range .TTL}}<rect class="bar" x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}"><title>{{.Tip}}</title></rect><text x="{{f1 .X}}" y="158">{{.Label}}</text>
{{end}}</svg>
{{end}}
{{if .Rules}}
<h2>Findings by rule</h2>
<table><tr><th>rule</th><th>severity</th><th>count</th><th>not listed</th></tr>
{{range .Rules}}<tr><td><a href="{{.Doc}}">{{.Rule}}</a></td><td class="sev-{{.Severity}}">{{.Severity}}</td><td class="n">{{count .Count}}</td><td class="n">{{if .Omitted}}{{count .Omitted}}{{end}}</td></tr>
{{end}}</table>
{{end}}
{{if .Findings}}
<h2>Findings</h2>
<table><tr><th>severity</th><th>rule</th><th>key</th><th>template</th><th>owner</th><th>message</th></tr>
{{range .Findings}}<tr><td class="sev-{{.Severity}}">{{.Severity}}</td><td><a href="{{doc .Rule}}">{{.Rule}}</a></td><td><code>{{showKey .Key .KeyLen}}</code></td><td><code>{{show .Template}}</code></td><td>{{dash .Owner}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
{{if .FindingsMore}}<p class="meta">{{count .FindingsMore}} more findings in the JSON report.</p>{{end}}
{{end}}
{{if .Groups}}
<h2>Templates and families</h2>
<table><tr><th>group</th><th>kind</th><th>owner</th><th>keys</th><th>memory</th><th>no TTL</th><th>TTL min / p50 / max</th><th>findings</th></tr>
{{range .Groups}}<tr><td><code>{{show .Name}}</code>{{if .Suggested}}<details><summary>suggested entry</summary><pre>{{.Suggested}}</pre></details>{{end}}</td><td>{{.Kind}}</td><td>{{dash .Owner}}</td><td class="n">{{$.Est}}{{count .Keys}}</td><td class="n">{{$.Est}}{{bytes .Bytes}}</td><td class="n">{{count .NoTTL}}</td><td>{{if .WithTTL}}{{sec .TTLSeconds.Min}} / ≈{{approx .TTLSeconds.P50}} / {{sec .TTLSeconds.Max}}{{else}}-{{end}}</td><td class="n">{{count .Findings}}</td></tr>
{{end}}</table>
{{if .GroupsMore}}<p class="meta">{{count .GroupsMore}} more groups in the JSON and CSV reports.</p>{{end}}
{{end}}
{{if .R.TopKeys}}
<h2>Largest keys</h2>
<table><tr><th>key</th><th>type</th><th>memory</th><th>elements</th><th>TTL</th><th>template</th></tr>
{{range .R.TopKeys}}<tr><td><code>{{showKey .Key .KeyLen}}</code></td><td>{{.Type}}</td><td class="n">{{bytes .Bytes}}</td><td class="n">{{count .Elements}}</td><td>{{ttl .TTLMS}}</td><td><code>{{show .Template}}</code></td></tr>
{{end}}</table>
{{end}}
{{if .R.Notes}}<h2>Notes</h2><ul>{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
`

// nameHash gives a domain a fixed colour (FNV-1a).
func nameHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
