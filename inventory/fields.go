package inventory

import "strings"

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
	if len(r.Fields) == 0 {
		if asked {
			a.fieldMiss(g)
		}
		return
	}
	h := keyHash(r.Key)
	if !fs.sample.admits(h) {
		fs.hits++
		return
	}
	names := normalizeFields(r.Fields)
	if len(names) == 0 {
		if asked {
			a.fieldMiss(g)
		}
		return
	}
	fs.hits++
	if fs.sample == nil {
		if g.entry == nil {
			if a.famSamples >= maxInferredSamplers {
				return
			}
			a.famSamples++
		}
		fs.sample = &sampler{k: a.opts.FieldSamples}
	}
	fs.sample.offer(fieldSample{hash: h, key: strings.Clone(r.Key), db: r.DB, bytes: r.Bytes, fields: names})
	a.publish(g)
}

func (a *Aggregator) fieldMiss(g *group) {
	g.fs.misses++
	if g.entry == nil {
		a.famMisses++
	}
	a.publish(g)
}

// familySamplerLeft reports whether a family without a field sample may
// still get one.
func (a *Aggregator) familySamplerLeft() bool {
	return a.famSamples < maxInferredSamplers && a.famMisses < maxInferredMisses
}
