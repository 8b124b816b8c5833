package inventory

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// state is what FromReport needs besides the report's own lists.
func (a *Aggregator) state() *report.State {
	o := a.opts
	st := &report.State{
		Version: report.StateVersion,
		Options: report.StateOptions{MaxFindings: o.MaxFindings, TopKeys: o.TopKeys, HotKeys: o.HotKeys, HotFreqFloor: o.HotFreqFloor,
			MaxGroups: o.MaxGroups, Sampled: o.Sampled, SampleRatio: o.SampleRatio, SampleWeighted: o.Weighted},
		Totals: report.StateTotals{Keys: a.t.keys, Bytes: a.t.bytes, BytesUnknown: a.t.bytesUnknown, NoTTL: a.t.noTTL,
			Unregistered: a.t.unregistered, Severity: a.t.sev, FreqKnown: a.freqKnown, FoldedCap: a.foldedCap, FoldedLate: a.foldedLate,
			FoldedLong: a.foldedLong, FamilyMisses: a.famMisses},
	}
	for _, s := range a.ttlHist {
		st.TTLHistogram = append(st.TTLHistogram, [2]int64{s.keys, s.bytes})
	}
	if n := a.groupCount(); n > 0 {
		st.Groups = make([]report.StateGroup, 0, n) // none stays nil (null in the state, as before)
	}
	a.eachGroup(func(g *group) {
		sg := report.StateGroup{Kind: g.kind, Name: report.Str(g.name), DB: g.db, Keys: g.keys, Bytes: g.bytes, NoTTL: g.noTTL,
			Findings: g.findings, Types: g.types[:], TTL: g.ttl.state(), Example: report.Str(g.example),
			First: report.Str(g.first), FirstVaries: g.firstVaries}
		if g.withTTL != g.ttl.n { // a weighted sample's
			sg.WithTTL = g.withTTL
		}
		for i, s := range g.ttlHist {
			if s.keys > 0 {
				sg.TTLHistogram = append(sg.TTLHistogram, [3]int64{int64(i), s.keys, s.bytes})
			}
		}
		switch {
		case g.kind == report.KindPrefix && g.fs == nil:
			sg.Kind = "other"
		case g.kind == report.KindPrefix:
			sg.Name = report.Str(g.family)
		}
		st.Groups = append(st.Groups, sg)
	})
	slices.SortFunc(st.Groups, func(p, q report.StateGroup) int {
		return cmp.Or(strings.Compare(p.Kind, q.Kind), strings.Compare(string(p.Name), string(q.Name)), cmp.Compare(p.DB, q.DB))
	})
	fields := func(kind, name string, fs *fieldState) {
		if fs.hits == 0 && fs.census == nil && (fs.misses == 0 || a.opts.FieldsEveryValue && kind == report.KindPrefix) {
			// With FieldsEveryValue a family without a census counts
			// misses only while it may still get one, which depends on
			// the order; nothing reads them (no family is given up).
			return
		}
		sf := report.StateFields{Kind: kind, Name: report.Str(name), Hits: fs.hits, Misses: fs.misses,
			Objects: fs.objects, Foreign: fs.foreign, Forms: fs.forms}
		if c := fs.census; c != nil {
			sf.Census, sf.Overflow, sf.Values = true, c.overflow, c.keys
			for _, s := range c.sets() {
				ss := report.StateSet{Names: s.names, Count: s.count, Lost: s.lost}
				for _, k := range s.keys {
					ss.Keys = append(ss.Keys, report.StateSample{Key: report.Str(k.key), DB: k.db, Bytes: k.bytes})
				}
				// in key order, not arrival order: the state is the same
				// however the keys came and were split among aggregators
				slices.SortFunc(ss.Keys, func(p, q report.StateSample) int {
					return cmp.Or(cmp.Compare(p.DB, q.DB), strings.Compare(string(p.Key), string(q.Key)))
				})
				sf.Sets = append(sf.Sets, ss)
			}
		}
		st.Fields = append(st.Fields, sf)
	}
	for i, e := range a.reg.Entries {
		fields(report.KindTemplate, e.Key, &a.tmplFields[i])
	}
	for name, fs := range a.famFields {
		fields(report.KindPrefix, name, fs)
	}
	slices.SortFunc(st.Fields, func(p, q report.StateFields) int {
		return cmp.Or(strings.Compare(p.Kind, q.Kind), strings.Compare(string(p.Name), string(q.Name)))
	})
	// Sorted by small references, then built in order: a candidate is
	// 100 bytes to move a swap. (The same comparisons give the same
	// order as sorting the candidates themselves, ties included.)
	keys, hots := a.hot.list()
	type hotRef struct {
		freq int64
		pre  uint64 // 8 bytes of key after the prefix all keys share (prefixWords)
		key  string
		db   int32
		i    int32
	}
	refs := make([]hotRef, len(keys))
	for i := range keys {
		k := &keys[i]
		refs[i] = hotRef{freq: k.score, key: a.hot.name(k), db: k.db, i: int32(i)}
	}
	prefixWords(refs, func(r *hotRef) (string, *uint64) { return r.key, &r.pre })
	slices.SortFunc(refs, func(p, q hotRef) int {
		if p.freq != q.freq {
			return cmp.Compare(q.freq, p.freq)
		}
		if p.pre != q.pre {
			return cmp.Compare(p.pre, q.pre)
		}
		return cmp.Or(strings.Compare(p.key, q.key), cmp.Compare(p.db, q.db))
	})
	if len(refs) > 0 {
		st.Hot = make([]report.StateHot, len(refs))
	}
	for j, r := range refs {
		k, h := &keys[r.i], &hots[r.i]
		st.Hot[j] = report.StateHot{Key: report.Str(r.key), KeyLen: int(k.keyLen), Freq: int(k.score), Bytes: h.bytes,
			Template: report.Str(h.template), Owner: h.owner, Kind: h.kind, Protected: h.protected, Node: h.node, DB: int(k.db)}
	}
	st.PII, st.PIILost = a.piiState(), a.piiFamLost
	return st
}

