package live

import (
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/rdb"
	"github.com/keyguard/keyguard/registry"
)

// Memory without MEMORY USAGE. A key's first probe often reads its whole
// value (a hash of fewer than 32 fields with WITHVALUES, a string under
// 4096 bytes), and from a whole value the snapshot audit's memory model
// gives what MEMORY USAGE would, for values Redis holds as SET and HSET
// store them. Whether it does is checked, template by template, against
// MEMORY USAGE itself: after trustAfter keys agreeing (up to one constant
// offset, e.g. a Cluster's per-key metadata), one key in verifyEvery still
// sends MEMORY USAGE and checks again; a single disagreement (a hash once
// converted to a hashtable, a string grown by APPEND, other listpack
// limits) sends MEMORY USAGE for every later key of the template.
const (
	trustAfter  = 64
	verifyEvery = 8
)

// memTrust is what the keys of one template said of the model.
type memTrust struct {
	delta   int64 // MEMORY USAGE minus the model, the same on every key checked
	checked int   // keys checked, all agreeing
	bad     bool  // one disagreed
	skipped int   // keys modelled, for the verification turn
}

// models is the prober's trust in the model, by template, or by
// inferred family for unregistered keys (up to guessFamilies of them).
type models struct {
	by  map[*registry.Entry]*memTrust
	fam map[string]*memTrust
}

// of is the trust of a key's template or family; nil for neither.
func (m *models) of(cl *inventory.Class) *memTrust {
	if e := cl.Entry; e != nil {
		t := m.by[e]
		if t == nil {
			if m.by == nil {
				m.by = map[*registry.Entry]*memTrust{}
			}
			t = &memTrust{}
			m.by[e] = t
		}
		return t
	}
	if cl.Family == "" {
		return nil
	}
	t := m.fam[cl.Family]
	if t == nil {
		if len(m.fam) >= guessFamilies {
			return nil
		}
		if m.fam == nil {
			m.fam = map[string]*memTrust{}
		}
		t = &memTrust{}
		m.fam[cl.Family] = t
	}
	return t
}

// skipMemory decides, as the probe is written, whether the key's MEMORY
// USAGE is left to the model (its first probe reads values).
func (m *models) skipMemory(cl *inventory.Class, readsValue bool) bool {
	if !readsValue {
		return false
	}
	t := m.of(cl)
	if t == nil || t.bad || t.checked < trustAfter {
		return false
	}
	t.skipped++
	return t.skipped%verifyEvery != 0
}

// check compares MEMORY USAGE of a key with the model's bytes.
func (m *models) check(cl *inventory.Class, est, mem int64) {
	if est < 0 || mem < 0 {
		return
	}
	t := m.of(cl)
	switch {
	case t == nil:
	case t.bad:
	case t.checked == 0:
		t.delta, t.checked = mem-est, 1
	case mem-est == t.delta:
		t.checked++
	default:
		t.bad = true
	}
}

// bytes is the modelled MEMORY USAGE, or ok false when the key must send
// the command after all (its value was not read whole, or the template
// lost the model's trust since the probe was written).
func (m *models) bytes(cl *inventory.Class, est int64) (int64, bool) {
	t := m.of(cl)
	if est < 0 || t == nil || t.bad {
		return 0, false
	}
	return est + t.delta, true
}

// hashModel sizes a hash's listpack from its fields and values as they
// are read.
type hashModel struct {
	lp    int64
	whole bool // every field and value fits a listpack
}

func newHashModel() hashModel { return hashModel{lp: rdb.ListpackEmpty, whole: true} }

func (h *hashModel) add(s []byte) {
	if len(s) > rdb.ListpackMaxValue {
		h.whole = false
	}
	h.lp += rdb.ListpackEntry(s)
}

// mem is the hash's modelled MEMORY USAGE given all n of its fields were
// read; -1 when it is not a listpack by the default limits.
func (h *hashModel) mem(keyLen int, n int64) int64 {
	if !h.whole || n > rdb.ListpackMaxEntries || n == 0 {
		return -1
	}
	return rdb.ListpackMemory(keyLen, h.lp)
}

// stringModel is a whole string's modelled MEMORY USAGE.
func stringModel(keyLen int, value []byte) int64 { return rdb.StringMemory(keyLen, value) }
