package inventory

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
	if !a.asks(fs) || (g.entry == nil && fs.census == nil && a.familyCensusClosed()) {
		return
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
			if a.famCensus >= maxFamilyCensuses {
				return
			}
			a.famCensus++
		}
		fs.census = &census{}
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
	if g.entry == nil {
		a.famMisses++
	}
	a.publish(g)
}

// familySamplerLeft reports whether a family without a census may still
// get one.
func (a *Aggregator) familySamplerLeft() bool {
	return a.famCensus < maxFamilyCensuses && (a.opts.FieldsEveryValue || a.famMisses < maxInferredMisses)
}

// familyCensusClosed reports whether a family without a census gets none
// now: the sampler's budget is spent, or the families reached MaxGroups.
// The hint closes on the same condition (publish); a family the hint
// closed but this aggregator took would count the keys a walker read
// before the close, as many as it ran ahead.
func (a *Aggregator) familyCensusClosed() bool {
	return !a.familySamplerLeft() || a.families >= a.opts.MaxGroups
}

// asks reports whether the values of a template or family are still read
// for their field names: not once they mostly held none (barren, unless
// Options.FieldsEveryValue), nor once their field sets proved too varied
// to tell styles (overflow: for good, whatever comes after, so no order
// of the keys undoes it).
func (a *Aggregator) asks(fs *fieldState) bool {
	return (a.opts.FieldsEveryValue || !fs.barren()) && (fs.census == nil || !fs.census.overflow)
}