func (s *ttlSketch) state() report.StateTTL {
	st := report.StateTTL{N: s.n, MinMS: s.min.Milliseconds(), MaxMS: s.max.Milliseconds()}
	if s.hist != nil {
		for i, c := range s.hist {
			if c > 0 {
				st.Buckets = append(st.Buckets, [2]int64{int64(i), int64(c)})
			}
		}
	}
	return st
}

// ErrNoState is a report without the state FromReport needs.
var ErrNoState = errors.New("the report carries no aggregation state: write it with this version of keyguard (--format json)")

// decidedLate reports whether rule is decided at report time from the
// state (hot set, field censuses), not kept per key.
func decidedLate(rule string) bool {
	return rule == finding.HotKey || rule == finding.MixedSchema || rule == finding.Schema || rule == finding.PII
}

// SameRegistry returns an error when rep was made with a registry that
// declared otherwise than reg (their digests differ): its keys were
// grouped and checked by that one, and counted on under reg they would
// be two registries' groups in one report. A report without a digest
// (made without a registry, or by a keyguard before digests) passes.
func SameRegistry(reg *registry.Registry, rep *report.Report) error {
	d := rep.RegistryDigest
	if d == "" || reg.Digest == "" || d == reg.Digest || rep.WithoutRegistry() {
		return nil
	}
	return fmt.Errorf("made with a registry that declared otherwise than %s does now (digest %s then, %s now: a template, type, TTL, owner or field set changed): "+
		"its keys were grouped and checked by that one; use the registry it was made with (from version control), or audit again with this one",
		cmp.Or(reg.File, "the registry"), d, reg.Digest)
}

