package inventory

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/hugepage"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/valueform"

	"github.com/keyguard/keyguard/keytmpl"
)

// Report builds the report of everything added so far, with the State
// that merge and resume carry on. It does not change what the
// aggregator counts: a walker may report, add more and report again.
func (a *Aggregator) Report(meta report.Meta) *report.Report {
	rep := &report.Report{
		Source:   meta.Source,
		Registry: meta.Registry,
		// The registry the keys were grouped by: a resume or merge
		// refuses a report of another (none without a registry).
		RegistryDigest: a.registryDigest(),
		StartedAt:      meta.StartedAt.UTC(),
		DurationMS:     meta.Duration.Milliseconds(),
		Complete:       meta.Complete && len(meta.Stopped) == 0,
		Stopped:        slices.Clone(meta.Stopped),
		Notes:          slices.Clone(meta.Notes),
	}
	x := a.scale(rep)
	multi := a.multiDB()
	if multi {
		for db := range a.dbs {
			rep.Databases = append(rep.Databases, db)
		}
		slices.Sort(rep.Databases)
	}
	a.foldFamilies()
	gi := a.reportGroups(rep, x, multi)
	findings, count := a.reportFindings(multi, gi, rep.Groups)
	rep.Findings = findings
	listed := map[string]int64{}
	for i := range findings {
		listed[findings[i].Rule]++
	}
	sum := report.SeverityCount{}
	var total int64
	for id, c := range count {
		n := c.Error + c.Warning + c.Info
		total += n
		sum.Error += c.Error
		sum.Warning += c.Warning
		sum.Info += c.Info
		if n > listed[id] {
			if rep.FindingsOmitted == nil {
				rep.FindingsOmitted = map[string]int64{}
			}
			rep.FindingsOmitted[id] = n - listed[id]
		}
	}
	rep.Summary = report.Summary{
		Keys: x(a.t.keys), Bytes: x(a.t.bytes), NoTTL: x(a.t.noTTL), Unregistered: x(a.t.unregistered),
		Findings: total, BytesUnknown: x(a.t.bytesUnknown), BySeverity: sum,
	}
	if len(count) > 0 {
		rep.Summary.ByRule = map[string]int64{}
		rep.Summary.ByRuleSeverity = count
		for id, c := range count {
			rep.Summary.ByRule[id] = c.Error + c.Warning + c.Info
		}
	}
	rep.TopKeys = a.reportTop(multi)
	if a.t.keys > 0 {
		rep.TTLHistogram = make([]report.TTLBucket, ttlSlots)
		for i := range rep.TTLHistogram {
			rep.TTLHistogram[i] = report.TTLBucket{Label: ttlSlotLabel(i), Keys: x(a.ttlHist[i].keys), Bytes: x(a.ttlHist[i].bytes)}
		}
	}
	rep.Notes = append(rep.Notes, a.notes(rep.Notes, x)...)
	_, piiNotes := a.piiFindings()
	rep.Notes = append(rep.Notes, piiNotes...)

	if a.opts.NoRegistry {
		rep.NotChecked = slices.Clone(report.NoRegistryChecks)
	}
	rep.State = a.state()
	return rep
}

// scale returns the extrapolation of a sampled run (the identity
// otherwise) and marks the report as an estimate.
func (a *Aggregator) scale(rep *report.Report) func(int64) int64 {
	if !a.opts.Sampled {
		return func(n int64) int64 { return n }
	}
	rep.Estimate = true
	rep.Sample = &report.Sample{Ratio: a.opts.SampleRatio, KeysSeen: a.t.records}
	if a.opts.Weighted {
		// Each key i was probed with a probability p_i = 1/w_i of its
		// own (chosen before its size was known): the estimate Σ w·b is
		// unbiased, with the variance Σ (1-p)/p² b² over all keys, which
		// Σ (w²-w)·b² over the probed keys estimates without bias.
		rep.Sample.Stratified = true
		if a.t.bytesVar > 0 {
			rep.Sample.BytesMargin = int64(math.Ceil(1.96 * math.Sqrt(a.t.bytesVar)))
		}
		return func(n int64) int64 { return n }
	}
	if p := a.opts.SampleRatio; p > 0 && p < 1 && a.t.bytesSq > 0 {
		// Each key is in the sample with probability p: the estimate
		// S/p of the memory has the variance (1-p)/p² Σ b² over the
		// sampled keys' sizes b. The margin is 1.96 standard errors.
		rep.Sample.BytesMargin = int64(math.Ceil(1.96 * math.Sqrt((1-p)*a.t.bytesSq) / p))
	}
	if a.opts.SampleRatio <= 0 {
		rep.Notes = append(rep.Notes, "sampled audit without a sample ratio: counts are of the sample, not extrapolated")
		return func(n int64) int64 { return n }
	}
	scale := 1 / a.opts.SampleRatio
	return func(n int64) int64 { return int64(math.Round(float64(n) * scale)) }
}

