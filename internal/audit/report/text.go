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
	"github.com/keyguard/keyguard/internal/human"
)

// Sizes of the text report's lists by default: it is meant to fit one
// screen. TextOptions.Verbose lists everything.
const (
	textDomains   = 8
	textPrefixes  = 8
	textTemplates = 10
	textWorstKeys = 8
	textSuggest   = 3

	textCoverageNodes = 3
)

// TextOptions tune WriteText.
type TextOptions struct {
	Verbose bool // every section in full
	Top     int  // largest keys listed; 0 the default (8, or all with Verbose)
	// Next is the report's last line: what to run next (the command
	// that writes a registry from a report without one). Empty: none.
	Next string
}

// WriteText writes a summary a person reads in one screen: totals, memory
// by domain, by prefix and by template, findings by rule, the largest
// keys, and registry entries to paste for the largest unregistered
// families. Every list that is cut says how many more there are.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	bw := bufio.NewWriter(w)
	t := textWriter{r: r, w: bw, o: o}
	t.write()
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

type textWriter struct {
	r *Report
	w *bufio.Writer
	o TextOptions
}

// limit is how many of n items a section of default size def lists.
func (t *textWriter) limit(n, def int) int {
	if t.o.Verbose {
		return n
	}
	return min(n, def)
}

// more writes the line that says what a cut list left out.
func (t *textWriter) more(left int, what string) {
	if left > 0 {
		fmt.Fprintf(t.w, "  … %d more %s (--verbose, or --format json|csv|html)\n", left, what)
	}
}

func (t *textWriter) write() {
	r, w := t.r, t.w
	est := ""
	if r.Estimate {
		est = "~"
	}
	nodes := "nodes"
	if r.Source.Nodes == 1 {
		nodes = "node"
	}
	reg := "registry " + show(r.Registry)
	if len(r.NotChecked) > 0 {
		reg = "no registry (key families inferred from the names)"
	}
	fmt.Fprintf(w, "keyguard %s audit of %s (%d %s), %s\n", r.Source.Kind, show(r.Source.Target), r.Source.Nodes, nodes, reg)
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
		fmt.Fprintf(w, "  stopped: %s after %s%s: %s\n", show(s.Node), human.Plural(s.Keys, "key"), cur, s.Reason)
	}
	t.coverage()
	if r.Sample != nil {
		if r.Sample.Ratio > 0 {
			margin, how := "", ""
			if m := r.Sample.BytesMargin; m > 0 {
				margin = fmt.Sprintf("; memory ±%s (95%%)", fmtBytes(m))
			}
			if r.Sample.Stratified {
				how = ", stratified by template or family and size"
			}
			fmt.Fprintf(w, "sampled: %s read, %.3g%% of the keyspace%s; numbers marked ~ are extrapolated%s\n", human.Plural(r.Sample.KeysSeen, "key"), r.Sample.Ratio*100, how, margin)
		} else {
			fmt.Fprintf(w, "sampled: %s read; counts are of the sample\n", human.Plural(r.Sample.KeysSeen, "key"))
		}
	}
	s := r.Summary
	if len(r.NotChecked) > 0 {
		fmt.Fprintf(w, "\n%s, %s; %s without TTL\n", keysText(est, s.Keys), r.memoryText(est), keysText(est, s.NoTTL))
		fmt.Fprintf(w, "not checked (no registry): %s\n", strings.Join(r.NotChecked, ", "))
	} else {
		fmt.Fprintf(w, "\n%s, %s: %s%s registered, %s%s unregistered; %s%s without TTL\n",
			keysText(est, s.Keys), r.memoryText(est), est, fmtCount(s.Keys-s.Unregistered), est, fmtCount(s.Unregistered), est, fmtCount(s.NoTTL))
	}
	if types := t.typeCounts(est); types != "" {
		fmt.Fprintf(w, "by type: %s\n", types)
	}
	of := ""
	if r.Sample != nil {
		// A finding names a key: of the keys read, not extrapolated.
		of = " in the " + human.Plural(r.Sample.KeysSeen, "key") + " read"
	}
	fmt.Fprintf(w, "findings%s: %s (%s, %s, %s info)\n", of, fmtCount(s.Findings),
		human.Plural(s.BySeverity.Error, "error"), human.Plural(s.BySeverity.Warning, "warning"), fmtCount(s.BySeverity.Info))

	if len(r.Groups) > 0 {
		t.domains(est)
		t.prefixes(est)
		t.templates(est)
	}
	if len(r.Findings) > 0 || len(s.ByRule) > 0 {
		t.rules()
	}
	if len(r.TopKeys) > 0 && !r.MemoryUnmeasured() {
		fmt.Fprintf(w, "\nlargest keys\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		n := t.limit(len(r.TopKeys), textWorstKeys)
		if t.o.Top > 0 {
			n = min(len(r.TopKeys), t.o.Top)
		}
		for _, k := range r.TopKeys[:n] {
			fmt.Fprintf(tw, "  %s\t%s\t%s%s\t%s\t%s\n", fmtBytes(k.Bytes), k.Type, showKey(k.Key, k.KeyLen), dbText(k.DB), ttlText(k.TTLMS), show(k.Template))
		}
		tw.Flush()
		t.more(len(r.TopKeys)-n, "keys")
	}
	var sugg []Group
	for _, g := range r.Groups {
		if g.Suggested != "" {
			sugg = append(sugg, g)
		}
	}
	if len(sugg) > 0 {
		if len(r.NotChecked) > 0 {
			fmt.Fprintf(w, "\nlargest families, as registry entries (replace every FILL-IN)\n")
		} else {
			fmt.Fprintf(w, "\nlargest unregistered families: paste under keys: in %s and replace every FILL-IN\n", show(r.Registry))
		}
		n := t.limit(len(sugg), textSuggest)
		for _, g := range sugg[:n] {
			fmt.Fprintf(w, "  # %s%s\n%s", keysText(est, g.Keys), r.bytesCell(", "+est, g.Bytes), g.Suggested)
		}
		t.more(len(sugg)-n, "suggested entries (keyguard init --from-audit REPORT.json writes them all)")
	}
	if len(r.UnusedTemplates) > 0 {
		fmt.Fprintf(w, "\n%s no keys: %s\n", haveText(int64(len(r.UnusedTemplates)), "template"), listShort(r.UnusedTemplates, t.limit(len(r.UnusedTemplates), 5)))
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(w, "\nnotes\n")
		for _, note := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", note)
		}
	}
	if t.o.Next != "" {
		fmt.Fprintf(w, "\nnext: %s\n", t.o.Next)
	}
}

