package dashboard

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/jsonout"

	"github.com/keyguard/keyguard/finding"
)

//go:embed templates/*.html
var pageFS embed.FS

//go:embed assets
var assetFS embed.FS

// pageNames are the page templates; each defines "content" for layout.
var pageNames = []string{"overview", "templates", "template", "unregistered", "findings", "hotkeys", "writers", "history", "empty"}

// parsePages parses the page templates; their rule links point under
// docsBase (Config.DocsBase).
func parsePages(docsBase string) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"ruleDoc": func(rule string) string {
			if docsBase == "" {
				return finding.DocURL(rule)
			}
			return finding.HelpURI(docsBase, rule)
		},
		"bytes": fmtBytes, "count": fmtCount, "dur": fmtDur, "sec": fmtSec, "time": fmtTime, "ago": fmtAgo, "pct": pct,
		"bar": func(part, whole int64, class string) template.HTML {
			if whole <= 0 {
				return barSVG(0, class)
			}
			return barSVG(float64(part)/float64(whole), class)
		},
		"mem":         memText,
		"templateURL": templateURL,
		"findingsURL": func(kv ...string) string {
			v := url.Values{}
			for i := 0; i+1 < len(kv); i += 2 {
				v.Set(kv[i], kv[i+1])
			}
			return "/findings?" + v.Encode()
		},
		"join":  strings.Join,
		"int64": func(n int) int64 { return int64(n) },
		"div": func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return a / b
		},
	}
	layout, err := template.New("layout").Funcs(funcs).ParseFS(pageFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: page templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(layout.Clone()).ParseFS(pageFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: page templates: %w", err)
		}
		pages[name] = t
	}
	return pages, nil
}

// memText is a memory figure after est, or "–" when memory was not
// measured (page.NoMemory).
func memText(noMemory bool, est string, n int64) string {
	if noMemory {
		return "–"
	}
	return est + fmtBytes(n)
}

func templateURL(name string) string { return "/template?name=" + url.QueryEscape(name) }

func assetHandler() http.Handler {
	sub, _ := fs.Sub(assetFS, "assets")
	files := http.FileServerFS(sub)
	return http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
}

// page is what every page template gets.
type page struct {
	Title   string
	Active  string
	Nav     []navItem
	Snap    *Snapshot
	Status  Status
	Now     time.Time
	Banners []banner
	Refresh int
	Est     string // "~" before counts extrapolated from a sample
	// NoMemory: no key's memory could be read; byte figures show "–".
	NoMemory bool
	Running  *Progress // of the audit running, when the auditor says
	Body     any
}

type navItem struct {
	Href, Label, Badge string
	Active, Alert      bool
}

type banner struct {
	Class, Title, Text string
}

// newPage gathers what every page shows: navigation, status and banners.
func (s *Server) newPage(title, active string) *page {
	snap, st := s.Latest()
	p := &page{Title: title, Active: active, Snap: snap, Status: st, Now: s.now()}
	if pr, ok := s.auditor.(progresser); ok && st.Running {
		if cur, ok := pr.Progress(); ok {
			p.Running = &cur
		}
	}
	if snap != nil && snap.Estimate {
		p.Est = "~"
	}
	p.NoMemory = snap != nil && snap.MemoryUnmeasured()
	nav := []navItem{{Href: "/", Label: "Overview"}, {Href: "/templates", Label: "Templates"}, {Href: "/unregistered", Label: "Unregistered"},
		{Href: "/findings", Label: "Findings"}, {Href: "/hot-keys", Label: "Hot keys"}, {Href: "/writers", Label: "Writers"}, {Href: "/history", Label: "History"}}
	if snap != nil {
		nav[1].Badge = fmtCount(int64(len(snap.Templates)))
		switch {
		case snap.NoRegistry():
			// Every key is of a family: nothing to alert on.
			nav[2].Label, nav[2].Badge = "Families", fmtCount(int64(len(snap.Families)))
		case len(snap.Families) > 0:
			nav[2].Badge, nav[2].Alert = fmtCount(snap.Unregistered), true
		}
		if snap.FindingCount > 0 {
			nav[3].Badge, nav[3].Alert = fmtCount(snap.FindingCount), snap.Errors > 0
		}
		if len(snap.HotKeys) > 0 {
			nav[4].Badge = fmtCount(int64(len(snap.HotKeys)))
		}
		second := 0
		for _, tw := range snap.Writers {
			if len(tw.Writers) > 1 {
				second++
			}
		}
		if second > 0 {
			nav[5].Badge, nav[5].Alert = fmtCount(int64(second)), true
		}
	}
	for i := range nav {
		// The unregistered page keeps its entry when it reads "Families".
		nav[i].Active = nav[i].Label == active || nav[i].Href == "/unregistered" && active == "Unregistered"
	}
	p.Nav = nav
	p.Banners, p.Refresh = banners(snap, st, p.Now)
	return p
}

