package dashboard

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

// The view model: what the pages, the exporter and the history need from
// one audit, built from its report in one place (snapshotOf, pointOf).

// Unregistered is the domain name the pages and metrics give the inferred
// families of keys that match no template.
const Unregistered = "(unregistered)"

// sourceServerLFU is the source of the hot keys the audit found from the
// server's LFU counters.
const sourceServerLFU = "server LFU"

// noDomain is the domain of a template group without one.
const noDomain = "(none)"

// Snapshot is one audit as the dashboard shows it.
type Snapshot struct {
	ID        string  // the audit's start, 20060102T150405.000Z; names its history file
	Report    *Report // as audited, for /api/report.json and the findings
	Target    string
	Kind      string // redis|cluster|rdb
	Nodes     int
	StartedAt time.Time
	Duration  time.Duration
	Complete  bool
	Estimate  bool // counts are extrapolated from a sample
	Stopped   []Stop
	Notes     []string
	Covered   float64  // the part of the keyspace covered (coverage share; 1 for a complete report without coverage)
	Coverage  string   // the coverage in one line; "" when the report has none
	Uncovered []string // the parts not covered, and why

	Totals            Totals // the whole keyspace
	Unregistered      int64
	UnregisteredBytes int64
	BytesUnknown      int64
	FindingCount      int64
	Errors            int64
	Warnings          int64
	Infos             int64

	Domains   []DomainRow   // by memory; the unregistered families last
	Templates []TemplateRow // every registry template and every template seen, by memory
	Families  []FamilyRow   // inferred families of unregistered keys, by memory
	Unused    []string      // registry templates without keys
	Rules     []RuleRow     // findings per rule
	TopKeys   []KeyRow
	TTL       []TTLBar
	HotKeys   []HotKey
	Writers   []TemplateWriters // templates with writer records, second writers first

	// RuleSeverity counts findings per rule and severity; findings over
	// the report's per-rule cap have no listed severity and count as
	// severity "unlisted".
	RuleSeverity map[[2]string]int64

	WritersErr string // why writer records could not be read
	HotKeysErr string

	byName map[string]int // Templates index by name
	owners []string       // owners with findings, sorted
}

// Totals are a keyspace part's keys, memory and keys without TTL.
// MemoryUnmeasured reports a snapshot of keys none of whose memory could be
// read (a server without MEMORY USAGE): its byte figures are unknowns, not
// zeros.
func (s *Snapshot) MemoryUnmeasured() bool {
	return s.Totals.Keys > 0 && s.Totals.Bytes == 0 && s.BytesUnknown > 0
}

type Totals struct {
	Keys  int64
	Bytes int64
	NoTTL int64
}

// Stop is a node whose walk stopped early.
type Stop struct {
	Node, Reason string
	Keys         int64
}

// DomainRow is one domain (first key segment) or the unregistered keys.
type DomainRow struct {
	Name, Owner, Desc string
	Templates         int // templates with keys (families for the unregistered row)
	Totals
	Findings int64
}

// TemplateRow is one template: its registry entry and what the audit saw.
type TemplateRow struct {
	Name, Owner, Domain, Desc string
	Declared                  bool   // in the registry
	Type                      string // the declared type, or the type most keys had
	Types                     []TypeCount
	TTL, Jitter               time.Duration // declared
	Persistent, Guard         bool
	AllowedWriters, Readers   []string
	Totals
	WithTTL                int64
	TTLMin, TTLP50, TTLMax int64    // seconds, of the keys with a TTL
	TTLBars                []TTLBar // keys by remaining TTL, in the classes of the keyspace's histogram
	Findings               int64
	Writers                []Writer // from the SDK's records
	HotKeys                int
}

// TypeCount is keys of one Redis type.
type TypeCount struct {
	Type string
	Keys int64
}

// SecondWriter reports whether more than one service wrote the template.
func (t *TemplateRow) SecondWriter() bool { return len(t.Writers) > 1 }

// Disallowed counts writers the registry does not allow.
func (t *TemplateRow) Disallowed() int { return disallowed(t.Writers) }

// disallowed counts the writers the registry does not allow.
func disallowed(ws []Writer) int {
	n := 0
	for _, w := range ws {
		if !w.Allowed {
			n++
		}
	}
	return n
}

// FamilyRow is an inferred family of unregistered keys.
type FamilyRow struct {
	Name, Domain string
	Totals
	TTLMax    int64
	Findings  int64
	Example   string
	Suggested string // a registry entry to paste under keys:
}

