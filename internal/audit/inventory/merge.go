package inventory

import (
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// Merge adds b's records to a, as if they had been added to a. b must have
// been built from the same registry (it panics otherwise: a programming
// error) and is not changed. a's Options apply.
func (a *Aggregator) Merge(b *Aggregator) {
	if a.reg != b.reg && !sameEntries(a.reg, b.reg) {
		panic("inventory: Merge of aggregators built from different registries")
	}
	a.t.keys += b.t.keys
	a.t.bytes += b.t.bytes
	a.t.bytesSq += b.t.bytesSq
	a.t.bytesVar += b.t.bytesVar
	a.t.records += b.t.records
	a.t.bytesUnknown += b.t.bytesUnknown
	a.t.noTTL += b.t.noTTL
	a.t.unregistered += b.t.unregistered
	for i := range a.t.sev {
		a.t.sev[i] += b.t.sev[i]
	}
	for i := range a.ttlHist {
		a.ttlHist[i].keys += b.ttlHist[i].keys
		a.ttlHist[i].bytes += b.ttlHist[i].bytes
	}
	a.freqKnown += b.freqKnown
	for db := range b.dbs {
		a.seeDB(db)
	}
	for i := range b.tmplFields {
		a.mergeFields(&a.tmplFields[i], &b.tmplFields[i], true)
	}
	a.mergePII(b)
	for i := range b.entries {
		a.mergeGroup(&a.entries[i], &b.entries[i])
	}
	for k, bg := range b.groups {
		var g *group
		switch k.kind {
		case gTemplate:
			g = a.template(bg.entry, k.db)
		case gOther:
			g = a.otherGroup(k.db)
		default:
			g = a.groups[k]
			if g == nil {
				if a.families >= a.famCap() {
					a.foldedCap += bg.keys
					a.foldedLate += bg.keys
					g = a.otherGroup(k.db)
				} else {
					g = a.newFamily(k.db, k.name)
				}
			}
		}
		a.mergeGroup(g, bg)
	}
	for name, bfs := range b.famFields {
		if fs := a.famFields[name]; fs != nil { // families past a's cap keep no sample
			a.mergeFields(fs, bfs, false)
		}
	}
	a.foldedCap += b.foldedCap
	a.foldedLate += b.foldedLate
	a.foldedLong += b.foldedLong
	a.famMisses += b.famMisses
	keys, tops := b.top.list()
	// b's keys may be a's too (a resumed walk's carried report, another
	// walk): a's lists look for keys offered twice from now on.
	a.top.unique = a.top.unique && len(keys) == 0
	for i := range keys {
		v := tops[i]
		d := b.topDet.at(v.det)
		v.det = a.topDet.of(d.typ, d.template, d.node)
		a.top.push(keys[i], b.top.name(&keys[i]), v)
	}
	keys, hots := b.hot.list()
	a.hot.unique = a.hot.unique && len(keys) == 0
	for i := range keys {
		a.hot.push(keys[i], b.hot.name(&keys[i]), hots[i])
	}
	for id, brs := range b.rules {
		rs := a.rule(id)
		for i, n := range brs.count {
			rs.count[i] += n
		}
		ents := brs.kept.kept()
		for i := range ents {
			rs.kept.push(ents[i], brs.kept.details[ents[i].detail])
		}
	}
}

func sameEntries(x, y *registry.Registry) bool {
	if len(x.Entries) != len(y.Entries) {
		return false
	}
	for i := range x.Entries {
		if x.Entries[i].Key != y.Entries[i].Key {
			return false
		}
	}
	return true
}

func (a *Aggregator) mergeGroup(dst, src *group) {
	dst.keys += src.keys
	dst.bytes += src.bytes
	dst.noTTL += src.noTTL
	dst.withTTL += src.withTTL
	dst.findings += src.findings
	for i := range dst.types {
		dst.types[i] += src.types[i]
	}
	dst.ttl.merge(&src.ttl)
	for i, s := range src.ttlHist {
		dst.ttlHist[i].keys += s.keys
		dst.ttlHist[i].bytes += s.bytes
	}
	if dst.firstPH {
		switch {
		case src.firstVaries:
			dst.firstVaries, dst.first = true, ""
		case src.first != "" && !dst.firstVaries:
			dst.seeFirst(src.first)
		}
	}
	if src.example != "" && dst.kind == report.KindPrefix && dst.fs != nil && (dst.example == "" || src.exampleHash < dst.exampleHash) {
		dst.example, dst.exampleHash = src.example, src.exampleHash
	}
}

// mergeFields adds the field state src to dst (a template's when
// template, else a family's, which needs one of the family censuses).
func (a *Aggregator) mergeFields(dst, src *fieldState, template bool) {
	dst.misses += src.misses
	dst.objects, dst.foreign, dst.forms = dst.objects+src.objects, dst.foreign+src.foreign, dst.forms|src.forms
	if src.census == nil {
		dst.hits += src.hits
		return
	}
	if dst.census == nil {
		if template {
			dst.census = &census{}
		} else if !a.admitFamily(dst) {
			return // a family that gets no census counts no hits (offerFields)
		}
	}
	dst.hits += src.hits
	a.censusKeys += dst.census.merge(src.census, maxCensusKeys-a.censusKeys)
}