// banners say what is wrong with the data on show: no audit yet, a failed
// audit (with the last good one), an incomplete or sampled audit.
func banners(snap *Snapshot, st Status, now time.Time) ([]banner, int) {
	var bs []banner
	refresh := 0
	switch {
	case snap == nil && st.LastResult == resultFailed:
		bs = append(bs, banner{"error", "The audit failed.",
			fmt.Sprintf("At %s (%s): %s. Next attempt %s.", fmtTime(st.LastErrorAt), fmtAgo(st.LastErrorAt, now), st.LastError, fmtAgo(st.Next, now))})
		refresh = 30
	case snap == nil:
		since := st.RunningSince
		if since.IsZero() {
			since = st.Started
		}
		bs = append(bs, banner{"info", "The first audit is running.",
			fmt.Sprintf("Started %s. This page reloads itself until it is done.", fmtAgo(since, now))})
		refresh = 5
	case st.LastResult == resultFailed:
		good := "no complete audit since the server started"
		if !st.LastGood.IsZero() {
			good = fmt.Sprintf("the last complete audit ended at %s (%s)", fmtTime(st.LastGood), fmtAgo(st.LastGood, now))
		}
		bs = append(bs, banner{"error", "The last audit failed.",
			fmt.Sprintf("At %s (%s, %d in a row): %s. Showing the audit of %s; %s.", fmtTime(st.LastErrorAt), fmtAgo(st.LastErrorAt, now),
				st.Failures, st.LastError, fmtTime(snap.StartedAt), good)})
	case st.LastAttempt.IsZero():
		bs = append(bs, banner{"info", "Showing the last saved audit.",
			fmt.Sprintf("It ran at %s, before this server started; the first audit of this run is under way.", fmtTime(snap.StartedAt))})
	}
	if snap != nil && !snap.Complete {
		text := "The audit stopped early; its counts cover part of the keyspace."
		for i, stop := range snap.Stopped {
			if i == 3 {
				text += fmt.Sprintf(" And %d more nodes.", len(snap.Stopped)-3)
				break
			}
			text += fmt.Sprintf(" %s stopped after %s keys: %s.", stop.Node, fmtCount(stop.Keys), strings.TrimSuffix(stop.Reason, "."))
		}
		for i, g := range snap.Uncovered {
			if i == 3 {
				text += fmt.Sprintf(" And %d more parts not covered.", len(snap.Uncovered)-3)
				break
			}
			text += " Not covered: " + strings.TrimSuffix(g, ".") + "."
		}
		bs = append(bs, banner{"warn", "Incomplete audit.", text})
	}
	if snap != nil && snap.Estimate {
		bs = append(bs, banner{"info", "Estimates.", "The audit probed a random sample of keys: counts marked ~ are extrapolated."})
	}
	if snap != nil && snap.NoRegistry() {
		bs = append(bs, banner{"info", "No registry.", "keyguard serve was given none and found no keyguard.yaml where it runs: every key is of the family " +
			"inferred from its name (listed under Unregistered), and " + strings.Join(snap.Report.NotChecked, ", ") + " are not checked. " +
			"keyguard init --from-audit on the report JSON below writes a registry to start from."})
	}
	return bs, refresh
}

