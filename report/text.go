package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
)

// Sizes of the text report's lists: it is meant to fit one screen.
const (
	textDomains   = 8
	textTemplates = 10
	textWorstKeys = 8
	textSuggest   = 3
)

// WriteText writes a summary a person reads in one screen: totals, memory
// by domain and by template, findings by rule, the worst keys, and
// registry entries to paste for the largest unregistered families.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.writeText(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func (r *Report) writeText(w *bufio.Writer) {
	est := ""
	if r.Estimate {
		est = "~"
	}
	nodes := "nodes"
	if r.Source.Nodes == 1 {
		nodes = "node"
	}
	fmt.Fprintf(w, "keyguard %s audit of %s (%d %s), registry %s\n", r.Source.Kind, show(r.Source.Target), r.Source.Nodes, nodes, show(r.Registry))
	state := "complete"
	if !r.Complete {
		state = "INCOMPLETE"
	}
	fmt.Fprintf(w, "started %s, took %s, %s\n", r.StartedAt.Format("2006-01-02 15:04:05 MST"), fmtMS(r.DurationMS), state)
	for _, s := range r.Stopped {
		cur := ""
		if s.Cursor != "" {
			cur = " at cursor " + s.Cursor
		}
		fmt.Fprintf(w, "  stopped: %s after %s keys%s: %s\n", show(s.Node), fmtCount(s.Keys), cur, s.Reason)
	}
	if r.Sample != nil {
		if r.Sample.Ratio > 0 {
			fmt.Fprintf(w, "sampled: %s keys read, %.3g%% of the keyspace; numbers marked ~ are extrapolated\n", fmtCount(r.Sample.KeysSeen), r.Sample.Ratio*100)
		} else {
			fmt.Fprintf(w, "sampled: %s keys read; counts are of the sample\n", fmtCount(r.Sample.KeysSeen))
		}
	}
	s := r.Summary
	fmt.Fprintf(w, "\n%s%s keys, %s%s: %s%s registered, %s%s unregistered; %s%s without TTL\n",
		est, fmtCount(s.Keys), est, fmtBytes(s.Bytes), est, fmtCount(s.Keys-s.Unregistered), est, fmtCount(s.Unregistered), est, fmtCount(s.NoTTL))
	fmt.Fprintf(w, "findings: %s (%s errors, %s warnings, %s info)\n", fmtCount(s.Findings),
		fmtCount(s.BySeverity.Error), fmtCount(s.BySeverity.Warning), fmtCount(s.BySeverity.Info))

	if len(r.Groups) > 0 {
		r.textDomains(w, est)
		r.textTemplates(w, est)
	}
	if len(r.Findings) > 0 || len(s.ByRule) > 0 {
		r.textRules(w)
	}
	if len(r.TopKeys) > 0 {
		fmt.Fprintf(w, "\nlargest keys\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, k := range r.TopKeys[:min(len(r.TopKeys), textWorstKeys)] {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", fmtBytes(k.Bytes), k.Type, showKey(k.Key, k.KeyLen), ttlText(k.TTLMS), show(k.Template))
		}
		tw.Flush()
	}
	n := 0
	for _, g := range r.Groups {
		if g.Suggested == "" || n == textSuggest {
			continue
		}
		if n == 0 {
			fmt.Fprintf(w, "\nlargest unregistered families: paste under keys: in %s and replace every FILL-IN\n", show(r.Registry))
		}
		n++
		fmt.Fprintf(w, "  # %s%s keys, %s%s\n%s", est, fmtCount(g.Keys), est, fmtBytes(g.Bytes), g.Suggested)
	}
	if len(r.UnusedTemplates) > 0 {
		fmt.Fprintf(w, "\n%d templates have no keys: %s\n", len(r.UnusedTemplates), listShort(r.UnusedTemplates, 5))
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(w, "\nnotes\n")
		for _, note := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", note)
		}
	}
}

func (r *Report) textDomains(w *bufio.Writer, est string) {
	type dom struct {
		name        string
		bytes, keys int64
	}
	idx := map[string]int{}
	var ds []dom
	for _, g := range r.Groups {
		name := domainLabel(g)
		i, ok := idx[name]
		if !ok {
			i = len(ds)
			idx[name] = i
			ds = append(ds, dom{name: name})
		}
		ds[i].bytes += g.Bytes
		ds[i].keys += g.Keys
	}
	slices.SortFunc(ds, func(a, b dom) int {
		return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(b.keys, a.keys), strings.Compare(a.name, b.name))
	})
	fmt.Fprintf(w, "\nmemory by domain\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var restB, restK int64
	for i, d := range ds {
		if i >= textDomains {
			restB += d.bytes
			restK += d.keys
			continue
		}
		fmt.Fprintf(tw, "  %s\t%11s\t%4s\t%s\n", d.name, est+fmtBytes(d.bytes), pct(d.bytes, r.Summary.Bytes), keysText(est, d.keys))
	}
	if len(ds) > textDomains {
		fmt.Fprintf(tw, "  %d more\t%11s\t%4s\t%s\n", len(ds)-textDomains, est+fmtBytes(restB), pct(restB, r.Summary.Bytes), keysText(est, restK))
	}
	tw.Flush()
}