// FromReport returns an Aggregator holding the aggregates of rep (a JSON
// report of keyguard audit or rdb, read back), so that a resumed audit
// or a merge carries them on: reporting it again gives rep's numbers.
// reg must be the registry rep was made with (templates are matched by
// their text; SameRegistry is checked).
func FromReport(reg *registry.Registry, rep *report.Report) (*Aggregator, error) {
	st := rep.State
	switch {
	case st == nil:
		return nil, ErrNoState
	case st.Version != report.StateVersion:
		return nil, fmt.Errorf("the report's state has version %d; this keyguard reads version %d: make the report again with this version", st.Version, report.StateVersion)
	}
	if err := SameRegistry(reg, rep); err != nil {
		return nil, err
	}
	o := st.Options
	a := New(reg, Options{MaxFindings: o.MaxFindings, TopKeys: o.TopKeys, HotKeys: o.HotKeys, HotFreqFloor: o.HotFreqFloor,
		MaxGroups: o.MaxGroups, Sampled: o.Sampled, SampleRatio: o.SampleRatio, Weighted: o.SampleWeighted,
		NoRegistry: rep.WithoutRegistry()})
	t := st.Totals
	a.t = totals{keys: t.Keys, records: t.Keys, bytes: t.Bytes, bytesUnknown: t.BytesUnknown, noTTL: t.NoTTL, unregistered: t.Unregistered, sev: t.Severity}
	a.freqKnown, a.foldedCap, a.foldedLate, a.foldedLong, a.famMisses = t.FreqKnown, t.FoldedCap, t.FoldedLate, t.FoldedLong, t.FamilyMisses
	for i, s := range st.TTLHistogram {
		if i < len(a.ttlHist) {
			a.ttlHist[i] = slot{s[0], s[1]}
		}
	}
	for _, db := range rep.Databases {
		a.seeDB(db)
	}
	if err := a.loadGroups(st.Groups); err != nil {
		return nil, err
	}
	if err := a.loadFields(st.Fields); err != nil {
		return nil, err
	}
	if err := a.loadPII(st.PII); err != nil {
		return nil, err
	}
	a.piiFamLost = st.PIILost
	a.loadLists(rep)
	return a, nil
}

func (s *ttlSketch) load(st report.StateTTL) {
	s.n, s.min, s.max = st.N, time.Duration(st.MinMS)*time.Millisecond, time.Duration(st.MaxMS)*time.Millisecond
	for _, b := range st.Buckets {
		if b[0] >= 0 && b[0] < ttlBuckets {
			if s.hist == nil {
				s.hist = new([ttlBuckets]uint32)
			}
			s.hist[b[0]] = uint32(b[1])
		}
	}
}

// aloneNote ends the note of a live audit that read one node of a
// Cluster by itself ("HOST:PORT is a Redis Cluster node…"); merged
// reports of such nodes are the cluster, and say so once.
const aloneNote = " is a Redis Cluster node and was audited alone: audit the whole cluster in cluster mode (--cluster)"