// groupIndex finds a report group by kind, name and database.
type groupIndex map[groupRef]int

type groupRef struct {
	kind, name string
	db         int
}

// reportGroups fills rep.Groups (by memory) and rep.UnusedTemplates.
func (a *Aggregator) reportGroups(rep *report.Report, x func(int64) int64, multi bool) groupIndex {
	gs := make([]*group, 0, a.groupCount())
	a.eachGroup(func(g *group) { gs = append(gs, g) })
	for _, e := range a.reg.Entries {
		if !a.used(e.Index) {
			rep.UnusedTemplates = append(rep.UnusedTemplates, e.Key)
		}
	}
	slices.SortFunc(gs, func(p, q *group) int {
		return cmp.Or(cmp.Compare(q.bytes, p.bytes), cmp.Compare(q.keys, p.keys), strings.Compare(p.name, q.name),
			strings.Compare(p.kind, q.kind), cmp.Compare(p.db, q.db))
	})
	idx := make(groupIndex, len(gs))
	rep.Groups = make([]report.Group, len(gs))
	suggested := 0
	var taken []*keytmpl.Template // suggested so far
	for i, g := range gs {
		rg := report.Group{
			Name: g.name, Kind: g.kind, Owner: g.owner, Domain: g.domain,
			Keys: x(g.keys), Bytes: x(g.bytes), NoTTL: x(g.noTTL), WithTTL: x(g.withTTL),
			Types: map[string]int64{}, Findings: g.findings, Example: g.example,
		}
		if multi {
			rg.DB = intPtr(g.db)
		}
		for t, n := range g.types {
			if n > 0 {
				rg.Types[report.TypeNames[t]] = x(n)
			}
		}
		if g.ttl.n > 0 {
			rg.TTLSeconds = report.TTLStats{Min: ttlSeconds(g.ttl.min), P50: g.ttl.p50(), Max: ttlSeconds(g.ttl.max)}
		}
		for i, s := range g.ttlHist {
			if s.keys > 0 {
				rg.TTLHistogram = append(rg.TTLHistogram, report.TTLBucket{Label: ttlSlotLabel(i), Keys: x(s.keys), Bytes: x(s.bytes)})
			}
		}
		if g.kind == report.KindPrefix && g.fs != nil && suggested < maxSuggestions {
			if rg.Suggested = a.suggest(g, &taken); rg.Suggested != "" {
				suggested++
			}
		}
		rep.Groups[i] = rg
		idx[groupRef{g.kind, g.name, g.db}] = i
	}
	return idx
}

// used reports whether template i has keys in some database.
func (a *Aggregator) used(i int) bool {
	if a.entries[i].keys > 0 {
		return true
	}
	for k := range a.groups {
		if k.kind == gTemplate && k.idx == i {
			return true
		}
	}
	return false
}

const maxSuggestions = 100