func (s *Server) render(w http.ResponseWriter, name string, p *page, code int) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		s.log.Error("render", "page", name, "err", err)
		http.Error(w, "keyguard: the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// withSnapshot renders the "empty" page when there is no audit yet.
func (s *Server) withSnapshot(w http.ResponseWriter, p *page) bool {
	if p.Snap != nil {
		return true
	}
	s.render(w, "empty", p, http.StatusOK)
	return false
}

type trend struct {
	Title, Last string
	Chart       template.HTML
}

type overviewBody struct {
	Treemap           template.HTML
	TreemapBy         string
	Domains           []domainLine
	TTL               template.HTML
	Trends            []trend
	DomainTrend       template.HTML
	Legend            []domainLine
	Top               []TemplateRow
	More              int
	Rules             []RuleRow
	Used, Declared    int
	SecondWriters     int
	DisallowedWriters int
}

type domainLine struct {
	DomainRow
	Color string
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("Overview", "Overview")
	if !s.withSnapshot(w, p) {
		return
	}
	snap := p.Snap
	b := &overviewBody{}
	colors := domainColors(snap)
	for _, d := range snap.Domains {
		b.Domains = append(b.Domains, domainLine{d, colors[d.Name]})
	}
	b.Treemap, b.TreemapBy = treemapOf(snap, colors)
	b.TTL = histogramSVG(snap.TTL, snap.MemoryUnmeasured())
	b.Trends, b.DomainTrend, b.Legend = s.trends(snap, colors)
	b.Top = snap.Templates[:min(12, len(snap.Templates))]
	b.More = len(snap.Templates) - len(b.Top)
	b.Rules = snap.Rules
	for i := range snap.Templates {
		t := &snap.Templates[i]
		if t.Declared {
			b.Declared++
			if t.Keys > 0 {
				b.Used++
			}
		}
		if t.SecondWriter() {
			b.SecondWriters++
		}
		if t.Disallowed() > 0 {
			b.DisallowedWriters++
		}
	}
	p.Body = b
	s.render(w, "overview", p, http.StatusOK)
}

// domainColors gives each domain its palette colour, by memory.
func domainColors(snap *Snapshot) map[string]string {
	m := map[string]string{}
	i := 0
	for _, d := range snap.Domains {
		if d.Name == Unregistered {
			m[d.Name] = colorUnregistered
			continue
		}
		m[d.Name] = palette[i%len(palette)]
		i++
	}
	return m
}

// treemapOf lays out memory by domain then template (families for the
// unregistered keys); by key count when no memory was measured.
func treemapOf(snap *Snapshot, colors map[string]string) (template.HTML, string) {
	by, noMem := "memory", snap.MemoryUnmeasured()
	size := func(t Totals) float64 { return float64(t.Bytes) }
	if snap.Totals.Bytes == 0 {
		by = "keys"
		size = func(t Totals) float64 { return float64(t.Keys) }
	}
	idx := map[string]int{}
	var doms []tmDomain
	for _, d := range snap.Domains {
		idx[d.Name] = len(doms)
		amount := fmtBytes(d.Bytes)
		if by == "keys" {
			amount = fmtCount(d.Keys) + " keys"
		}
		doms = append(doms, tmDomain{Name: d.Name, Color: colors[d.Name], Size: size(d.Totals), Amount: amount,
			Tip: fmt.Sprintf("%s: %s, %s keys, %s without TTL", d.Name, memText(noMem, "", d.Bytes), fmtCount(d.Keys), fmtCount(d.NoTTL))})
	}
	for i := range snap.Templates {
		t := &snap.Templates[i]
		if j, ok := idx[t.Domain]; ok && size(t.Totals) > 0 {
			doms[j].Items = append(doms[j].Items, tmItem{Name: t.Name, Href: templateURL(t.Name), Kind: "template",
				Keys: t.Keys, Bytes: t.Bytes, Size: size(t.Totals),
				Tip: fmt.Sprintf("%s (%s): %s, %s keys, %s without TTL", t.Name, t.Owner, memText(noMem, "", t.Bytes), fmtCount(t.Keys), fmtCount(t.NoTTL))})
		}
	}
	if j, ok := idx[Unregistered]; ok {
		for _, f := range snap.Families {
			if size(f.Totals) > 0 {
				doms[j].Items = append(doms[j].Items, tmItem{Name: f.Name, Href: "/unregistered", Kind: "family",
					Keys: f.Keys, Bytes: f.Bytes, Size: size(f.Totals),
					Tip: fmt.Sprintf("unregistered %s: %s, %s keys, e.g. %s", f.Name, memText(noMem, "", f.Bytes), fmtCount(f.Keys), f.Example)})
			}
		}
	}
	return treemapSVG(doms, by), by
}

// trendPoints are the audits the trend lines draw: the complete ones (a
// partial audit's totals are a dip, not a trend), or all of them when
// none is complete.
func (s *Server) trendPoints() []Point {
	pts := s.history.Points() // a copy
	if slices.ContainsFunc(pts, func(p Point) bool { return p.Complete }) {
		pts = slices.DeleteFunc(pts, func(p Point) bool { return !p.Complete })
	}
	return pts
}

// trendOf is one small line chart of the history, marked where the
// registry changed.
func trendOf(title, color string, times []time.Time, vals []float64, f func(float64) string, marks []time.Time) trend {
	last := ""
	if len(vals) > 0 {
		last = f(vals[len(vals)-1])
	}
	return trend{Title: title, Last: last, Chart: lineChart(title, times, []series{{Name: title, Color: color, Vals: vals}}, 300, 120, f, marks)}
}

// trends draws the history: the totals, and memory per domain.
func (s *Server) trends(snap *Snapshot, colors map[string]string) ([]trend, template.HTML, []domainLine) {
	pts := s.trendPoints()
	times := make([]time.Time, len(pts))
	for i, p := range pts {
		times[i] = p.At
	}
	marks := registryMarks(pts)
	line := func(title string, color string, v func(Point) int64, f func(float64) string) trend {
		vals := make([]float64, len(pts))
		for i, p := range pts {
			vals[i] = float64(v(p))
		}
		return trendOf(title, color, times, vals, f, marks)
	}
	// Audits made without a registry have no unregistered count (every
	// key would be one): the line leaves them out.
	unregistered := func() trend {
		var at []time.Time
		var vals []float64
		for _, p := range pts {
			if !p.NoRegistry {
				at, vals = append(at, p.At), append(vals, float64(p.Unreg))
			}
		}
		return trendOf("Unregistered keys", "#8f8f8f", at, vals, fmtShort, marks)
	}
	bytesF := func(v float64) string { return fmtBytes(int64(v)) }
	// Memory no audit measured (a server without MEMORY USAGE) is no
	// line of zeros: its charts are left out.
	noMem := snap.MemoryUnmeasured() && !slices.ContainsFunc(pts, func(p Point) bool { return p.Totals.Bytes > 0 })
	ts := []trend{
		line("Keys", "#4e79a7", func(p Point) int64 { return p.Totals.Keys }, fmtShort),
		line("Memory", "#59a14f", func(p Point) int64 { return p.Totals.Bytes }, bytesF),
		line("Keys without TTL", "#e15759", func(p Point) int64 { return p.Totals.NoTTL }, fmtShort),
		unregistered(),
		line("Findings", "#f28e2b", func(p Point) int64 { return p.Findings }, fmtShort),
	}
	if snap.NoRegistry() {
		ts = slices.Delete(ts, 3, 4) // every key: the line of Keys again
	}
	switch {
	case noMem:
		return slices.Delete(ts, 1, 2), "", nil
	case snap.MemoryUnmeasured():
		ts[1].Last = "not measured"
	}
	var ss []series
	var legend []domainLine
	for i, d := range snap.Domains {
		if i == len(palette) {
			break
		}
		vals := make([]float64, len(pts))
		for k, p := range pts {
			vals[k] = float64(p.Domains[d.Name].Bytes)
		}
		ss = append(ss, series{Name: d.Name, Color: colors[d.Name], Vals: vals})
		legend = append(legend, domainLine{d, colors[d.Name]})
	}
	return ts, lineChart("memory by domain", times, ss, 900, 220, bytesF, marks), legend
}

type templatesBody struct {
	Q       tableQuery
	Rows    []tableLine
	Total   int
	Owners  []string
	Domains []string
	Headers []header
}

type header struct {
	Label, Href, Mark string
	Numeric           bool
}

func (s *Server) templatesPage(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("Templates", "Templates")
	if !s.withSnapshot(w, p) {
		return
	}
	q := parseTableQuery(r.URL.Query())
	b := &templatesBody{Q: q, Total: len(p.Snap.Templates)}
	for _, t := range q.apply(p.Snap.Templates) {
		b.Rows = append(b.Rows, newTableRow(t, p.Est, p.NoMemory))
	}
	owners, domains := map[string]bool{}, map[string]bool{}
	for i := range p.Snap.Templates {
		owners[p.Snap.Templates[i].Owner] = true
		domains[p.Snap.Templates[i].Domain] = true
	}
	b.Owners, b.Domains = sortedKeys(owners), sortedKeys(domains)
	for _, c := range tableColumns {
		h := header{Label: c.Label, Href: q.sortedBy(c.Key), Numeric: c.Numeric}
		if q.Sort == c.Key {
			h.Mark = "▲"
			if q.Desc {
				h.Mark = "▼"
			}
		}
		b.Headers = append(b.Headers, h)
	}
	p.Body = b
	s.render(w, "templates", p, http.StatusOK)
}

// tableLine is a row of the templates table with its texts written, so
// that drawing 1,000 rows calls no template function. It copies the
// figures it shows rather than embed the row: text/template finds a
// promoted field by a slow search on every use.
type tableLine struct {
	Name, Owner, Desc, Type                 string
	Declared                                bool
	Keys, Bytes, NoTTL, Findings            int64
	Types, Writers                          int // how many
	Href, FindingsHref, Search              string
	KeysText, BytesText, NoTTLText, TTLText string
	TypesTip, WritersTip, WritersClass      string
}

func newTableRow(t *TemplateRow, est string, noMemory bool) tableLine {
	r := tableLine{Name: t.Name, Owner: t.Owner, Desc: t.Desc, Type: t.Type, Declared: t.Declared,
		Keys: t.Keys, Bytes: t.Bytes, NoTTL: t.NoTTL, Findings: t.Findings, Types: len(t.Types), Writers: len(t.Writers),
		Href: templateURL(t.Name), Search: t.Name + " " + t.Owner + " " + t.Desc,
		KeysText: est + fmtCount(t.Keys), BytesText: memText(noMemory, est, t.Bytes), NoTTLText: est + fmtCount(t.NoTTL), TTLText: "–"}
	switch {
	case t.WithTTL > 0:
		r.TTLText = fmtSec(t.TTLP50)
	case t.Persistent:
		r.TTLText = "persistent"
	}
	if t.Findings > 0 {
		r.FindingsHref = "/findings?template=" + url.QueryEscape(t.Name)
	}
	if len(t.Types) > 1 {
		var tip []string
		for _, tc := range t.Types {
			tip = append(tip, tc.Type+": "+fmtCount(tc.Keys))
		}
		r.TypesTip = strings.Join(tip, ", ")
	}
	if len(t.Writers) > 0 {
		var svc []string
		for _, w := range t.Writers {
			svc = append(svc, w.Service)
		}
		r.WritersTip = strings.Join(svc, ", ")
		switch {
		case t.Disallowed() > 0:
			r.WritersClass = "tag bad"
		case t.SecondWriter():
			r.WritersClass = "tag warn"
		}
	}
	return r
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

type templateBody struct {
	T             *TemplateRow
	Trends        []trend
	TTL           template.HTML
	Hist          template.HTML // keys by remaining TTL; empty without the report's per-group histogram
	Findings      []FindingRow
	FindingsTotal int
	FindingsURL   string
	TopKeys       []KeyRow
	TopKeysListed int
	HotKeys       []HotKey
	WritersErr    string
	WritersRead   bool
}

func (s *Server) templatePage(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	p := s.newPage(name, "Templates")
	if !s.withSnapshot(w, p) {
		return
	}
	t, ok := p.Snap.Template(name)
	if !ok {
		p.Title = "No such template"
		p.Body = fmt.Sprintf("No template %q in the registry or in the last audit.", name)
		s.render(w, "empty", p, http.StatusNotFound)
		return
	}
	b := &templateBody{T: t, TTL: ttlRangeSVG(t), WritersErr: p.Snap.WritersErr, WritersRead: s.writers != nil}
	if len(t.TTLBars) > 0 {
		b.Hist = histogramSVG(t.TTLBars, p.NoMemory)
	}
	b.Findings, b.FindingsTotal = p.Snap.Findings(FindingFilter{Template: name}, 0, 50)
	b.FindingsURL = findingQuery{FindingFilter: FindingFilter{Template: name}}.at(1)
	b.TopKeysListed = len(p.Snap.TopKeys)
	for _, k := range p.Snap.TopKeys {
		if k.Template == name {
			b.TopKeys = append(b.TopKeys, k)
		}
	}
	for _, h := range p.Snap.HotKeys {
		if h.Template == name {
			b.HotKeys = append(b.HotKeys, h)
		}
	}
	pts := s.trendPoints()
	times := make([]time.Time, len(pts))
	keys, mem, nottl := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
	for i, pt := range pts {
		times[i] = pt.At
		v := pt.Templates[name]
		keys[i], mem[i], nottl[i] = float64(v.Keys), float64(v.Bytes), float64(v.NoTTL)
	}
	bytesF := func(v float64) string { return fmtBytes(int64(v)) }
	marks := registryMarks(pts) // which keys match the template moves with the registry
	b.Trends = []trend{
		{Title: "Keys", Last: fmtCount(t.Keys), Chart: lineChart("keys", times, []series{{"keys", "#4e79a7", keys}}, 300, 120, fmtShort, marks)},
		{Title: "Memory", Last: memText(p.NoMemory, "", t.Bytes), Chart: lineChart("memory", times, []series{{"memory", "#59a14f", mem}}, 300, 120, bytesF, marks)},
		{Title: "Keys without TTL", Last: fmtCount(t.NoTTL), Chart: lineChart("keys without TTL", times, []series{{"no TTL", "#e15759", nottl}}, 300, 120, fmtShort, marks)},
	}
	if p.NoMemory && !slices.ContainsFunc(mem, func(v float64) bool { return v > 0 }) {
		b.Trends = slices.Delete(b.Trends, 1, 2) // no audit measured this memory: no line of zeros
	}
	p.Body = b
	s.render(w, "template", p, http.StatusOK)
}

// maxFamilies is how many families of unregistered keys the page lists,
// largest first (an audit keeps up to 10,000; the report JSON has all).
const maxFamilies = 500

type unregisteredBody struct {
	Families []FamilyRow
	More     int
}

func (s *Server) unregisteredPage(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("Unregistered keys", "Unregistered")
	if !s.withSnapshot(w, p) {
		return
	}
	if p.Snap.NoRegistry() {
		p.Title = "Families"
	}
	fams := p.Snap.Families
	p.Body = &unregisteredBody{Families: fams[:min(len(fams), maxFamilies)], More: max(len(fams)-maxFamilies, 0)}
	s.render(w, "unregistered", p, http.StatusOK)
}

type findingsBody struct {
	Q          findingQuery
	Rows       []FindingRow
	Total      int
	From, To   int
	Prev, Next string
	Rules      []string
	Owners     []string
	Severities []string
	Clear      string
}

func (s *Server) findingsPage(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("Findings", "Findings")
	if !s.withSnapshot(w, p) {
		return
	}
	q := parseFindingQuery(r.URL.Query())
	b := &findingsBody{Q: q, Owners: p.Snap.FindingOwners(), Severities: severities, Clear: "/findings"}
	offset := (q.Page - 1) * findingsPerPage
	b.Rows, b.Total = p.Snap.Findings(q.FindingFilter, offset, findingsPerPage)
	if len(b.Rows) > 0 {
		b.From, b.To = offset+1, offset+len(b.Rows)
	}
	if q.Page > 1 {
		b.Prev = q.at(q.Page - 1)
	}
	if offset+len(b.Rows) < b.Total {
		b.Next = q.at(q.Page + 1)
	}
	for _, rr := range p.Snap.Rules {
		b.Rules = append(b.Rules, rr.Rule)
	}
	p.Body = b
	s.render(w, "findings", p, http.StatusOK)
}

type hotKeysBody struct {
	Notes      []string
	SDK        bool
	HotKeysErr string
}

func (s *Server) hotKeysPage(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("Hot keys", "Hot keys")
	if !s.withSnapshot(w, p) {
		return
	}
	b := &hotKeysBody{SDK: s.hot != nil, HotKeysErr: p.Snap.HotKeysErr}
	for _, n := range p.Snap.Notes {
		if l := strings.ToLower(n); strings.Contains(l, "hot") || strings.Contains(l, "lfu") {
			b.Notes = append(b.Notes, n)
		}
	}
	p.Body = b
	s.render(w, "hotkeys", p, http.StatusOK)
}

type writersBody struct {
	Read bool
	Err  string
}

func (s *Server) writersPage(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("Writers", "Writers")
	if !s.withSnapshot(w, p) {
		return
	}
	p.Body = &writersBody{Read: s.writers != nil, Err: p.Snap.WritersErr}
	s.render(w, "writers", p, http.StatusOK)
}

type historyLine struct {
	Point
	Saved bool
	// RegistryChanged: the registry declared otherwise than at the audit
	// before, or one of the two ran without a registry (both reports say
	// which).
	RegistryChanged bool
}

func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) {
	p := s.newPage("History", "History")
	pts := s.history.Points()
	lines := make([]historyLine, len(pts))
	for i, pt := range pts {
		changed := i > 0 && registryChanged(pts[i-1], pt)
		lines[len(pts)-1-i] = historyLine{pt, s.history.Saved(pt.ID), changed}
	}
	p.Body = lines
	s.render(w, "history", p, http.StatusOK)
}

// reportJSON writes the latest report as keyguard audit --format json
// does, or with ?at=ID a saved one.
func (s *Server) reportJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if id := r.URL.Query().Get("at"); id != "" {
		f, err := s.history.open(id)
		if err != nil {
			jsonError(w, http.StatusNotFound, fmt.Sprintf("no saved report %q (saved reports are listed at /history; they need --history-dir)", id))
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/json")
		io.Copy(w, f)
		return
	}
	snap, _ := s.Latest()
	if snap == nil {
		jsonError(w, http.StatusServiceUnavailable, "no audit yet: the first one is running or failed (see /healthz)")
		return
	}
	var buf bytes.Buffer
	if err := writeReport(&buf, snap.Report); err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// historyJSON lists the audits of the history with their totals.
func (s *Server) historyJSON(w http.ResponseWriter, r *http.Request) {
	type totals struct {
		Keys  int64 `json:"keys"`
		Bytes int64 `json:"bytes"`
		NoTTL int64 `json:"no_ttl"`
	}
	type audit struct {
		ID           string            `json:"id"`
		StartedAt    time.Time         `json:"started_at"`
		DurationMS   int64             `json:"duration_ms"`
		Complete     bool              `json:"complete"`
		Estimate     bool              `json:"estimate,omitempty"`
		Keys         int64             `json:"keys"`
		Bytes        int64             `json:"bytes"`
		NoTTL        int64             `json:"no_ttl"`
		Unregistered int64             `json:"unregistered"`
		Findings     int64             `json:"findings"`
		Domains      map[string]totals `json:"domains"`
		Report       string            `json:"report,omitempty"` // URL of the saved report
		// RegistryDigest names what the audit's registry declared.
		RegistryDigest string `json:"registry_digest,omitempty"`
		// NoRegistry: made without a registry (Unregistered is then
		// every key).
		NoRegistry bool `json:"no_registry,omitempty"`
	}
	out := []audit{}
	for _, p := range s.history.Points() {
		a := audit{ID: p.ID, StartedAt: p.At.UTC(), DurationMS: p.Duration.Milliseconds(), Complete: p.Complete, Estimate: p.Estimate,
			Keys: p.Totals.Keys, Bytes: p.Totals.Bytes, NoTTL: p.Totals.NoTTL, Unregistered: p.Unreg, Findings: p.Findings,
			Domains: map[string]totals{}, RegistryDigest: p.Registry, NoRegistry: p.NoRegistry}
		for d, t := range p.Domains {
			a.Domains[d] = totals{t.Keys, t.Bytes, t.NoTTL}
		}
		if s.history.Saved(p.ID) {
			a.Report = "/api/report.json?at=" + url.QueryEscape(p.ID)
		}
		out = append(out, a)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := jsonout.NewEncoder(w)
	enc.SetEscapeHTML(true) // served to browsers: <, > and & escaped as well
	enc.Encode(out)
}

// healthz says whether the server runs and how its audits go, without
// details (it needs no credentials). It answers 200 while the server
// runs: a failing audit is for the pages and alerts, not for a restart.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	_, st := s.Latest()
	now := s.now()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var msg string
	switch {
	case st.LastResult == resultFailed:
		msg = fmt.Sprintf("degraded: the last audit failed %s (%d in a row); last complete audit: %s", fmtAgo(st.LastErrorAt, now), st.Failures, fmtAgo(st.LastGood, now))
	case st.LastAttempt.IsZero():
		msg = "starting: the first audit is running"
	case st.LastResult == resultPartial:
		msg = fmt.Sprintf("degraded: the last audit stopped early; last complete audit: %s", fmtAgo(st.LastGood, now))
	default:
		msg = fmt.Sprintf("ok: last complete audit %s", fmtAgo(st.LastGood, now))
	}
	fmt.Fprintln(w, msg)
}
