package live

import (
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/jsonkeys"
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
// limits) sends MEMORY USAGE for every later key of the template. Once
// deepTrust keys agreed (about 7,700 keys of the template in), one key in
// verifyDeep: the keys modelled wrong before a disagreement is read are
// about one interval's worth, 31 keys among at least 7,700 (under half a
// percent of them), as 7 in 8 keep it low for small templates.
const (
	trustAfter  = 64
	verifyEvery = 8
	deepTrust   = 1024
	verifyDeep  = 32
)

// memTrust is what the keys of one template said of the model.
type memTrust struct {
	delta   int64 // MEMORY USAGE minus the model, the same on every key checked
	checked int   // keys checked, all agreeing
	bad     bool  // one disagreed
	skipped int   // keys modelled, for the verification turn
}

// tmpl is what the prober keeps of one template, or of one inferred
// family: the model's trust, and the field names its values showed. The
// keys of a template have the same names in the same order, and the keys
// of a batch come in no order of template: an interner of its own finds a
// name at its position without a map lookup.
type tmpl struct {
	mem   memTrust
	names jsonkeys.Interner
}

// models is the prober's state by template, or by inferred family for
// unregistered keys (up to guessFamilies of them).
type models struct {
	by  map[*registry.Entry]*tmpl
	fam map[string]*tmpl
}

// of is the state of a key's template or family, looked up once per key
// (batch.tpl); nil for neither. A family gets one only when its first
// probe reads the value (valued): the only keys the model is for.
func (m *models) of(cl *inventory.Class, valued bool) *tmpl {
	if e := cl.Entry; e != nil {
		t := m.by[e]
		if t == nil {
			if m.by == nil {
				m.by = map[*registry.Entry]*tmpl{}
			}
			t = &tmpl{}
			m.by[e] = t
		}
		return t
	}
	if cl.Family == "" {
		return nil
	}
	t := m.fam[cl.Family]
	if t == nil {
		if !valued || len(m.fam) >= guessFamilies {
			return nil
		}
		if m.fam == nil {
			m.fam = map[string]*tmpl{}
		}
		t = &tmpl{}
		m.fam[cl.Family] = t
	}
	return t
}

// interner is where the names of a key of template t are interned.
func (e *encodings) interner(t *tmpl) *jsonkeys.Interner {
	if t == nil {
		return &e.names
	}
	return &t.names
}

// skipMemory decides, as the probe is written, whether the key's MEMORY
// USAGE is left to the model (its first probe reads values); t is its
// template's state.
func skipMemory(t *tmpl, readsValue bool) bool {
	if !readsValue || t == nil {
		return false
	}
	m := &t.mem
	if m.bad || m.checked < trustAfter {
		return false
	}
	m.skipped++
	return m.skipped%m.interval() != 0
}

// interval is one key in how many, of those the model may give, that
// still sends MEMORY USAGE.
func (m *memTrust) interval() int {
	if m.checked >= deepTrust {
		return verifyDeep
	}
	return verifyEvery
}

// check compares MEMORY USAGE of a key with the model's bytes.
func check(t *tmpl, est, mem int64) {
	if est < 0 || mem < 0 || t == nil {
		return
	}
	m := &t.mem
	switch {
	case m.bad:
	case m.checked == 0:
		m.delta, m.checked = mem-est, 1
	case mem-est == m.delta:
		m.checked++
	default:
		m.bad = true
	}
}

// modelBytes is the modelled MEMORY USAGE, or ok false when the key must
// send the command after all (its value was not read whole, or the
// template lost the model's trust since the probe was written).
func modelBytes(t *tmpl, est int64) (int64, bool) {
	if est < 0 || t == nil || t.mem.bad {
		return 0, false
	}
	return est + t.mem.delta, true
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