// reportFindings lists the kept findings and those decided only now
// (hot-key, mixed-schema), in report order, and counts them by rule and
// severity. The groups get the late findings' counts.
func (a *Aggregator) reportFindings(multi bool, gi groupIndex, groups []report.Group) ([]report.Finding, map[string]report.SeverityCount) {
	count := map[string]report.SeverityCount{}
	type listed struct {
		rule string
		t    *findTop
		doc  string
	}
	var lists []listed
	for id, rs := range a.rules {
		count[id] = sevCount(rs.count)
		lists = append(lists, listed{id, &rs.kept, finding.DocURL(id)})
	}
	for _, lr := range a.lateFindings() {
		if len(lr.items) == 0 && lr.unlisted == [3]int64{} {
			continue // no zero rows: a rule is in by_rule only when it found something
		}
		t := newFindTop(a.opts.MaxFindings)
		n := lr.unlisted
		for _, it := range lr.items {
			n[it.ent.sev]++
			if i, ok := gi[it.group]; ok {
				groups[i].Findings++
			}
			t.push(it.ent, it.det)
		}
		c := count[lr.rule]
		c.Error, c.Warning, c.Info = c.Error+n[finding.Error], c.Warning+n[finding.Warning], c.Info+n[finding.Info]
		count[lr.rule] = c
		lists = append(lists, listed{lr.rule, &t, finding.DocURL(lr.rule)})
	}
	// The order is sorted on small by-value keys of the kept entries
	// (sorting the report's findings themselves would move 200 bytes a
	// swap, and a comparison through pointers misses the cache), then the
	// findings are written once, in that order: by severity (highest
	// first), rule (the rule table's order), bytes (largest first), then
	// key; the same key twice (a walker's duplicate) once.
	type ref struct {
		sev   finding.Severity
		l     int32 // the list: lists are in the rule table's order
		score int64
		key   string
		pre   uint64 // the bytes of key after its run's common prefix: 8, big-endian, zero-padded
		e     *fentry
	}
	slices.SortFunc(lists, func(p, q listed) int {
		return cmp.Or(cmp.Compare(report.RuleRank(p.rule), report.RuleRank(q.rule)), strings.Compare(p.rule, q.rule))
	})
	// Severity and list come first in the order: the refs are laid out
	// by (severity, list) at once, and each such run is sorted on its
	// own, the runs side by side (the report is built once the decoders
	// and aggregators are done: the cores are free).
	bucket := func(sev finding.Severity, l int) int { return int(finding.Error-sev)*len(lists) + l }
	starts := make([]int, 3*len(lists)+1)
	for li, l := range lists {
		for _, e := range l.t.kept() {
			starts[bucket(e.sev, li)+1]++
		}
	}
	for b := 1; b < len(starts); b++ {
		starts[b] += starts[b-1]
	}
	refs := hugepage.MakeSlice[ref](starts[len(starts)-1])
	at := slices.Clone(starts)
	for li, l := range lists {
		ents := l.t.kept()
		for i := range ents {
			e := &ents[i]
			b := bucket(e.sev, li)
			refs[at[b]] = ref{sev: e.sev, l: int32(li), score: e.score, key: e.key, e: e}
			at[b]++
		}
	}
	hugepage.Filled(refs)
	var runs [][]ref
	for b := range len(starts) - 1 {
		if starts[b+1]-starts[b] > 1 {
			runs = append(runs, refs[starts[b]:starts[b+1]])
		}
	}
	slices.SortFunc(runs, func(p, q []ref) int { return len(q) - len(p) }) // the longest first, for balance
	var next atomic.Int32
	sortRuns := func() {
		for i := int(next.Add(1)) - 1; i < len(runs); i = int(next.Add(1)) - 1 {
			run := runs[i]
			// Keys of one rule share long prefixes (see prefixWords).
			prefixWords(run, func(r *ref) (string, *uint64) { return r.key, &r.pre })
			slices.SortFunc(run, func(p, q ref) int {
				if p.score != q.score {
					return cmp.Compare(q.score, p.score)
				}
				if p.pre != q.pre {
					return cmp.Compare(p.pre, q.pre)
				}
				return cmp.Or(strings.Compare(p.key, q.key), cmp.Compare(p.e.keyLen, q.e.keyLen), cmp.Compare(p.e.db, q.e.db))
			})
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(runs)) - 1 {
		wg.Go(sortRuns)
	}
	sortRuns()
	wg.Wait()
	refs = slices.CompactFunc(refs, func(p, q ref) bool {
		return p.l == q.l && p.key == q.key && p.e.keyLen == q.e.keyLen && p.e.db == q.e.db
	})
	out := hugepage.MakeSlice[report.Finding](len(refs))
	defer hugepage.Filled(out)
	// Written on every core: the first write to each page of out is a
	// page fault, which took most of this loop's time on one core.
	inChunks(len(refs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := &refs[i]
			l := lists[r.l]
			e, d := r.e, &l.t.details[r.e.detail]
			f := &out[i]
			f.Finding = finding.Finding{Rule: l.rule, Severity: e.sev, Key: e.key, Template: d.template, Owner: d.owner,
				Message: ttlMessage(d.message, e.ttlSec(), d.tail), Hint: d.hint}
			f.KeyBase64, f.Bytes, f.Doc = report.KeyBase64(e.key), e.score, l.doc
			if int(e.keyLen) > len(e.key) {
				f.KeyLen = int(e.keyLen)
			}
			if multi {
				f.DB = intPtr(int(e.db))
			}
		}
	})
	return out, count
}

