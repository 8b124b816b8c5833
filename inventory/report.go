package inventory

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/report"
)

// Report builds the report of everything added so far. It does not change
// the aggregator: a walker may report, add more and report again.
func (a *Aggregator) Report(meta report.Meta) *report.Report {
	rep := &report.Report{
		Source:     meta.Source,
		Registry:   meta.Registry,
		StartedAt:  meta.StartedAt.UTC(),
		DurationMS: meta.Duration.Milliseconds(),
		Complete:   meta.Complete && len(meta.Stopped) == 0,
		Stopped:    slices.Clone(meta.Stopped),
		Notes:      slices.Clone(meta.Notes),
	}
	scale := 1.0
	if a.opts.Sampled {
		rep.Estimate = true
		rep.Sample = &report.Sample{Ratio: a.opts.SampleRatio, KeysSeen: a.t.keys}
		if a.opts.SampleRatio > 0 {
			scale = 1 / a.opts.SampleRatio
		} else {
			rep.Notes = append(rep.Notes, "sampled audit without a sample ratio: counts are of the sample, not extrapolated")
		}
	}
	x := func(n int64) int64 {
		if scale == 1 {
			return n
		}
		return int64(math.Round(float64(n) * scale))
	}

	// Groups.
	var gs []*group
	for i := range a.entries {
		if a.entries[i].keys > 0 {
			gs = append(gs, &a.entries[i])
		} else {
			rep.UnusedTemplates = append(rep.UnusedTemplates, a.entries[i].name)
		}
	}
	for _, g := range a.inferred {
		gs = append(gs, g)
	}
	if a.other != nil {
		gs = append(gs, a.other)
	}
	slices.SortFunc(gs, func(p, q *group) int {
		return cmp.Or(cmp.Compare(q.bytes, p.bytes), cmp.Compare(q.keys, p.keys), strings.Compare(p.name, q.name), strings.Compare(p.kind, q.kind))
	})
	byName := make(map[string]int, len(gs))
	rep.Groups = make([]report.Group, len(gs))
	suggested := 0
	for i, g := range gs {
		rg := report.Group{
			Name: g.name, Kind: g.kind, Owner: g.owner, Domain: g.domain,
			Keys: x(g.keys), Bytes: x(g.bytes), NoTTL: x(g.noTTL), WithTTL: x(g.ttl.n),
			Types: map[string]int64{}, Findings: g.findings, Example: g.example,
		}
		for t, n := range g.types {
			if n > 0 {
				rg.Types[report.TypeNames[t]] = x(n)
			}
		}
		if g.ttl.n > 0 {
			rg.TTLSeconds = report.TTLStats{Min: ttlSeconds(g.ttl.min), P50: g.ttl.p50(), Max: ttlSeconds(g.ttl.max)}
		}
		if g.kind == report.KindPrefix && g != a.other && suggested < maxSuggestions {
			if rg.Suggested = a.suggest(g); rg.Suggested != "" {
				suggested++
			}
		}
		rep.Groups[i] = rg
		byName[g.kind+"\x00"+g.name] = i
	}
	groupOf := func(kind, name string) *report.Group {
		if i, ok := byName[kind+"\x00"+name]; ok {
			return &rep.Groups[i]
		}
		return nil
	}

	// Findings: the kept ones, plus what is decided only now. kept points
	// into the finding lists (up to MaxFindings per rule: no copy of the
	// findings besides the report's own).
	count := map[string]int64{}
	nkept := 0
	for _, rs := range a.rules {
		nkept += len(rs.kept.kept())
	}
	kept := make([]keptRef, 0, nkept)
	for id, rs := range a.rules {
		count[id] = rs.count
		ents := rs.kept.kept()
		for i := range ents {
			e := &ents[i]
			kept = append(kept, keptRef{rule: id, ent: e, det: &rs.kept.details[e.detail]})
		}
	}
	sev := a.t.sev
	late := func(id string, items []lateItem) {
		if len(items) == 0 {
			return // no zero rows: a rule is in by_rule only when it found something
		}
		for i := range items {
			items[i].hash = keyHash(items[i].key)
		}
		// The order of the finding lists (findWorse), best first, so that the
		// cut keeps what a finding list would have kept.
		slices.SortFunc(items, func(p, q lateItem) int {
			switch {
			case findWorse(q.score, q.hash, q.key, p.score, p.hash, p.key):
				return -1
			case findWorse(p.score, p.hash, p.key, q.score, q.hash, q.key):
				return 1
			}
			return 0
		})
		count[id] += int64(len(items))
		for _, it := range items {
			sev[it.sev]++
			if g := groupOf(it.kind, it.template); g != nil {
				g.Findings++
			}
		}
		if len(items) > a.opts.MaxFindings {
			items = items[:a.opts.MaxFindings]
		}
		ents, dets := make([]fentry, len(items)), make([]findDetail, len(items))
		for i := range items {
			it := &items[i].findItem
			ents[i] = fentry{score: it.score, hash: it.hash, key: it.key, keyLen: it.keyLen, sev: it.sev}
			dets[i] = findDetail{it.template, it.owner, it.message, it.hint}
			kept = append(kept, keptRef{rule: id, ent: &ents[i], det: &dets[i]})
		}
	}
	late(finding.HotKey, a.hotFindings())
	late(finding.MixedSchema, a.mixedFindings())

	order := sortFindings(kept)
	rep.Findings = make([]report.Finding, 0, len(kept))
	listed := map[string]int64{}
	for i, o := range order {
		r := &kept[o]
		e, d := r.ent, r.det
		if prev := kept[order[max(i-1, 0)]]; i > 0 && prev.rule == r.rule && prev.ent.key == e.key && prev.ent.keyLen == e.keyLen {
			continue // the same key twice (a walker's duplicate)
		}
		f := report.Finding{Finding: finding.Finding{Rule: r.rule, Severity: e.sev, Key: e.key, Template: d.template, Owner: d.owner, Message: d.message, Hint: d.hint},
			KeyBase64: report.KeyBase64(e.key)}
		if int(e.keyLen) > len(e.key) {
			f.KeyLen = int(e.keyLen)
		}
		rep.Findings = append(rep.Findings, f)
		listed[r.rule]++
	}
	var total int64
	for id, n := range count {
		total += n
		if n > listed[id] {
			if rep.FindingsOmitted == nil {
				rep.FindingsOmitted = map[string]int64{}
			}
			rep.FindingsOmitted[id] = n - listed[id]
		}
	}

	rep.Summary = report.Summary{
		Keys: x(a.t.keys), Bytes: x(a.t.bytes), NoTTL: x(a.t.noTTL), Unregistered: x(a.t.unregistered),
		Findings: total, BytesUnknown: x(a.t.bytesUnknown),
		BySeverity: report.SeverityCount{Error: sev[finding.Error], Warning: sev[finding.Warning], Info: sev[finding.Info]},
	}
	if len(count) > 0 {
		rep.Summary.ByRule = count
	}

	// Top keys.
	tops := slices.Clone(a.top.items)
	slices.SortFunc(tops, func(p, q topItem) int { return cmpRanked(p.bytes, p.key, q.bytes, q.key) })
	rep.TopKeys = make([]report.TopKey, len(tops))
	for i, t := range tops {
		tk := report.TopKey{Key: t.key, KeyBase64: report.KeyBase64(t.key), Type: t.typ, Bytes: t.bytes, Elements: t.elements,
			Template: t.template, Node: t.node, DB: t.db}
		if t.keyLen > len(t.key) {
			tk.KeyLen = t.keyLen
		}
		switch {
		case t.ttl == -1:
			v := int64(-1)
			tk.TTLMS = &v
		case t.ttl > 0:
			v := t.ttl.Milliseconds()
			tk.TTLMS = &v
		}
		rep.TopKeys[i] = tk
	}

	// TTL histogram.
	if a.t.keys > 0 {
		rep.TTLHistogram = make([]report.TTLBucket, ttlSlots)
		for i := range rep.TTLHistogram {
			label := "unknown"
			switch {
			case i < len(ttlClasses):
				label = ttlClasses[i].label
			case i == ttlSlotNone:
				label = "no TTL"
			}
			rep.TTLHistogram[i] = report.TTLBucket{Label: label, Keys: x(a.ttlHist[i].keys), Bytes: x(a.ttlHist[i].bytes)}
		}
	}

	// Notes the aggregation itself can give.
	if a.freqKnown == 0 && a.t.keys > 0 && !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "hot-key") }) {
		rep.Notes = append(rep.Notes, "hot-key data unavailable: no access-frequency (LFU) counter came with the keys")
	}
	if a.foldedCap > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("more than %d inferred families of unregistered keys: %s keys of the rest are counted in the group %s",
			a.opts.MaxGroups, report.HumanCount(x(a.foldedCap)), report.OtherGroup))
	}
	if a.foldedLong > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s unregistered keys with inferred templates over %d bytes are counted in the group %s",
			report.HumanCount(x(a.foldedLong)), maxGroupName, report.OtherGroup))
	}
	if sampled, ok := a.fieldSampleSize(); ok {
		rep.Notes = append(rep.Notes, fmt.Sprintf("mixed-schema compared the field names of a random sample of up to %d keys per template (%d keys in all): a rare mixed key can be missed",
			a.opts.FieldSamples, sampled))
	}
	if a.t.bytesUnknown > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("memory of %s keys unknown: not included in bytes", report.HumanCount(x(a.t.bytesUnknown))))
	}
	return rep
}

