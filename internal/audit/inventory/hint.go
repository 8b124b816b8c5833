package inventory

import (
	"sync"
	"sync/atomic"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// FieldHint tells Classifiers, on the walkers' goroutines, whether an
// Aggregator running on another goroutine still reads the field names of
// a template's or family's values, so that a walker reads them (keyguard
// rdb decodes them out of every hash and JSON string; the live audit
// sends HRANDFIELD or GETRANGE) only while they count. The Aggregator
// publishes each change with an atomic store; a walker ahead of it reads
// names a little longer, never less.
type FieldHint struct {
	ask      []atomic.Bool // by Entry.Index
	families sync.Map      // inferred family → *atomic.Bool
	closed   atomic.Bool   // families not in the map get no census
}

// FieldHint returns the hint of a, made on first call. Call it before
// the walkers start.
func (a *Aggregator) FieldHint() *FieldHint {
	if a.hint == nil {
		h := &FieldHint{ask: make([]atomic.Bool, len(a.reg.Entries))}
		a.hint = h
		if a.opts.SkipFields {
			h.closed.Store(true) // every ask stays false
			return h
		}
		for i := range a.entries {
			a.publish(&a.entries[i])
		}
		for _, g := range a.groups {
			a.publish(g)
		}
	}
	return a.hint
}

// mayNeedFields reports whether the Aggregator may read the field names
// of a key of class cl.
func (h *FieldHint) mayNeedFields(key string, cl *Class) bool {
	if len(key) > maxSampleKey {
		return false
	}
	if e := cl.Entry; e != nil {
		return fieldType(e.Type) && h.ask[e.Index].Load()
	}
	if b, ok := h.families.Load(cl.Family); ok {
		return b.(*atomic.Bool).Load()
	}
	return !h.closed.Load()
}

// publish stores whether g's template or family is still asked for field
// names, after its census or its miss count changed.
func (a *Aggregator) publish(g *group) {
	if a.hint == nil || g.fs == nil || a.opts.SkipFields {
		return
	}
	fs := g.fs
	ask := a.asks(fs)
	if g.entry != nil {
		a.hint.ask[g.entry.Index].Store(ask)
		return
	}
	closing := !a.hint.closed.Load() && a.familyCensusClosed()
	if closing {
		a.hint.closed.Store(true)
	}
	if fs.census == nil && (a.hint.closed.Load() || !a.familyMayCensus(fs.rank, fs.family)) {
		ask = false // no census, and none to come
	}
	if fs.hintAsk == nil {
		fs.hintAsk = new(atomic.Bool)
		a.hint.families.Store(g.family, fs.hintAsk)
	}
	fs.hintAsk.Store(ask)
	if closing {
		for _, f := range a.groups { // the families without a census get none now
			if f.kind == report.KindPrefix && f.fs != nil && f.fs.census == nil && f != g {
				a.publish(f)
			}
		}
	}
}