// inChunks calls f on consecutive ranges of 0..n, on as many goroutines
// as there are cores (a range of at least 4,096), and returns when all
// are done. f must only write what its range owns.
func inChunks(n int, f func(lo, hi int)) {
	const minChunk = 4096
	parts := min(runtime.GOMAXPROCS(0), n/minChunk)
	if parts < 2 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { f(n*p/parts, n*(p+1)/parts) })
	}
	f(0, n/parts)
	wg.Wait()
}

// commonPrefix is the length of the prefix a and b share.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// prefixWords sets each element's word (as key and word give them) to 8
// bytes of its key past the prefix all the keys share: keys of one rule
// or list share long prefixes, and compared past it, 8 bytes at a time
// decide most comparisons.
func prefixWords[T any](s []T, key func(*T) (string, *uint64)) {
	if len(s) == 0 {
		return
	}
	first, _ := key(&s[0])
	cp := len(first)
	for i := 1; i < len(s); i++ {
		k, _ := key(&s[i])
		cp = min(cp, commonPrefix(first, k))
	}
	for i := range s {
		k, w := key(&s[i])
		*w = prefix8(k[cp:])
	}
}

// prefix8 is the first 8 bytes of s as a big-endian number, zero-padded:
// where two differ, they order as the strings do.
func prefix8(s string) uint64 {
	var x uint64
	for i := range 8 {
		x <<= 8
		if i < len(s) {
			x |= uint64(s[i])
		}
	}
	return x
}

func sevCount(n [3]int64) report.SeverityCount {
	return report.SeverityCount{Error: n[finding.Error], Warning: n[finding.Warning], Info: n[finding.Info]}
}

func intPtr(n int) *int { return &n }