// MergeReports merges reports of different shards, hosts or databases
// into one, as if their keys had been audited together: the aggregates
// of each (FromReport) are added up and the report is made again, so
// that capped lists keep the best of all, TTL quantiles come from the
// summed sketches and mixed-schema compares the pooled field samples.
// names label the reports in the result (merged_from).
func MergeReports(reg *registry.Registry, reps []*report.Report, names []string) (*report.Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("merge: no report")
	}
	var (
		agg     *Aggregator
		meta    report.Meta
		targets []string
		total   time.Duration
		alone   []string // nodes of a Cluster audited one by one
		seen    = map[string]string{}
	)
	for i, rep := range reps {
		id := rep.Source.Kind + " " + rep.Source.Target + " " + rep.StartedAt.String()
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("merge: %s and %s are the same audit (%s of %s at %s): its keys would be counted twice", prev, names[i], rep.Source.Kind, rep.Source.Target, rep.StartedAt.Format(time.RFC3339))
		}
		seen[id] = names[i]
		a, err := FromReport(reg, rep)
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", names[i], err)
		}
		if agg == nil {
			agg = a
			meta = report.Meta{Source: report.Source{Kind: rep.Source.Kind}, Registry: rep.Registry, StartedAt: rep.StartedAt, Complete: true}
		} else {
			if a.opts.Sampled != agg.opts.Sampled || a.opts.SampleRatio != agg.opts.SampleRatio {
				return nil, fmt.Errorf("merge %s: sampled at %.4g, %s at %.4g: merge reports sampled alike, or audit every key", names[i], a.opts.SampleRatio, names[0], agg.opts.SampleRatio)
			}
			agg.Merge(a)
			if rep.Source.Kind != meta.Source.Kind {
				meta.Source.Kind = "merged"
			}
			if rep.StartedAt.Before(meta.StartedAt) {
				meta.StartedAt = rep.StartedAt
			}
		}
		targets = append(targets, rep.Source.Target)
		meta.Source.Nodes += rep.Source.Nodes
		meta.Complete = meta.Complete && rep.Complete
		meta.Stopped = append(meta.Stopped, rep.Stopped...)
		for _, n := range rep.Notes {
			if strings.HasPrefix(n, piiNotePrefix) {
				continue // judged again over all the keys
			}
			if node, ok := strings.CutSuffix(n, aloneNote); ok {
				alone = append(alone, node)
				continue
			}
			if _, ok := slotsNoteRanges(n); ok {
				continue // judged again over the parts (mergedSlots)
			}
			if !slices.Contains(meta.Notes, n) {
				meta.Notes = append(meta.Notes, n)
			}
		}
		total += time.Duration(rep.DurationMS) * time.Millisecond
	}
	meta.Source.Target = strings.Join(targets, ",")
	// The audits merged may have run one after the other, days apart, or
	// side by side: the time between the first start and the last end
	// says nothing. The report's duration is what they took together.
	meta.Duration = total
	if len(alone) > 0 {
		meta.Notes = append(meta.Notes, fmt.Sprintf("%s of a Redis Cluster, each audited alone, merged here: the report covers the cluster when every master is among them",
			human.Plural(int64(len(alone)), "node")+" ("+strings.Join(alone, ", ")+")"))
	}
	if n := mergedSlots(reps); n != "" {
		meta.Notes = append(meta.Notes, n)
	}
	meta.Notes = append(meta.Notes, fmt.Sprintf("merged from %d reports: counts are their sums, lists the best of all, the duration the sum of theirs", len(reps)))
	out := agg.Report(meta)
	out.MergedFrom = slices.Clone(names)
	return out, nil
}

func loadCensus(sf report.StateFields) *census {
	c := &census{overflow: sf.Overflow, keys: sf.Values}
	if c.overflow {
		return c
	}
	c.sigs = map[uint64]*fieldSet{}
	for _, ss := range sf.Sets {
		h, _ := fieldSetHash(ss.Names) // normalized names hash as themselves
		s := &fieldSet{names: ss.Names, count: ss.Count, lost: ss.Lost}
		for _, k := range ss.Keys {
			s.keys = append(s.keys, censusKey{string(k.Key), k.DB, k.Bytes})
		}
		c.sigs[h] = s
	}
	return c
}

// entryOf is the registry's entry for a template a report names.
func (a *Aggregator) entryOf(name string) (*registry.Entry, error) {
	if e := a.reg.EntryByKey(name); e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("template %q of the report is not in the registry %s: use the registry the report was made with", name, a.reg.File)
}

