package inventory

import (
	"math"
	"unsafe"

	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// preWindow is how many keys of a batch an aggregator that classifies its
// own keys (AddRead) looks up ahead of adding them, as warm does for keys
// a walker classified.
const preWindow = 32

// preClassed is what preClassify found of one key of the window: its
// registry entry, or the family name naming.InferValues gave and the
// values it handed over, and the family's interned record.
type preClassed struct {
	key          string // compared by address, as inferred.key
	entry        *registry.Entry
	name0, nameN uint32 // the family name: preClass.names[name0:name0+nameN]
	vals0, valsN uint32 // its values: preClass.vals[vals0:vals0+valsN]
	ok           bool   // vals are its values (inferred.ok)
	fam          *famName
}

// preClass is the window preClassify looked up: Classify takes its keys in
// order, and a key that is not the next one drops the window.
type preClass struct {
	keys  []preClassed
	next  int
	names []byte
	vals  []valSpan
	tmp   []byte
	gen   uint64 // inferred.gen when the records were looked up
	cur   string // the key InferValues is reading (preValue)
	curOK bool
	taken int64 // keys Classify took from a window (for the tests)
}

// preClassify looks up, for the next keys Classify is given (recs in
// order), what Classify reads of them: the registry's entry, or the
// inferred family and its record, whose group and field state it then
// touches. On a keyspace of thousands of families each key's lookups
// missed the processor's cache one after the other, the record's, the
// family's group and field state each waiting for the one before; here
// the lookups of the window's keys do not wait on each other, and
// Classify and Add then find what they read in the cache. It reads and
// writes nothing Classify or Add decide by: the registry and
// naming.InferValues answer by the key alone, and a record is used only
// while the interned families were not cleared (inferred.gen).
func (a *Aggregator) preClassify(recs []Record) {
	p := &a.pre
	p.keys, p.next, p.names, p.vals = p.keys[:0], 0, p.names[:0], p.vals[:0]
	inf := &a.inferred
	if len(inf.interned) < warmFamilies {
		return // few families: they stay in the cache anyway
	}
	for i := range recs {
		key := recs[i].Key
		pc := preClassed{key: key}
		if e := a.reg.Lookup(key); e != nil {
			pc.entry = e
		} else {
			p.cur, p.curOK = key, len(key) <= math.MaxUint32
			v0 := len(p.vals)
			p.tmp = naming.InferValues(p.tmp[:0], key, a.reg.Separator, a.preFn)
			pc.name0, pc.nameN = uint32(len(p.names)), uint32(len(p.tmp))
			p.names = append(p.names, p.tmp...)
			pc.vals0, pc.valsN, pc.ok = uint32(v0), uint32(len(p.vals)-v0), p.curOK
		}
		p.keys = append(p.keys, pc)
	}
	p.cur = ""
	for i := range p.keys {
		pc := &p.keys[i]
		if pc.entry == nil && int(pc.nameN) <= maxGroupName {
			pc.fam = inf.interned[string(p.names[pc.name0:pc.name0+pc.nameN])]
		}
	}
	p.gen = inf.gen
	for i := range p.keys {
		if f := p.keys[i].fam; f != nil {
			a.touchFamily(f)
		}
	}
}

// preValue records a value InferValues handed over for preClass.cur, as
// inferValue does for inferred.key.
func (a *Aggregator) preValue(slot int, v string) {
	p := &a.pre
	sp, ok := spanOf(p.cur, slot, v)
	if !ok {
		p.curOK = false
		return
	}
	p.vals = append(p.vals, sp)
}

// preTaken returns what preClassify found of key when key is the next key
// of its window, or nil (then the window is dropped).
func (a *Aggregator) preTaken(key string) *preClassed {
	p := &a.pre
	if p.next >= len(p.keys) {
		return nil
	}
	pc := &p.keys[p.next]
	if len(pc.key) != len(key) || unsafe.StringData(pc.key) != unsafe.StringData(key) {
		p.keys, p.next = p.keys[:0], 0
		return nil
	}
	p.next++
	p.taken++
	return pc
}

// inferPre is infer for a key preClassify inferred: its name, values and
// record as found there.
func (a *Aggregator) inferPre(key string, pc *preClassed) string {
	p, inf := &a.pre, &a.inferred
	inf.key, inf.ok = key, pc.ok
	inf.vals = append(inf.vals[:0], p.vals[pc.vals0:pc.vals0+pc.valsN]...)
	inf.buf = append(inf.buf[:0], p.names[pc.name0:pc.name0+pc.nameN]...)
	if f := pc.fam; f != nil && p.gen == inf.gen {
		inf.fam = f
		return f.name
	}
	return a.internInferred()
}