func dbOf(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// lateRule is the findings of a rule decided at report time: those it
// lists, and how many more it counts (by severity).
type lateRule struct {
	rule     string
	items    []lateItem
	unlisted [3]int64
}

type lateItem struct {
	ent   fentry
	det   findDetail
	group groupRef
}

func (a *Aggregator) lateFindings() []lateRule {
	mixed, schema := a.schemaFindings()
	pii, _ := a.piiFindings()
	return []lateRule{{rule: finding.HotKey, items: a.hotFindings()}, mixed, schema, pii}
}

func newLate(f *finding.Finding, score int64, keyLen, db int, g groupRef) lateItem {
	return lateItem{
		ent:   fentry{score: score, hash: keyHash(f.Key), key: f.Key, keyLen: keyLen32(keyLen), db: int32(db), sev: f.Severity},
		det:   findDetail{template: f.Template, owner: f.Owner, message: f.Message, hint: f.Hint},
		group: g,
	}
}

// hotFindings are the keys of the hot set at or above the floor.
func (a *Aggregator) hotFindings() []lateItem {
	keys, hots := a.hot.list()
	n := 0
	for i := range keys {
		if keys[i].score >= int64(a.opts.HotFreqFloor) {
			n++
		}
	}
	out := make([]lateItem, 0, n) // one allocation: a list of 100,000 grew by append ~20 times
	// The message depends on the counter alone (0–255): written once a
	// counter, not once a key of a long list.
	msgs := map[[2]int64]string{}
	for i := range keys {
		k, h := &keys[i], &hots[i]
		if k.score < int64(a.opts.HotFreqFloor) {
			continue
		}
		mk := [2]int64{k.score, 0}
		if h.protected {
			mk[1] = 1
		}
		msg, ok := msgs[mk]
		if !ok {
			msg = fmt.Sprintf("LFU counter %d, among the %d most accessed keys seen (counter %d or more)", k.score, a.opts.HotKeys, a.opts.HotFreqFloor)
			if h.protected {
				msg += "; its template declares hot-key protection"
			}
			msgs[mk] = msg
		}
		f := finding.Finding{Rule: finding.HotKey, Severity: finding.Warning, Key: a.hot.name(k), Template: h.template, Owner: h.owner,
			Message: msg, Hint: "declare hot: {replicas: N, local_ttl: 5s} on its template, or cache it in the service"}
		if h.protected {
			f.Severity = finding.Info
			f.Hint = ""
		}
		out = append(out, newLate(&f, h.bytes, int(k.keyLen), int(k.db), groupRef{h.kind, h.template, int(k.db)}))
	}
	return out
}

// notes are what the aggregation itself can say about the report.
func (a *Aggregator) notes(have []string, x func(int64) int64) []string {
	var notes []string
	if a.freqKnown == 0 && a.t.keys > 0 && !slices.ContainsFunc(have, func(n string) bool { return strings.HasPrefix(n, "hot-key") }) {
		notes = append(notes, "hot-key data unavailable: no access-frequency (LFU) counter came with the keys")
	}
	if a.foldedCap > 0 {
		note := fmt.Sprintf("more than %s inferred families of unregistered keys: the %s with the most keys are listed, and %s keys of the others are counted in the group %s",
			human.Count(int64(a.opts.MaxGroups)), human.Count(int64(a.opts.MaxGroups)), human.Count(x(a.foldedCap)), report.OtherGroup)
		if a.foldedLate > 0 {
			note += fmt.Sprintf("; past %s families the keys of new ones were counted there as they came: which families are listed may depend on the order the keys came in, and a listed family may miss keys counted there", human.Count(int64(a.famCap())))
		}
		notes = append(notes, note)
	}
	if a.foldedLong > 0 {
		notes = append(notes, fmt.Sprintf("%s unregistered keys with inferred templates over %d bytes are counted in the group %s",
			human.Count(x(a.foldedLong)), maxGroupName, report.OtherGroup))
	}
	if n := max(a.top.repeats, a.hot.repeats); n > 0 {
		what := "1 key of the top or hot list appears"
		if n > 1 {
			what = human.Count(int64(n)) + " keys of the top or hot list appear"
		}
		notes = append(notes, what+" more than once in the file (Redis writes each key once per database and refuses to load a file that repeats one: the file may be damaged): the lists name each once, at its largest record, and may be shorter than asked; the groups count every record")
	}
	if a.opts.SkipFields {
		notes = append(notes, "value formats were not read, on request: the schema, mixed-schema and value-format rules were not checked")
	}
	notes = append(notes, a.censusNotes()...)
	notes = append(notes, a.formNotes()...)
	if a.t.bytesUnknown > 0 {
		notes = append(notes, fmt.Sprintf("memory of %s keys unknown: not included in bytes", human.Count(x(a.t.bytesUnknown))))
	}
	return notes
}

// reportTop lists the largest keys, largest first.
func (a *Aggregator) reportTop(multi bool) []report.TopKey {
	keys, vals := a.top.list()
	// Sorted by reference: the keys and their names are scattered.
	order := hugepage.MakeSlice[topRef](len(keys))
	for i := range keys {
		k := &keys[i]
		order[i] = topRef{bytes: k.score, key: a.top.name(k), db: k.db, i: int32(i), keyLen: k.keyLen}
	}
	hugepage.Filled(order)
	sortTopRefs(order, a.top.lendWords(2*len(order)))
	out := hugepage.MakeSlice[report.TopKey](len(keys))
	defer hugepage.Filled(out)
	// The entries' TTLs and databases point into one array each, not
	// into an allocation per key.
	ttls := make([]int64, len(keys))
	var dbs []int
	if multi {
		dbs = make([]int, len(keys))
	}
	// The entries are built in the list's order, each written where the
	// sort put it: the list's keys and values are read in a row, and
	// scattered writes do not stall the loop as scattered reads did
	// (the values' load was half of this function's time). pos maps a
	// list index to its place; the sort's scratch is free again.
	pos := a.top.lendWords(len(order))
	if pos == nil {
		pos = make([]wordKey, len(order))
	}
	// pos also holds where each name goes in one block of the names in
	// the report's order (the report's writer then reads them in a row):
	// copied in the list's order, the list's blocks are read in a row,
	// not at the sort's scattered places.
	total := 0
	for j := range order {
		p := &pos[order[j].i]
		p.j, p.w = uint32(j), uint64(total)
		total += len(order[j].key)
	}
	names := hugepage.MakeSlice[byte](total)
	defer hugepage.Filled(names)
	// On every core, as the findings (each entry, name and TTL is
	// written to its own place).
	inChunks(len(keys), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			j := pos[i].j
			k, v := &keys[i], &vals[i]
			d := a.topDet.at(v.det)
			// Written in place: a TopKey is 120 bytes, which a copy of a
			// local moved again.
			tk := &out[j]
			if name := a.top.name(k); len(name) > 0 {
				at := pos[i].w
				copy(names[at:], name)
				tk.Key = unsafe.String(&names[at], len(name))
				tk.KeyBase64 = report.KeyBase64(tk.Key)
			}
			tk.Type, tk.Bytes, tk.Elements, tk.Template, tk.Node = d.typ, k.score, v.elements, d.template, d.node
			if multi {
				dbs[j] = int(k.db)
				tk.DB = &dbs[j]
			}
			if int(k.keyLen) > int(k.n) {
				tk.KeyLen = int(k.keyLen)
			}
			switch {
			case v.ttl == -1:
				ttls[j] = -1
				tk.TTLMS = &ttls[j]
			case v.ttl > 0:
				ttls[j] = v.ttl.Milliseconds()
				tk.TTLMS = &ttls[j]
			}
		}
	})
	return out
}

