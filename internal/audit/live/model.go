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

// Small families. A legacy keyspace of thousands of families of a few
// dozen keys each never trusted the model family by family (trustAfter
// keys agreeing): every key sent MEMORY USAGE. The prior is what the keys
// of families not trusted on their own said of the model, taken
// together: once priorTrust of them agreed on one offset, and none
// disagreed, a family whose own checked keys agree with that offset (its
// first key always sends MEMORY USAGE) is modelled on the prior's turn,
// one key in verifyEvery still checked. One key that disagrees, in any
// such family, stops the prior for all of them, as it stops a template's
// trust: the keys modelled wrong before are those of one verification
// interval, about verifyEvery of them, in the whole keyspace.
const priorTrust = 256

// prior is the model's trust over the keys of families not trusted on
// their own.
type prior struct {
	delta   int64
	agreed  int  // keys checked, all agreeing on delta
	bad     bool // one disagreed
	skipped int
}

// trusts reports whether a family whose own keys agreed on offset delta
// may be modelled by the prior.
func (p *prior) trusts(delta int64) bool {
	return !p.bad && p.agreed >= priorTrust && delta == p.delta
}

// count counts a checked key of a family not trusted on its own.
func (p *prior) count(delta int64) {
	switch {
	case p.bad:
	case p.agreed == 0:
		p.delta, p.agreed = delta, 1
	case delta == p.delta:
		p.agreed++
	default:
		p.bad = true
	}
}

// tmpl is what the prober keeps of one template, or of one inferred
// family: the model's trust, and the field names its values showed. The
// keys of a template have the same names in the same order, and the keys
// of a batch come in no order of template: an interner of its own finds a
// name at its position without a map lookup.
type tmpl struct {
	mem   memTrust
	prior *prior // families: the models' prior; nil for a template
	names jsonkeys.Interner
}

// models is the prober's state by template (a family's is in its
// record, family.tm), and the prior over families.
type models struct {
	by    map[*registry.Entry]*tmpl
	prior prior
}

// of is the state of a key's template, or of its family (fam, the
// walker's record of it; nil: none), looked up once per key (batch.tpl);
// nil for neither. A family gets one only when its first probe reads the
// value (valued): the only keys the model is for.
func (m *models) of(cl *inventory.Class, fam *family, valued bool) *tmpl {
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
	if fam == nil {
		return nil
	}
	if fam.tm == nil && valued {
		fam.tm = &tmpl{prior: &m.prior}
	}
	return fam.tm
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
	if m.bad || m.checked == 0 {
		return false
	}
	if m.checked < trustAfter {
		p := t.prior
		if p == nil || !p.trusts(m.delta) {
			return false
		}
		p.skipped++
		return p.skipped%verifyEvery != 0
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
	if t.prior != nil && !m.bad && m.checked < trustAfter {
		t.prior.count(mem - est) // a family not trusted on its own
	}
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