// loadGroups restores the groups' counters.
func (a *Aggregator) loadGroups(groups []report.StateGroup) error {
	for _, sg := range groups {
		var g *group
		switch sg.Kind {
		case report.KindTemplate:
			e, err := a.entryOf(string(sg.Name))
			if err != nil {
				return err
			}
			g = a.template(e, sg.DB)
			a.piiKeys[e.Index] += sg.Keys
		case report.KindPrefix:
			g = a.newFamily(sg.DB, string(sg.Name))
		default:
			g = a.otherGroup(sg.DB)
		}
		a.seeDB(sg.DB)
		g.keys, g.bytes, g.noTTL, g.findings = sg.Keys, sg.Bytes, sg.NoTTL, sg.Findings
		copy(g.types[:], sg.Types)
		g.ttl.load(sg.TTL)
		g.withTTL = sg.WithTTL
		if g.withTTL == 0 { // a state written before weighted samples
			g.withTTL = g.ttl.n
		}
		for _, s := range sg.TTLHistogram {
			if s[0] >= 0 && s[0] < ttlSlots {
				g.ttlHist[s[0]] = slot{s[1], s[2]}
			}
		}
		if sg.Example != "" {
			g.example, g.exampleHash = string(sg.Example), keyHash(string(sg.Example))
		}
		if g.firstPH && !sg.FirstVaries {
			g.first = string(sg.First)
		} else if g.firstPH {
			g.firstVaries = true
		}
	}
	return nil
}

// loadFields restores the field censuses.
func (a *Aggregator) loadFields(fields []report.StateFields) error {
	for _, sf := range fields {
		var fs *fieldState
		if sf.Kind == report.KindTemplate {
			e, err := a.entryOf(string(sf.Name))
			if err != nil {
				return err
			}
			fs = &a.tmplFields[e.Index]
		} else if fs = a.famFields[string(sf.Name)]; fs == nil {
			continue // a family of no group: it had fallen into "(other)"
		}
		fs.hits, fs.misses = sf.Hits, sf.Misses
		fs.objects, fs.foreign, fs.forms = sf.Objects, sf.Foreign, sf.Forms
		if sf.Census {
			if sf.Kind != report.KindTemplate {
				a.famCensus, a.famMax = append(a.famCensus, fs), -1
			}
			fs.census = loadCensus(sf)
			for _, s := range fs.census.sigs {
				a.censusKeys += len(s.keys)
			}
		}
	}
	return nil
}

// loadLists restores the capped lists: hot-key candidates, top keys and
// the findings decided per key, with their counts.
func (a *Aggregator) loadLists(rep *report.Report) {
	for _, h := range rep.State.Hot {
		key := clip(string(h.Key), maxKeepKey)
		a.hot.push(listKey{score: int64(h.Freq), hash: keyHash(key), keyLen: keyLen32(h.KeyLen), db: int32(h.DB)}, key,
			hotVal{bytes: h.Bytes, template: string(h.Template), owner: h.Owner, kind: h.Kind, protected: h.Protected, node: h.Node})
	}
	for _, tk := range rep.TopKeys {
		key := clip(tk.Key, maxKeepKey)
		v := topVal{elements: tk.Elements, det: a.topDet.of(tk.Type, tk.Template, tk.Node)}
		if tk.TTLMS != nil {
			v.ttl = time.Duration(*tk.TTLMS) * time.Millisecond
			if *tk.TTLMS == -1 {
				v.ttl = -1
			}
		}
		a.top.push(listKey{score: tk.Bytes, hash: keyHash(key), keyLen: keyLen32(max(tk.KeyLen, len(tk.Key))), db: int32(dbOf(tk.DB))}, key, v)
	}
	for id, c := range rep.Summary.ByRuleSeverity {
		if !decidedLate(id) {
			a.rule(id).count = [3]int64{finding.Info: c.Info, finding.Warning: c.Warning, finding.Error: c.Error}
		}
	}
	for _, f := range rep.Findings {
		if decidedLate(f.Rule) {
			continue
		}
		a.rule(f.Rule).kept.push(fentry{score: f.Bytes, hash: keyHash(f.Key), key: f.Key, keyLen: keyLen32(max(f.KeyLen, len(f.Key))),
			db: int32(dbOf(f.DB)), sev: f.Severity}, findDetail{template: f.Template, owner: f.Owner, message: f.Message, hint: f.Hint})
	}
}