const maxSuggestions = 100

// lateItem is a finding decided at Report time, with its group's kind.
type lateItem struct {
	findItem
	kind string
}

// keptRef is a finding on its way to the report: its rule, its list
// entry and its texts.
type keptRef struct {
	rule string
	ent  *fentry
	det  *findDetail
}

// sortFindings orders findings as the report lists them: by severity
// (highest first), rule (SPEC order), then bytes (largest first) and key.
// It returns the order as indexes into kept.
func sortFindings(kept []keptRef) []int32 {
	// kept comes rule by rule (list by list): a block per rule.
	type block struct {
		lo, hi int
		rule   string
	}
	var blocks []block
	for i, k := range kept {
		if n := len(blocks); n > 0 && blocks[n-1].rule == k.rule {
			blocks[n-1].hi = i + 1
		} else {
			blocks = append(blocks, block{i, i + 1, k.rule})
		}
	}
	order := make([]int32, len(kept))
	for i := range order {
		order[i] = int32(i)
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		if seen[b.rule] {
			// A rule in two blocks (not how Report builds kept): sort the
			// whole list at once.
			slices.SortFunc(order, func(i, j int32) int {
				p, q := kept[i].ent, kept[j].ent
				return cmp.Or(cmp.Compare(q.sev, p.sev), cmp.Compare(report.RuleRank(kept[i].rule), report.RuleRank(kept[j].rule)),
					strings.Compare(kept[i].rule, kept[j].rule), cmp.Compare(q.score, p.score), strings.Compare(p.key, q.key))
			})
			return order
		}
		seen[b.rule] = true
	}
	// Each block on compact ranks (what a comparison reads is together
	// in memory, and a swap moves 40 bytes), then its severity runs in
	// report order.
	type run struct {
		lo, hi int // in order
		sev    finding.Severity
		rule   string
	}
	var (
		runs  []run
		ranks []rankKey
	)
	order = order[:0]
	for _, b := range blocks {
		// The keys of a rule often share a long prefix (one family): the
		// 24 bytes after it, as words, settle most comparisons without
		// going to the keys' bytes.
		first := kept[b.lo].ent.key
		common := len(first)
		for _, k := range kept[b.lo:b.hi] {
			common = min(common, commonPrefix(first, k.ent.key))
		}
		ranks = ranks[:0]
		for i := b.lo; i < b.hi; i++ {
			ranks = append(ranks, newRankKey(kept[i].ent, i, common))
		}
		sortByRank(ranks, kept, common)
		for _, r := range ranks {
			if n := len(runs); n > 0 && runs[n-1].hi == len(order) && runs[n-1].sev == r.severity() && runs[n-1].rule == b.rule {
				runs[n-1].hi++
			} else {
				runs = append(runs, run{len(order), len(order) + 1, r.severity(), b.rule})
			}
			order = append(order, r.i)
		}
	}
	slices.SortStableFunc(runs, func(p, q run) int {
		return cmp.Or(cmp.Compare(q.sev, p.sev), cmp.Compare(report.RuleRank(p.rule), report.RuleRank(q.rule)), strings.Compare(p.rule, q.rule))
	})
	sorted := make([]int32, 0, len(order))
	for _, r := range runs {
		sorted = append(sorted, order[r.lo:r.hi]...)
	}
	return sorted
}

