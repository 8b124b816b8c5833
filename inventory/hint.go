package inventory

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/keyguard/keyguard/report"
)

// FieldHint tells Classifiers, on the walkers' goroutines, which keys an
// Aggregator running on another goroutine may take into a field sample,
// so that a walker reads field names (keyguard rdb decodes them out of
// every hash and JSON string; the live audit sends HRANDFIELD) only for
// those. The answer errs on the side of yes: a key it says no to, the
// Aggregator would refuse too, however far behind the walker it is.
//
// For each template and each family with a field sample, the hint holds
// the sample's admission bound (published by the Aggregator with atomic
// stores). The bound only falls as the sample fills, so a stale one
// admits more.
type FieldHint struct {
	bound    []atomic.Uint64 // by Entry.Index: keys with keyHash <= bound may be asked
	families sync.Map        // inferred family → *atomic.Uint64, its bound
	closed   atomic.Bool     // families without a bound get no new sample
}

// FieldHint returns the hint of a, made on first call. Call it before
// the walkers start.
func (a *Aggregator) FieldHint() *FieldHint {
	if a.hint == nil {
		h := &FieldHint{bound: make([]atomic.Uint64, len(a.reg.Entries))}
		for i := range h.bound {
			h.bound[i].Store(math.MaxUint64)
		}
		a.hint = h
		for i := range a.entries {
			a.publish(&a.entries[i])
		}
		for _, g := range a.groups {
			a.publish(g)
		}
	}
	return a.hint
}

// mayNeedFields reports whether the Aggregator may take a key of class
// cl into a field sample.
func (h *FieldHint) mayNeedFields(key string, cl *Class) bool {
	if len(key) > maxSampleKey {
		return false
	}
	if e := cl.Entry; e != nil {
		return fieldType(e.Type) && keyHash(key) <= h.bound[e.Index].Load()
	}
	if b, ok := h.families.Load(cl.Family); ok {
		return keyHash(key) <= b.(*atomic.Uint64).Load()
	}
	return !h.closed.Load()
}

// publish stores the admission bound of g's template or family in the
// hint, after its sample or its miss count changed.
func (a *Aggregator) publish(g *group) {
	if a.hint == nil || g.fs == nil {
		return
	}
	fs := g.fs
	bound := uint64(math.MaxUint64)
	switch s := fs.sample; {
	case fs.barren():
		bound = 0 // nothing is asked any more (0 is admitted: a yes too many is harmless)
	case s != nil && len(s.items) >= s.k:
		bound = s.items[s.max].hash // admits wants hash < this one
	}
	if g.entry != nil {
		a.hint.bound[g.entry.Index].Store(bound)
		return
	}
	closing := !a.hint.closed.Load() && (!a.familySamplerLeft() || a.families >= a.opts.MaxGroups)
	if closing {
		a.hint.closed.Store(true)
	}
	if fs.sample == nil && a.hint.closed.Load() {
		bound = 0 // no sample, and none to come
	}
	if fs.hintBound == nil {
		fs.hintBound = new(atomic.Uint64)
		a.hint.families.Store(g.family, fs.hintBound)
	}
	fs.hintBound.Store(bound)
	if closing {
		for _, f := range a.groups { // the families without a sample get none now
			if f.kind == report.KindPrefix && f.fs != nil && f.fs.sample == nil && f != g {
				a.publish(f)
			}
		}
	}
}