// RuleRow is the findings of one rule.
type RuleRow struct {
	Rule, Severity string // Severity of its listed findings ("" none listed; "mixed")
	Count, Omitted int64
}

// KeyRow is one of the largest keys.
type KeyRow struct {
	Key, Type, Template, Node string
	Bytes, Elements           int64
	TTL                       string
}

// FindingRow is one finding as a page lists it.
type FindingRow struct {
	Rule, Severity, Key, Template, Owner, Message, Hint string
}

// TTLBar is one bar of the keyspace's TTL histogram.
type TTLBar struct {
	Label string
	Keys  int64
	Bytes int64
}

// Point is what the history keeps of one audit: totals for the trend lines.
type Point struct {
	ID        string
	At        time.Time
	Duration  time.Duration
	Complete  bool
	Estimate  bool
	Totals    Totals
	Unreg     int64 // unregistered keys
	Findings  int64
	Domains   map[string]Totals
	Templates map[string]Totals
	// Registry names what the audit's registry declared (its report's
	// registry_digest): the history says where it changed, since groups
	// and findings then change by the registry alone.
	Registry string
	// NoRegistry: the audit ran without a registry (every key was of an
	// inferred family; Unreg counts them all and means nothing).
	NoRegistry bool
}

// registryID names the registry of the audit at p for the history's
// "registry changed": "" when unknown (a report older than digests).
func (p Point) registryID() string {
	if p.NoRegistry {
		return "none"
	}
	return p.Registry
}

// registryChanged reports whether the audit at now ran under a registry
// that declares otherwise than the one of the audit before it, or one of
// the two without a registry; false when a report does not say (older than
// digests).
func registryChanged(before, now Point) bool {
	b, n := before.registryID(), now.registryID()
	return b != "" && n != "" && b != n
}

// registryMarks are the times of the points whose registry changed from the
// point before: the trend charts mark them, where the lines move by the
// registry alone.
func registryMarks(pts []Point) []time.Time {
	var at []time.Time
	for i := 1; i < len(pts); i++ {
		if registryChanged(pts[i-1], pts[i]) {
			at = append(at, pts[i].At)
		}
	}
	return at
}

// NoRegistry reports whether the audit ran without a registry: every key
// is then of an inferred family, which the pages do not call
// unregistered.
func (s *Snapshot) NoRegistry() bool { return s.Report != nil && s.Report.WithoutRegistry() }

// auditID names an audit by its start time, as its history file does.
func auditID(t time.Time) string { return t.UTC().Format(historyLayout) }

// snapshotOf builds the view of rep. reg may be nil (a report read back
// without its registry); writers and hot keys are added by the caller.
func snapshotOf(rep *Report, reg *registry.Registry) *Snapshot {
	s := &Snapshot{
		ID: auditID(rep.StartedAt), Report: rep,
		Target: rep.Source.Target, Kind: rep.Source.Kind, Nodes: rep.Source.Nodes,
		StartedAt: rep.StartedAt, Duration: time.Duration(rep.DurationMS) * time.Millisecond,
		Complete: rep.Complete, Estimate: rep.Estimate, Notes: rep.Notes, Unused: rep.UnusedTemplates,
		Totals:       Totals{Keys: rep.Summary.Keys, Bytes: rep.Summary.Bytes, NoTTL: rep.Summary.NoTTL},
		Unregistered: rep.Summary.Unregistered, BytesUnknown: rep.Summary.BytesUnknown,
		FindingCount: rep.Summary.Findings,
		Errors:       rep.Summary.BySeverity.Error, Warnings: rep.Summary.BySeverity.Warning, Infos: rep.Summary.BySeverity.Info,
		byName: map[string]int{},
	}
	for _, st := range rep.Stopped {
		s.Stopped = append(s.Stopped, Stop{Node: st.Node, Reason: st.Reason, Keys: st.Keys})
	}
	s.Covered = b2f(rep.Complete)
	if c := rep.Coverage; c != nil {
		s.Covered, s.Coverage = c.Share, c.Summary()
		_, s.Uncovered = c.Lines()
	}
	s.templates(rep, reg)
	s.families(rep)
	s.domains(reg)
	s.rules(rep)
	for i := range rep.TopKeys {
		k := &rep.TopKeys[i]
		ttl := "unknown"
		if k.TTLMS != nil {
			ttl = ttlText(*k.TTLMS)
		}
		s.TopKeys = append(s.TopKeys, KeyRow{Key: displayKey(k.Key, k.KeyLen), Type: k.Type, Template: k.Template, Node: k.Node,
			Bytes: k.Bytes, Elements: k.Elements, TTL: ttl})
	}
	for _, b := range rep.TTLHistogram {
		s.TTL = append(s.TTL, TTLBar{Label: b.Label, Keys: b.Keys, Bytes: b.Bytes})
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Rule != finding.HotKey {
			continue
		}
		s.HotKeys = append(s.HotKeys, HotKey{Key: displayKey(f.Key, f.KeyLen), Template: f.Template, Owner: f.Owner, Source: sourceServerLFU, Detail: f.Message})
		if j, ok := s.byName[f.Template]; ok {
			s.Templates[j].HotKeys++
		}
	}
	return s
}