// rankKey is what orders the findings of one rule: severity (highest
// first), bytes (largest first), then the words of the key; i is the
// finding's index in kept.
type rankKey struct {
	top   uint64 // severity in the top byte, then bytes + 1 (larger first)
	words [3]uint64
	i     int32
}

func (r *rankKey) severity() finding.Severity { return finding.Severity(r.top >> 56) }

// newRankKey is the rank of list entry k, at index i of kept, whose
// rule's keys share their first common bytes.
func newRankKey(k *fentry, i, common int) rankKey {
	// Bytes are -1 (unknown) or far below 2^56.
	b := uint64(max(k.score+1, 0))
	r := rankKey{top: uint64(k.sev)<<56 | min(b, 1<<56-1), i: int32(i)}
	for w := range r.words {
		r.words[w] = wordAt(k.key, common+8*w)
	}
	return r
}

// rankLess reports whether p's rank comes before q's in the report.
// Findings of equal ranks are ordered by their keys afterwards.
func rankLess(p, q *rankKey) bool {
	if p.top != q.top {
		return p.top > q.top
	}
	if p.words[0] != q.words[0] {
		return p.words[0] < q.words[0]
	}
	if p.words[1] != q.words[1] {
		return p.words[1] < q.words[1]
	}
	return p.words[2] < q.words[2]
}

