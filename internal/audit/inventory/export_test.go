package inventory

// RaceEnabled tells the external tests that the race detector is on (it
// disables sync.Pool reuse, so allocation counts mean little).
const RaceEnabled = raceEnabled

// ListsUnique reports whether the top and hot lists a pipeline's
// aggregators offer to took Options.UniqueKeys' promise.
func ListsUnique(p *Pipeline) (top, hot bool) {
	if a := p.aggs[0]; a.topIn != nil {
		return a.topIn.s.list.unique, a.hotIn.s.list.unique
	}
	return p.aggs[0].top.unique, p.aggs[0].hot.unique
}

// AddRead sends a batch as Helper.AddRead does, always to the workers: the
// tests compare it with the helper's, which may add a batch itself.
func (p *Pipeline) AddRead(recs []Record, prep func(agg, i int, r *Record), done func()) {
	p.work <- pipeBatch{recs, nil, prep, done}
}

// PreTaken is how many keys a pipeline's aggregators classified from what
// preClassify looked up ahead.
func PreTaken(p *Pipeline) int64 {
	var n int64
	for _, a := range p.aggs {
		n += a.pre.taken
	}
	return n
}