// templates fills Templates from the report's template groups and the
// registry's entries (those without keys get a row of zeros).
func (s *Snapshot) templates(rep *Report, reg *registry.Registry) {
	add := func(row TemplateRow) *TemplateRow {
		if i, ok := s.byName[row.Name]; ok {
			return &s.Templates[i]
		}
		s.byName[row.Name] = len(s.Templates)
		s.Templates = append(s.Templates, row)
		return &s.Templates[len(s.Templates)-1]
	}
	if reg != nil {
		for _, e := range reg.Entries {
			row := TemplateRow{Name: e.Key, Owner: e.Owner, Domain: e.Domain, Desc: e.Desc, Declared: true,
				Type: e.Type, TTL: e.TTL, Jitter: e.TTLJitter, Persistent: e.Persistent, Guard: e.Guard,
				AllowedWriters: e.Writers, Readers: e.Readers}
			add(row)
		}
	}
	counted := map[string]bool{}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		if g.Kind != kindTemplate {
			continue
		}
		t := add(TemplateRow{Name: g.Name, Owner: g.Owner, Domain: g.Domain})
		if counted[g.Name] {
			// The template's group in another database: add it up.
			t.addGroup(g, ttlBars(rep.TTLHistogram, g.TTLHistogram))
			continue
		}
		counted[g.Name] = true
		t.Totals = Totals{Keys: g.Keys, Bytes: g.Bytes, NoTTL: g.NoTTL}
		t.WithTTL, t.Findings = g.WithTTL, g.Findings
		t.TTLMin, t.TTLP50, t.TTLMax = g.TTLSeconds.Min, g.TTLSeconds.P50, g.TTLSeconds.Max
		t.TTLBars = ttlBars(rep.TTLHistogram, g.TTLHistogram)
		t.Types = typeCounts(g.Types)
		if t.Type == "" && len(t.Types) > 0 {
			t.Type = t.Types[0].Type
		}
		if t.Owner == "" {
			t.Owner = g.Owner
		}
		if t.Domain == "" {
			t.Domain = g.Domain
		}
	}
	for i := range s.Templates {
		if s.Templates[i].Domain == "" {
			s.Templates[i].Domain = noDomain
		}
	}
	slices.SortStableFunc(s.Templates, func(a, b TemplateRow) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Name, b.Name))
	})
	for i := range s.Templates {
		s.byName[s.Templates[i].Name] = i
	}
}

// ttlBars are a group's TTL buckets as bars: every class of the
// keyspace's histogram in its order (so that every template's chart has
// the same axis), the group's keys and bytes in each; the group's own
// buckets as they are when the report has no keyspace histogram.
func ttlBars(all, group []reportTTLBucket) []TTLBar {
	if len(group) == 0 {
		return nil
	}
	var out []TTLBar
	if len(all) == 0 {
		for _, b := range group {
			out = append(out, TTLBar{Label: b.Label, Keys: b.Keys, Bytes: b.Bytes})
		}
		return out
	}
	for _, a := range all {
		bar := TTLBar{Label: a.Label}
		for _, b := range group {
			if b.Label == a.Label {
				bar.Keys, bar.Bytes = b.Keys, b.Bytes
			}
		}
		out = append(out, bar)
	}
	return out
}

// addGroup adds the template's group of another database to the row:
// counts add up, TTL bounds widen, the median is the larger group's.
func (t *TemplateRow) addGroup(g *reportGroup, bars []TTLBar) {
	if g.WithTTL > 0 {
		if t.WithTTL == 0 || g.TTLSeconds.Min < t.TTLMin {
			t.TTLMin = g.TTLSeconds.Min
		}
		t.TTLMax = max(t.TTLMax, g.TTLSeconds.Max)
		if g.WithTTL > t.WithTTL {
			t.TTLP50 = g.TTLSeconds.P50
		}
	}
	t.Keys += g.Keys
	t.Bytes += g.Bytes
	t.NoTTL += g.NoTTL
	t.WithTTL += g.WithTTL
	t.Findings += g.Findings
	types := map[string]int64{}
	for _, c := range t.Types {
		types[c.Type] += c.Keys
	}
	for k, n := range g.Types {
		types[k] += n
	}
	t.Types = typeCounts(types)
	for _, b := range bars {
		i := slices.IndexFunc(t.TTLBars, func(x TTLBar) bool { return x.Label == b.Label })
		if i < 0 {
			t.TTLBars = append(t.TTLBars, b)
			continue
		}
		t.TTLBars[i].Keys += b.Keys
		t.TTLBars[i].Bytes += b.Bytes
	}
}