func sameRank(p, q *rankKey) bool { return p.top == q.top && p.words == q.words }

// sortByRank sorts the findings of one rule as the report lists them:
// by rank, then the runs of equal ranks (keys alike in their 24 bytes
// past the common prefix) by key.
func sortByRank(s []rankKey, kept []keptRef, common int) {
	sortRanks(s)
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && sameRank(&s[i], &s[j]) {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(s[i:j], func(p, q rankKey) int {
				return strings.Compare(kept[p.i].ent.key[common:], kept[q.i].ent.key[common:])
			})
		}
		i = j
	}
}

// sortRanks sorts s by rankLess: a quicksort (median of three, the
// shorter side first) that finishes short ranges by insertion and falls
// back to a heapsort when it goes too deep. Written for rankKey rather
// than slices.SortFunc: the generic sort calls its comparison through a
// pointer with two 40-byte values, about four times as slow.
func sortRanks(s []rankKey) {
	sortRanksFrom(s, 0x9e3779b97f4a7c15)
}

// sortRanksFrom is sortRanks drawing pivots with the xorshift state rnd.
// The pivot is the median of three entries drawn at random: fixed
// positions (the middle, the ends) meet patterns in the finding lists
// (what the buffers' selections leave) that make every partition
// lopsided.
func sortRanksFrom(s []rankKey, rnd uint64) {
	depth := 2 * bits.Len(uint(len(s)))
	for len(s) > 12 {
		if depth == 0 {
			heapRanks(s)
			return
		}
		depth--
		// The median of three to s[0], then a Hoare partition around it.
		draw := func() int {
			rnd ^= rnd << 13
			rnd ^= rnd >> 7
			rnd ^= rnd << 17
			return int(rnd % uint64(len(s)))
		}
		a, b, c := draw(), draw(), draw()
		if rankLess(&s[b], &s[a]) {
			a, b = b, a
		}
		if rankLess(&s[c], &s[b]) { // s[a] <= s[b], s[c] < s[b]: the larger of a and c
			b = c
			if rankLess(&s[b], &s[a]) {
				b = a
			}
		}
		s[0], s[b] = s[b], s[0]
		p := s[0]
		i, j := 1, len(s)-1
		for {
			for i <= j && rankLess(&s[i], &p) {
				i++
			}
			for i <= j && rankLess(&p, &s[j]) {
				j--
			}
			if i >= j {
				break
			}
			s[i], s[j] = s[j], s[i]
			i++
			j--
		}
		s[0], s[j] = s[j], s[0]
		// s[:j] <= p = s[j] <= s[j+1:]: recurse into the shorter side.
		if j < len(s)-1-j {
			sortRanksFrom(s[:j], rnd)
			s = s[j+1:]
		} else {
			sortRanksFrom(s[j+1:], rnd)
			s = s[:j]
		}
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && rankLess(&s[j], &s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// heapRanks is the heapsort sortRanks falls back to.
func heapRanks(s []rankKey) {
	down := func(i, n int) {
		for {
			c := 2*i + 1
			if c >= n {
				return
			}
			if c+1 < n && rankLess(&s[c], &s[c+1]) {
				c++
			}
			if !rankLess(&s[i], &s[c]) {
				return
			}
			s[i], s[c] = s[c], s[i]
			i = c
		}
	}
	for i := len(s)/2 - 1; i >= 0; i-- {
		down(i, len(s))
	}
	for n := len(s) - 1; n > 0; n-- {
		s[0], s[n] = s[n], s[0]
		down(0, n)
	}
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// wordAt is s[i:i+8] as a big-endian number, zero-padded past the end of
// s. When the words of two keys differ, they order the keys as
// strings.Compare does; equal words (maybe one key ends in zero bytes
// where the other ends) leave it to the keys.
func wordAt(s string, i int) uint64 {
	if i >= 0 && i+8 <= len(s) {
		t := s[i : i+8]
		return uint64(t[0])<<56 | uint64(t[1])<<48 | uint64(t[2])<<40 | uint64(t[3])<<32 |
			uint64(t[4])<<24 | uint64(t[5])<<16 | uint64(t[6])<<8 | uint64(t[7])
	}
	var w uint64
	for j := range 8 {
		w <<= 8
		if i+j < len(s) {
			w |= uint64(s[i+j])
		}
	}
	return w
}

func cmpRanked(aScore int64, aKey string, bScore int64, bKey string) int {
	if aScore != bScore {
		return cmp.Compare(bScore, aScore)
	}
	return strings.Compare(aKey, bKey)
}

// hotFindings are the keys of the hot set at or above the floor.
func (a *Aggregator) hotFindings() []lateItem {
	var out []lateItem
	for _, h := range a.hot.items {
		if h.freq < a.opts.HotFreqFloor {
			continue
		}
		f := finding.Finding{Rule: finding.HotKey, Severity: finding.Warning, Key: h.key, Template: h.template, Owner: h.owner,
			Message: fmt.Sprintf("LFU counter %d, among the %d most accessed keys seen (counter %d or more)", h.freq, a.opts.HotKeys, a.opts.HotFreqFloor),
			Hint:    "declare hot: {replicas: N, local_ttl: 5s} on its template (seed 003), or cache it in the service"}
		if h.protected {
			f.Severity = finding.Info
			f.Message += "; its template declares hot-key protection"
			f.Hint = ""
		}
		out = append(out, lateItem{newFindItem(&f, int64(h.freq), 0, h.keyLen), h.kind})
	}
	return out
}

// mixedFindings analyses every field sample.
func (a *Aggregator) mixedFindings() []lateItem {
	var out []lateItem
	check := func(g *group) {
		if g.fields == nil {
			return
		}
		for _, m := range g.fields.analyze() {
			f := finding.Finding{Rule: finding.MixedSchema, Severity: finding.Error, Key: m.key, Template: g.name, Owner: g.owner,
				Message: clipText(m.message()), Hint: mixedHint}
			out = append(out, lateItem{newFindItem(&f, m.bytes, 0, len(m.key)), g.kind})
		}
	}
	for i := range a.entries {
		check(&a.entries[i])
	}
	for _, g := range a.inferred {
		check(g)
	}
	return out
}

// fieldSampleSize is the number of keys whose fields were sampled.
func (a *Aggregator) fieldSampleSize() (int, bool) {
	n := 0
	for i := range a.entries {
		if s := a.entries[i].fields; s != nil {
			n += len(s.items)
		}
	}
	for _, g := range a.inferred {
		if g.fields != nil {
			n += len(g.fields.items)
		}
	}
	return n, n > 0
}