// typeCounts is "600 strings, 300 hashes, 1 list": keys by Redis type,
// most first, as redis-cli --bigkeys ends.
func (t *textWriter) typeCounts(est string) string {
	var n [len(TypeNames)]int64
	for _, g := range t.r.Groups {
		for i, name := range TypeNames {
			n[i] += g.Types[name]
		}
	}
	idx := make([]int, 0, len(n))
	for i := range n {
		if n[i] > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(n[b], n[a]) })
	parts := make([]string, len(idx))
	for j, i := range idx {
		parts[j] = est + human.Plural(n[i], TypeNames[i])
	}
	return strings.Join(parts, ", ")
}

func (t *textWriter) domains(est string) {
	r, w := t.r, t.w
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
	fmt.Fprintf(w, "\n%s\n", r.byWhat("", "domain"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var restB, restK int64
	n := t.limit(len(ds), textDomains)
	for i, d := range ds {
		if i >= n {
			restB += d.bytes
			restK += d.keys
			continue
		}
		fmt.Fprintf(tw, "  %s\t%11s\t%4s\t%s\n", d.name, r.bytesCell(est, d.bytes), r.pctCell(d.bytes), keysText(est, d.keys))
	}
	if len(ds) > n {
		fmt.Fprintf(tw, "  … %d more\t%11s\t%4s\t%s\n", len(ds)-n, r.bytesCell(est, restB), r.pctCell(restB), keysText(est, restK))
	}
	tw.Flush()
}

// prefixes lists memory by key prefix: by default the largest top-level
// prefixes with their largest children, every node with Verbose.
func (t *textWriter) prefixes(est string) {
	r, w := t.r, t.w
	if len(r.Prefixes) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", r.byWhat("", "prefix"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	shown, tops, kids := 0, 0, 0
	for _, p := range r.Prefixes {
		if !t.o.Verbose {
			switch {
			case p.Depth == 1:
				tops++
				kids = 0
				if tops > textPrefixes {
					continue
				}
			case p.Depth == 2 && tops <= textPrefixes && kids < 2:
				kids++
			default:
				continue
			}
		}
		shown++
		fmt.Fprintf(tw, "  %s%s\t%11s\t%4s\t%s\n", strings.Repeat("  ", p.Depth-1), show(p.Prefix), r.bytesCell(est, p.Bytes), r.pctCell(p.Bytes), keysText(est, p.Keys))
	}
	tw.Flush()
	t.more(len(r.Prefixes)-shown, "prefixes")
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
	if est == "" {
		return human.Plural(n, "key")
	}
	return est + fmtCount(n) + " keys"
}

// haveText is "1 template has", "3 templates have".
func haveText(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun + " has"
	}
	return human.Plural(n, noun) + " have"
}

func (t *textWriter) templates(est string) {
	r, w := t.r, t.w
	if len(r.NotChecked) > 0 {
		fmt.Fprintf(w, "\n%s\n", r.byWhat("families", ""))
	} else {
		fmt.Fprintf(w, "\n%s\n", r.byWhat("templates and families", ""))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  group\towner\tkeys\tmemory\tno TTL\tTTL p50\tfindings\n")
	n := t.limit(len(r.Groups), textTemplates)
	for _, g := range r.Groups[:n] {
		name := show(g.Name) + dbText(g.DB)
		if g.Kind == KindPrefix && g.Name != OtherGroup && len(r.NotChecked) == 0 {
			name += " (unregistered)"
		}
		p50 := "-"
		if g.WithTTL > 0 {
			p50 = "≈" + fmtApprox(secDur(g.TTLSeconds.P50))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s%s\t%s\t%s\t%s\t%s\n", name, human.OrDash(g.Owner), est, fmtCount(g.Keys), r.bytesCell(est, g.Bytes), fmtCount(g.NoTTL), p50, fmtCount(g.Findings))
	}
	tw.Flush()
	t.more(len(r.Groups)-n, "groups")
}

func (t *textWriter) rules() {
	r, w := t.r, t.w
	fmt.Fprintf(w, "\nfindings by rule (%s explains each)\n", strings.TrimSuffix(r.docURL(""), "#"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, rw := range r.ruleRows() {
		ex := ""
		if rw.Example != nil {
			ex = showKey(rw.Example.Key, rw.Example.KeyLen) + dbText(rw.Example.DB) + ": " + rw.Example.Message
			if n := 100; utf8.RuneCountInString(ex) > n {
				ex = string([]rune(ex)[:n]) + "…"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", rw.Severity, rw.Rule, fmtCount(rw.Count), ex)
	}
	tw.Flush()
	if len(r.FindingsOmitted) > 0 {
		fmt.Fprintf(w, "  (lists are capped per rule; %s findings are counted but not listed)\n", fmtCount(sumValues(r.FindingsOmitted)))
	}
}

// dbText is " (db N)" for a name of a multi-database report.
func dbText(db *int) string {
	if db == nil {
		return ""
	}
	return fmt.Sprintf(" (db %d)", *db)
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

// coverage writes the coverage block of the header: its summary, the
// nodes walked (a few unless verbose) and every part not covered.
func (t *textWriter) coverage() {
	c := t.r.Coverage
	if c == nil {
		return
	}
	fmt.Fprintf(t.w, "coverage: %s\n", c.Summary())
	nodes, gaps := c.Lines()
	n := t.limit(len(nodes), textCoverageNodes)
	// The lines are the report's own words about its nodes: no key in
	// them, nothing to quote.
	for _, l := range nodes[:n] {
		fmt.Fprintf(t.w, "  %s\n", l)
	}
	t.more(len(nodes)-n, "nodes")
	for _, g := range gaps {
		fmt.Fprintf(t.w, "  not covered: %s\n", g)
	}
}

// MemoryUnmeasured reports a report of keys none of whose memory could be
// read (a server without MEMORY USAGE, or one that refused it): its byte
// figures are not zeros but unknowns, and are written so.
func (r *Report) MemoryUnmeasured() bool {
	return r.Summary.Keys > 0 && r.Summary.Bytes == 0 && r.Summary.BytesUnknown > 0
}

// memoryText is the report's memory figure with its margin, or "memory
// not measured".
func (r *Report) memoryText(est string) string {
	if r.MemoryUnmeasured() {
		return "memory not measured"
	}
	return est + fmtBytes(r.Summary.Bytes) + r.marginText()
}

// byWhat is a table's heading: "memory by domain", "families by
// memory"; keys instead of memory when it was not measured.
func (r *Report) byWhat(rows, by string) string {
	h := "memory"
	if r.MemoryUnmeasured() {
		h = "keys"
	}
	if rows != "" {
		h = rows + " by " + h
	} else {
		h += " by " + by
	}
	if r.MemoryUnmeasured() {
		h += " (memory not measured)"
	}
	return h
}

// bytesCell is a memory figure after prefix, or "-" without a prefix when
// memory was not measured.
func (r *Report) bytesCell(prefix string, n int64) string {
	if r.MemoryUnmeasured() {
		if strings.HasPrefix(prefix, ",") {
			return ""
		}
		return "-"
	}
	return prefix + fmtBytes(n)
}

// bytesOrDash is a memory figure, or "-" when memory was not measured.
func (r *Report) bytesOrDash(n int64) string {
	if r.MemoryUnmeasured() {
		return "-"
	}
	return fmtBytes(n)
}

// pctCell is n's share of the report's memory, "" when not measured.
func (r *Report) pctCell(n int64) string {
	if r.MemoryUnmeasured() {
		return ""
	}
	return pct(n, r.Summary.Bytes)
}

// marginText is " ± 3%" after a sampled memory figure (its 95% margin
// relative to the figure), or "".
func (r *Report) marginText() string {
	if r.Sample == nil || r.Sample.BytesMargin <= 0 {
		return ""
	}
	if r.Summary.Bytes <= 0 {
		return " ±" + fmtBytes(r.Sample.BytesMargin)
	}
	p := 100 * float64(r.Sample.BytesMargin) / float64(r.Summary.Bytes)
	if p < 9.95 {
		return fmt.Sprintf(" ± %.1f%%", p)
	}
	return fmt.Sprintf(" ± %.0f%%", p)
}
