package inventory

import (
	"math"
	"sync/atomic"

	"github.com/keyguard/keyguard/registry"
)

// FieldHint tells a walker, on its own goroutine and while the Aggregator
// runs on another, which keys the Aggregator may ask the field names of
// (NeedsFieldsEntry). A walker that reads field names at a cost (keyguard
// rdb decodes them out of every hash and JSON string) reads them only for
// those keys. The answer errs on the side of yes: a key it says no to,
// NeedsFieldsEntry would refuse too, however far behind the walker the
// Aggregator is.
//
// For each template with a field sample, the hint holds the sample's
// admission bound (published by the Aggregator with atomic stores). The
// bound only falls as the sample fills, so a stale one admits more.
type FieldHint struct {
	bound []atomic.Uint64 // by Entry.Index: keys with keyHash <= bound may be asked
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
	}
	return a.hint
}

// MayNeedFields reports whether the Aggregator may ask for the field names
// of key, whose template is e (nil: unregistered — always yes: the
// families of unregistered keys are found by the Aggregator alone). The
// __ns__ field of guarded hashes is another matter: NeedsNS asks for it
// from every key of a guarded template.
func (h *FieldHint) MayNeedFields(key string, e *registry.Entry) bool {
	if e == nil {
		return true
	}
	if !fieldType(e.Type) || len(key) > maxSampleKey {
		return false
	}
	return keyHash(key) <= h.bound[e.Index].Load()
}

// publish stores g's admission bound in the hint, after its sample or
// its miss count changed.
func (a *Aggregator) publish(g *group) {
	if a.hint == nil || g.entry == nil {
		return
	}
	bound := uint64(math.MaxUint64)
	switch s := g.fields; {
	case g.barren():
		bound = 0 // nothing is asked any more (0 is admitted: a yes too many is harmless)
	case s != nil && len(s.items) >= s.k:
		bound = s.items[s.max].hash // admits wants hash < this one
	}
	a.hint.bound[g.entry.Index].Store(bound)
}