// censusNotes say where value formats could not be told.
func (a *Aggregator) censusNotes() []string {
	var varied []string
	lost := false
	each := func(name string, fs *fieldState) {
		if c := fs.census; c != nil {
			if c.overflow {
				varied = append(varied, name)
			}
			for _, s := range c.sigs {
				lost = lost || s.lost
			}
		}
	}
	for i, e := range a.reg.Entries {
		each(e.Key, &a.tmplFields[i])
	}
	for _, fs := range a.famFields {
		each(fs.name, fs)
	}
	var notes []string
	if len(varied) > 0 {
		slices.Sort(varied)
		notes = append(notes, fmt.Sprintf("the values of %d templates or families hold more than %d different field sets (maps keyed by IDs, values wider than the %d fields read): mixed-schema and schema were not decided for %s",
			len(varied), maxSigs, maxFieldsPerKey, strings.Join(varied[:min(len(varied), 5)], ", ")))
	}
	if lost {
		notes = append(notes, fmt.Sprintf("more than %s keys with rare field sets: mixed-schema and schema count them all but list only the first", human.Count(maxCensusKeys)))
	}
	return notes
}

// formNotes name the templates and families whose strings come in two
// formats: JSON objects and others (text, numbers, serialized objects),
// most of the others first. A template that declares its fields is not
// among them: each such string of it is a value-format finding.
func (a *Aggregator) formNotes() []string {
	type mixed struct {
		name string
		fs   *fieldState
	}
	var all []mixed
	for i, e := range a.reg.Entries {
		if fs := &a.tmplFields[i]; !fs.formChecked && fs.objects > 0 && fs.foreign > 0 {
			all = append(all, mixed{e.Key, fs})
		}
	}
	for _, fs := range a.famFields {
		if fs.objects > 0 && fs.foreign > 0 {
			all = append(all, mixed{fs.name, fs})
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(p, q mixed) int {
		return cmp.Or(cmp.Compare(q.fs.foreign, p.fs.foreign), strings.Compare(p.name, q.name))
	})
	var list []string
	for _, m := range all[:min(len(all), 5)] {
		list = append(list, fmt.Sprintf("%s (%s JSON objects, %s: %s)", m.name, human.Count(m.fs.objects), human.Plural(m.fs.foreign, "other string"), formList(m.fs.forms)))
	}
	more := ""
	if len(all) > 5 {
		more = fmt.Sprintf(" and %d more", len(all)-5)
	}
	return []string{fmt.Sprintf("strings of two formats in one template or family, two writers' perhaps: %s%s; declare fields: on the template and the audit reports each string that is not a JSON object (value-format)",
		strings.Join(list, ", "), more)}
}

// formList names the forms of a fieldState's forms bits: "a number, text".
func formList(bits uint32) string {
	var names []string
	for f := range valueform.Form(32) {
		if bits&(1<<f) != 0 {
			names = append(names, f.String())
		}
	}
	return strings.Join(names, ", ")
}

// registryDigest is the digest of the registry the aggregator groups
// keys by, "" when it runs without one.
func (a *Aggregator) registryDigest() string {
	if a.opts.NoRegistry {
		return ""
	}
	return a.reg.Digest
}