func typeCounts(m map[string]int64) []TypeCount {
	out := make([]TypeCount, 0, len(m))
	for t, n := range m {
		out = append(out, TypeCount{t, n})
	}
	slices.SortFunc(out, func(a, b TypeCount) int { return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Type, b.Type)) })
	return out
}

func (s *Snapshot) families(rep *Report) {
	for i := range rep.Groups {
		g := &rep.Groups[i]
		if g.Kind == kindTemplate {
			continue
		}
		s.Families = append(s.Families, FamilyRow{Name: g.Name, Domain: g.Domain,
			Totals: Totals{Keys: g.Keys, Bytes: g.Bytes, NoTTL: g.NoTTL}, TTLMax: g.TTLSeconds.Max, Findings: g.Findings,
			Example: displayKey(g.Example, 0), Suggested: g.Suggested})
		s.UnregisteredBytes += g.Bytes
	}
	slices.SortStableFunc(s.Families, func(a, b FamilyRow) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Keys, a.Keys))
	})
}

// domains sums templates per domain, then adds one row for every
// unregistered family together.
func (s *Snapshot) domains(reg *registry.Registry) {
	idx := map[string]int{}
	for i := range s.Templates {
		t := &s.Templates[i]
		j, ok := idx[t.Domain]
		if !ok {
			j = len(s.Domains)
			idx[t.Domain] = j
			row := DomainRow{Name: t.Domain}
			if reg != nil {
				if d, ok := reg.Domain(t.Domain); ok {
					row.Owner, row.Desc = d.Owner, d.Desc
				}
			}
			s.Domains = append(s.Domains, row)
		}
		d := &s.Domains[j]
		if t.Keys > 0 {
			d.Templates++
		}
		d.Keys += t.Keys
		d.Bytes += t.Bytes
		d.NoTTL += t.NoTTL
		d.Findings += t.Findings
	}
	slices.SortStableFunc(s.Domains, func(a, b DomainRow) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Name, b.Name))
	})
	if len(s.Families) > 0 {
		u := DomainRow{Name: Unregistered, Desc: "keys that match no template", Templates: len(s.Families)}
		for _, f := range s.Families {
			u.Keys += f.Keys
			u.Bytes += f.Bytes
			u.NoTTL += f.NoTTL
			u.Findings += f.Findings
		}
		s.Domains = append(s.Domains, u)
	}
}

func (s *Snapshot) rules(rep *Report) {
	sev := map[string]string{}
	s.RuleSeverity = map[[2]string]int64{}
	listed := map[string]int64{}
	owners := map[string]bool{}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Owner != "" {
			owners[f.Owner] = true
		}
		name := f.Severity.String()
		switch prev, ok := sev[f.Rule]; {
		case !ok:
			sev[f.Rule] = name
		case prev != name:
			sev[f.Rule] = "mixed"
		}
		s.RuleSeverity[[2]string{f.Rule, name}]++
		listed[f.Rule]++
	}
	s.owners = slices.Sorted(maps.Keys(owners))
	for rule, n := range rep.Summary.ByRule {
		s.Rules = append(s.Rules, RuleRow{Rule: rule, Severity: sev[rule], Count: n, Omitted: rep.FindingsOmitted[rule]})
		if rest := n - listed[rule]; rest > 0 {
			s.RuleSeverity[[2]string{rule, "unlisted"}] += rest
		}
	}
	slices.SortFunc(s.Rules, func(a, b RuleRow) int {
		return cmp.Or(cmp.Compare(sevRank(b.Severity), sevRank(a.Severity)), cmp.Compare(b.Count, a.Count), strings.Compare(a.Rule, b.Rule))
	})
}

func sevRank(s string) int {
	switch s {
	case "error":
		return 3
	case "mixed":
		return 2
	case "warning":
		return 1
	}
	return 0
}

// Template returns the row of the template named name.
func (s *Snapshot) Template(name string) (*TemplateRow, bool) {
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return &s.Templates[i], true
}

