package inventory

import "github.com/keyguard/keyguard/internal/valueform"

// offerFields offers the field names of r to the sample of g's template
// or family, and counts whether a key its class asked for had any.
func (a *Aggregator) offerFields(r *Record, g *group, asked bool) {
	fs := g.fs
	if fs == nil || !fieldType(r.Type) || len(r.Key) > maxSampleKey {
		return
	}
	if g.entry != nil && !fieldType(g.entry.Type) {
		return
	}
	// A walker ahead of the aggregator reads names a little longer than
	// they count (FieldHint): take a key only when this aggregator would
	// ask for it now, so the census and its misses are the same however
	// far ahead the walkers ran.
	if !a.asks(fs) || (g.entry == nil && fs.census == nil && !a.familyMayCensus(fs.rank, fs.family)) {
		return
	}
	switch f := r.Form; {
	case f == valueform.Object:
		fs.objects++
	case f.Foreign():
		fs.foreign++
		fs.forms |= 1 << f
	}
	if len(r.Fields) == 0 && r.Set == nil {
		if asked {
			a.fieldMiss(g)
		}
		return
	}
	set := r.Set
	if set == nil {
		local := FieldSet{raw: r.Fields}
		local.hash, local.n = fieldSetHash(r.Fields)
		set = &local
	}
	if fs.census == nil {
		if set.n == 0 {
			if asked {
				a.fieldMiss(g)
			}
			return
		}
		if g.entry == nil {
			if !a.admitFamily(fs) {
				return
			}
		} else {
			fs.census = &census{}
		}
		defer a.publish(g)
	}
	fs.hits++
	a.censusKeys += fs.census.add(set, r.Key, r.DB, r.Bytes, maxCensusKeys-a.censusKeys)
	if fs.census.overflow {
		a.publish(g)
	}
}

func (a *Aggregator) fieldMiss(g *group) {
	g.fs.misses++
	if g.entry == nil && !a.opts.FieldsEveryValue { // nothing closes the families on misses then
		a.famMisses++
	}
	a.publish(g)
}

// familySamplerLeft reports whether a family without a census may still
// get one.
func (a *Aggregator) familySamplerLeft() bool {
	return len(a.famCensus) < maxFamilyCensuses && a.famMisses < maxInferredMisses
}

// familyCensusClosed reports whether a family without a census gets none
// now: the sampler's budget is spent, or the families reached famCap.
// The hint closes on the same condition (publish); a family the hint
// closed but this aggregator took would count the keys a walker read
// before the close, as many as it ran ahead.
//
// With Options.FieldsEveryValue nothing closes them all at once: each
// family is asked while it may still get a census (familyMayCensus).
func (a *Aggregator) familyCensusClosed() bool {
	if a.opts.FieldsEveryValue {
		return false
	}
	return !a.familySamplerLeft() || a.families >= a.famCap()
}

// familyMayCensus reports whether a family without a census, of this
// rank and name, may still get one.
func (a *Aggregator) familyMayCensus(rank uint64, family string) bool {
	if !a.opts.FieldsEveryValue {
		return !a.familyCensusClosed()
	}
	if len(a.famCensus) < maxFamilyCensuses {
		return true
	}
	big := a.famCensus[a.largestCensus()]
	return rankLess(rank, family, big.rank, big.family)
}

// admitFamily gives fs, a family's field state, a census if one is left.
// With Options.FieldsEveryValue the censuses go to the maxFamilyCensuses
// families of the smallest ranks among those with field names: a family
// of a smaller rank than the largest with a census takes its place (that
// one's census is dropped), so which families get one depends on the
// keyspace alone, not on the order of its keys nor on how they were split
// among aggregators (the smallest ranks of all are the smallest of each
// aggregator's smallest; Merge admits the same way). Otherwise the first
// families to come get them.
func (a *Aggregator) admitFamily(fs *fieldState) bool {
	if len(a.famCensus) < maxFamilyCensuses {
		a.famCensus = append(a.famCensus, fs)
		a.famMax = -1
		fs.census = &census{}
		return true
	}
	if !a.opts.FieldsEveryValue {
		return false
	}
	i := a.largestCensus()
	big := a.famCensus[i]
	if !rankLess(fs.rank, fs.family, big.rank, big.family) {
		return false
	}
	for _, s := range big.census.sigs {
		a.censusKeys -= len(s.keys)
	}
	big.census, big.hits, big.misses = nil, 0, 0 // as if it never had one
	if big.hintAsk != nil {
		big.hintAsk.Store(false) // and it never will: the largest rank only falls
	}
	a.famCensus[i], a.famMax = fs, -1
	fs.census = &census{}
	return true
}

// rankOf is the rank of a family not seen yet, when familyMayCensus
// needs it.
func (a *Aggregator) rankOf(family string) uint64 {
	if !a.opts.FieldsEveryValue || len(a.famCensus) < maxFamilyCensuses {
		return 0
	}
	return keyHash(family)
}

// largestCensus returns the index in famCensus of the largest rank.
func (a *Aggregator) largestCensus() int {
	if a.famMax < 0 {
		a.famMax = 0
		for i, fs := range a.famCensus {
			m := a.famCensus[a.famMax]
			if rankLess(m.rank, m.family, fs.rank, fs.family) {
				a.famMax = i
			}
		}
	}
	return a.famMax
}

func rankLess(r1 uint64, f1 string, r2 uint64, f2 string) bool {
	return r1 < r2 || r1 == r2 && f1 < f2
}

// asks reports whether the values of a template or family are still read
// for their field names: not once they mostly held none (barren, unless
// Options.FieldsEveryValue), nor once their field sets proved too varied
// to tell styles (overflow: for good, whatever comes after, so no order
// of the keys undoes it). A template whose strings' format is checked is
// read to the end.
func (a *Aggregator) asks(fs *fieldState) bool {
	return fs.formChecked || (a.opts.FieldsEveryValue || !fs.barren()) && (fs.census == nil || !fs.census.overflow)
}