// domainLabel is the domain a group is shown under, ready to print.
func domainLabel(g Group) string {
	switch {
	case g.Domain != "":
		return show(g.Domain)
	case g.Name == OtherGroup:
		return OtherGroup
	}
	return "(no domain)"
}

func keysText(est string, n int64) string {
	if n == 1 && est == "" {
		return "1 key"
	}
	return est + fmtCount(n) + " keys"
}

func (r *Report) textTemplates(w *bufio.Writer, est string) {
	fmt.Fprintf(w, "\ntemplates and families by memory\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  group\towner\tkeys\tmemory\tno TTL\tTTL p50\tfindings\n")
	for _, g := range r.Groups[:min(len(r.Groups), textTemplates)] {
		name := show(g.Name)
		if g.Kind == KindPrefix && g.Name != OtherGroup {
			name += " (unregistered)"
		}
		p50 := "-"
		if g.WithTTL > 0 {
			p50 = "≈" + fmtApprox(secDur(g.TTLSeconds.P50))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s%s\t%s%s\t%s\t%s\t%s\n", name, orDash(g.Owner), est, fmtCount(g.Keys), est, fmtBytes(g.Bytes), fmtCount(g.NoTTL), p50, fmtCount(g.Findings))
	}
	tw.Flush()
	if len(r.Groups) > textTemplates {
		fmt.Fprintf(w, "  … %d more groups in --format json, csv or html\n", len(r.Groups)-textTemplates)
	}
}

func (r *Report) textRules(w *bufio.Writer) {
	type row struct {
		rule    string
		sev     finding.Severity
		n       int64
		example *Finding
	}
	idx := map[string]int{}
	var rows []row
	for i := range r.Findings {
		f := &r.Findings[i]
		if j, ok := idx[f.Rule]; ok {
			rows[j].sev = max(rows[j].sev, f.Severity)
			continue
		}
		idx[f.Rule] = len(rows)
		rows = append(rows, row{rule: f.Rule, sev: f.Severity, example: f})
	}
	for id := range r.Summary.ByRule {
		if _, ok := idx[id]; !ok {
			idx[id] = len(rows)
			rows = append(rows, row{rule: id})
		}
	}
	for i := range rows {
		rows[i].n = r.Summary.ByRule[rows[i].rule]
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.sev, a.sev), cmp.Compare(RuleRank(a.rule), RuleRank(b.rule)), strings.Compare(a.rule, b.rule))
	})
	fmt.Fprintf(w, "\nfindings by rule\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, rw := range rows {
		ex := ""
		if rw.example != nil {
			ex = showKey(rw.example.Key, rw.example.KeyLen) + ": " + rw.example.Message
			if n := 100; utf8.RuneCountInString(ex) > n {
				ex = string([]rune(ex)[:n]) + "…"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", rw.sev, rw.rule, fmtCount(rw.n), ex)
	}
	tw.Flush()
	if len(r.FindingsOmitted) > 0 {
		fmt.Fprintf(w, "  (lists are capped per rule; %s findings are counted but not listed)\n", fmtCount(sumValues(r.FindingsOmitted)))
	}
}

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// show prints a name on one line: as is when it is short printable text,
// otherwise quoted with escapes.
func show(s string) string {
	if len(s) <= 100 && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == ' ' || r == '\t' }) {
		return s
	}
	return finding.Display(s)
}

// showKey prints a key on one line, at most about 60 characters; full is
// the key's length when k was already cut (0 otherwise).
func showKey(k string, full int) string {
	const limit = 60
	n := max(full, len(k))
	if len(k) <= limit && n == len(k) {
		return show(k)
	}
	cut := k[:min(len(k), limit)]
	for len(cut) > 0 && !utf8.ValidString(cut) && utf8.ValidString(k[:min(len(k), limit+3)]) {
		cut = cut[:len(cut)-1] // do not split a character of a valid key
	}
	s := show(cut)
	if !strings.HasPrefix(s, `"`) {
		s = strconv.Quote(cut)
	}
	return s + fmt.Sprintf("…(%d bytes)", n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pct(n, of int64) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", float64(n)*100/float64(of))
}

func fmtMS(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

func fmtSec(s int64) string {
	if s <= 0 {
		return "0s"
	}
	return fmtDur(secDur(s))
}

func ttlText(ms *int64) string {
	switch {
	case ms == nil:
		return "ttl ?"
	case *ms == -1:
		return "no TTL"
	}
	return "ttl " + fmtDur(msDur(*ms))
}

func listShort(xs []string, n int) string {
	var shown []string
	for _, x := range xs[:min(len(xs), n)] {
		shown = append(shown, show(x))
	}
	s := strings.Join(shown, ", ")
	if len(xs) > n {
		s += fmt.Sprintf(", … %d more", len(xs)-n)
	}
	return s
}