// withWriters attaches writer records to the templates.
func (s *Snapshot) withWriters(tws []TemplateWriters) {
	s.Writers = slices.Clone(tws)
	for _, tw := range tws {
		if i, ok := s.byName[tw.Template]; ok {
			s.Templates[i].Writers = tw.Writers
		}
	}
	slices.SortStableFunc(s.Writers, func(a, b TemplateWriters) int {
		return cmp.Or(cmp.Compare(b.Disallowed(), a.Disallowed()), cmp.Compare(len(b.Writers), len(a.Writers)), strings.Compare(a.Template, b.Template))
	})
}

// withHotKeys adds hot keys reported by an SDK source.
func (s *Snapshot) withHotKeys(hks []HotKey) {
	for _, h := range hks {
		h.Key = displayKey(h.Key, 0)
		s.HotKeys = append(s.HotKeys, h)
		if i, ok := s.byName[h.Template]; ok {
			s.Templates[i].HotKeys++
		}
	}
}

// FindingFilter selects findings.
type FindingFilter struct {
	Rule, Severity, Owner, Template, Query string
}

func (f *FindingFilter) match(x *reportFinding) bool {
	return (f.Rule == "" || x.Rule == f.Rule) &&
		(f.Severity == "" || x.Severity.String() == f.Severity) &&
		(f.Owner == "" || x.Owner == f.Owner) &&
		(f.Template == "" || x.Template == f.Template) &&
		(f.Query == "" || strings.Contains(x.Key, f.Query) || strings.Contains(x.Message, f.Query))
}

// Findings returns the findings that f selects, from the offset-th on, at
// most limit of them, and how many f selects in all.
func (s *Snapshot) Findings(f FindingFilter, offset, limit int) ([]FindingRow, int) {
	var rows []FindingRow
	n := 0
	fs := s.Report.Findings
	for i := range fs {
		x := &fs[i]
		if !f.match(x) {
			continue
		}
		if n >= offset && len(rows) < limit {
			rows = append(rows, FindingRow{Rule: x.Rule, Severity: x.Severity.String(), Key: displayKey(x.Key, x.KeyLen),
				Template: x.Template, Owner: x.Owner, Message: x.Message, Hint: x.Hint})
		}
		n++
	}
	return rows, n
}

// FindingOwners lists the owners that have findings, for the filter menu.
func (s *Snapshot) FindingOwners() []string { return s.owners }

// pointOf is what the history keeps of rep.
func pointOf(rep *Report) Point {
	p := Point{ID: auditID(rep.StartedAt), At: rep.StartedAt, Duration: time.Duration(rep.DurationMS) * time.Millisecond,
		Complete: rep.Complete, Estimate: rep.Estimate,
		Totals: Totals{Keys: rep.Summary.Keys, Bytes: rep.Summary.Bytes, NoTTL: rep.Summary.NoTTL},
		Unreg:  rep.Summary.Unregistered, Findings: rep.Summary.Findings,
		Domains: map[string]Totals{}, Templates: map[string]Totals{}, Registry: rep.RegistryDigest, NoRegistry: rep.WithoutRegistry()}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		dom := g.Domain
		if g.Kind != kindTemplate {
			dom = Unregistered
		} else {
			p.Templates[g.Name] = Totals{Keys: g.Keys, Bytes: g.Bytes, NoTTL: g.NoTTL}
		}
		if dom == "" {
			dom = noDomain
		}
		d := p.Domains[dom]
		d.Keys += g.Keys
		d.Bytes += g.Bytes
		d.NoTTL += g.NoTTL
		p.Domains[dom] = d
	}
	return p
}

// displayKey shows a key as text: printable runes as they are, other
// bytes escaped (\x00, \n), and the full length when the report cut it.
func displayKey(k string, fullLen int) string {
	clean := true
	for _, r := range k {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	out := k
	if !clean {
		var b strings.Builder
		for i := 0; i < len(k); {
			r, n := utf8.DecodeRuneInString(k[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				b.WriteString(`\x`)
				b.WriteString(hex2(k[i]))
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\t':
				b.WriteString(`\t`)
			case !unicode.IsPrint(r):
				for j := range n {
					b.WriteString(`\x`)
					b.WriteString(hex2(k[i+j]))
				}
			default:
				b.WriteString(k[i : i+n])
			}
			i += n
		}
		out = b.String()
	}
	if fullLen > len(k) {
		out += "… (" + fmtCount(int64(fullLen)) + " bytes)"
	}
	return out
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
