package inventory

import (
	"math"
	"slices"
	"unsafe"

	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// Class is what the pipeline decides about a key from its name alone,
// before its value is read: the template it belongs to (or the family of
// an unregistered key) and what a walker must read besides type, TTL and
// size. A walker classifies each key once and hands the Class to Add
// with the record.
type Class struct {
	Entry  *registry.Entry // the key's template; nil when unregistered
	Family string          // unregistered keys: the template inferred from the key
	// NS: read the guard's reserved field __ns__ (a guarded hash) into
	// Record.NS, HasNS and NSProbed.
	NS bool
	// Fields: read the value's field names (hash fields, or the
	// top-level keys of a JSON string) into Record.Fields, for the field
	// census of its template. Probe a few dozen fields (HRANDFIELD key 32
	// or one HSCAN page), not the whole hash; a key asked for that comes
	// with nil Fields counts as a value without field names.
	Fields bool
}

// Classifier classifies keys on a walker's goroutine, while aggregators
// run on others: the template lookup, the inferred family, the guard
// probe and the field-sample decision. The decision reads the
// aggregators' FieldHints and errs on the side of yes: a key it says no
// to, no aggregator would take into a sample. A Classifier is not safe
// for concurrent use; give each walker goroutine its own.
type Classifier struct {
	reg   *registry.Registry
	chk   *registry.Checker
	hints []*FieldHint
	// The classes of the next keys Classify is given (Ahead): win[i] of
	// winKeys[i] (compared by address), from winNext on.
	winKeys []string
	win     []Class
	winNext int
	names   []byte
	ends    []int
}

// NewClassifier returns a Classifier for reg that asks hints (those of
// the aggregators its records go to) whether a key may be sampled. With
// no hints every hash or string key is sampled.
func NewClassifier(reg *registry.Registry, hints ...*FieldHint) *Classifier {
	return &Classifier{reg: reg, chk: reg.NewChecker(), hints: hints}
}

// Classify returns the class of key. The Class holds no reference to key.
func (c *Classifier) Classify(key string) Class {
	var cl Class
	if n := c.winNext; n < len(c.winKeys) && len(c.winKeys[n]) == len(key) && unsafe.StringData(c.winKeys[n]) == unsafe.StringData(key) {
		cl = c.win[n]
		c.winNext++
	} else {
		c.winKeys = c.winKeys[:0]
		cl = classOf(c.reg, c.chk, key)
	}
	if len(c.hints) == 0 {
		cl.Fields = len(key) <= maxSampleKey && (cl.Entry == nil || fieldType(cl.Entry.Type))
		return cl
	}
	for _, h := range c.hints {
		if h.mayNeedFields(key, &cl) {
			cl.Fields = true
			break
		}
	}
	return cl
}

// Ahead classifies keys, the next keys Classify is given in this order,
// by their names (the registry's template or the inferred family): all
// the families' names first, then their lookups, which then do not wait
// on each other's misses of the processor's cache (a keyspace of
// thousands of families). Classify takes the classes in order and makes
// its field decisions then; a key that is not the next one of keys drops
// them. Ahead returns the classes, which the caller may read (not keep).
func (c *Classifier) Ahead(keys []string) []Class {
	c.winKeys, c.win, c.winNext = append(c.winKeys[:0], keys...), c.win[:0], 0
	c.names, c.ends = c.names[:0], c.ends[:0]
	for _, k := range keys {
		var cl Class
		end := -1
		if e := c.reg.Lookup(k); e != nil {
			cl = entryClass(e)
		} else if name, ok := c.chk.InferShaped(k); ok {
			cl.Family = name
		} else {
			c.names = naming.AppendInfer(c.names, k, c.reg.Separator)
			end = len(c.names)
		}
		c.win = append(c.win, cl)
		c.ends = append(c.ends, end)
	}
	start := 0
	for i, end := range c.ends {
		if end >= 0 {
			c.win[i].Family = c.chk.InferName(c.names[start:end])
			c.chk.LearnShape(keys[i], c.win[i].Family)
			start = end
		}
	}
	return c.win
}

// entryClass is the class of a key of template e: read the guard's field
// when e is guarded.
func entryClass(e *registry.Entry) Class { return Class{Entry: e, NS: e.Guard} }

// Template returns the template or family of key, without the decisions
// Classify makes for the probes: what a sampler stratifies keys by.
func (c *Classifier) Template(key string) Class { return classOf(c.reg, c.chk, key) }

// classOf is the name part of a class: template or family, and the
// guard probe.
func classOf(reg *registry.Registry, chk *registry.Checker, key string) Class {
	e := reg.Lookup(key)
	if e == nil {
		return Class{Family: chk.Infer(key)}
	}
	return entryClass(e)
}

// Classify is Classifier.Classify for a caller that feeds this
// aggregator alone, on its goroutine: the field-sample decision is exact.
func (a *Aggregator) Classify(key string) Class {
	var cl Class
	if pc := a.preTaken(key); pc != nil {
		if pc.entry != nil {
			cl = entryClass(pc.entry)
		} else {
			cl = Class{Family: a.inferPre(key, pc)}
		}
	} else if e := a.reg.Lookup(key); e != nil {
		cl = entryClass(e)
	} else {
		cl = Class{Family: a.infer(key)}
	}
	cl.Fields = a.wantsFields(key, &cl)
	return cl
}

// infer is the family of an unregistered key, as Checker.Infer gives
// it. The values naming.InferValues hands over on the way are kept
// (inferred), so that Add, given the same key next, does not infer it a
// second time for the personal-data evidence (seeFamilyPII).
func (a *Aggregator) infer(key string) string {
	inf := &a.inferred
	inf.key, inf.ok, inf.vals = key, len(key) <= math.MaxUint32, inf.vals[:0]
	if inf.shapesGen != inf.gen {
		inf.shapes.Reset() // their records are of interned families cleared since
		inf.shapesGen = inf.gen
	}
	r, found, shaped := inf.shapes.Get(key, a.reg.Separator)
	if found && inf.ok {
		inf.fam = r.fam
		inf.vals = append(inf.vals, r.vals...) // at the same offsets in every key of the shape
		return r.fam.name
	}
	inf.buf = naming.InferValues(inf.buf[:0], key, a.reg.Separator, a.inferFn)
	name := a.internInferred()
	if shaped && inf.fam != &inf.loose && inf.ok {
		r := &shapeRec{fam: inf.fam}
		if len(inf.vals) > 0 {
			r.vals = slices.Clone(inf.vals)
		}
		inf.shapes.Put(r)
	}
	return name
}

// shapeRec is what a key shape answers (inferred.shapes): the family's
// interned record and the values, at one offset in every key of it.
type shapeRec struct {
	fam  *famName
	vals []valSpan
}

// internInferred returns the family named inf.buf, interned, and makes
// its record inf.fam.
func (a *Aggregator) internInferred() string {
	inf := &a.inferred
	if f := inf.interned[string(inf.buf)]; f != nil {
		inf.fam = f
		return f.name
	}
	s := string(inf.buf)
	if len(s) > maxGroupName {
		inf.loose = famName{name: s}
		inf.fam = &inf.loose
		return s
	}
	inf.fam = inf.intern(s)
	return s
}

// intern adds the record of family name, not interned yet.
func (inf *inferred) intern(name string) *famName {
	switch {
	case inf.interned == nil:
		inf.interned = map[string]*famName{}
	case len(inf.interned) >= maxInterned:
		clear(inf.interned) // its table keeps its size: no growing back by rehashing
		inf.gen++
	}
	if len(inf.slab) == 0 {
		inf.slab = make([]famName, famSlab)
	}
	f := &inf.slab[0]
	inf.slab = inf.slab[1:]
	f.name = name
	inf.interned[name] = f
	return f
}

// warmWindow is how many classified keys warm looks at at once: their
// families' records and groups stay in the processor's cache until Add.
const warmWindow = 32

// warm looks up the records of the families of the next keys Add takes,
// and touches their groups, in one loop: the lookups do not wait on each
// other, where each key's, between the adds, waited for its misses of
// the cache alone (a keyspace of thousands of families, walked live).
func (a *Aggregator) warm(classes []Class) {
	inf := &a.inferred
	if len(inf.interned) < warmFamilies {
		return // few families: they stay in the cache anyway
	}
	for i := range classes {
		cl := &classes[i]
		if cl.Entry != nil || len(cl.Family) > maxGroupName {
			continue
		}
		if f := inf.interned[cl.Family]; f != nil {
			a.touchFamily(f)
		}
	}
}

// touchFamily reads the lines of family f's group and field state that
// Classify and Add read, and keeps what it read (warmSink) so that the
// loads are not dropped: warm and preClassify touch a window's families
// in one loop, whose misses of the cache then overlap.
func (a *Aggregator) touchFamily(f *famName) {
	var sink int64
	if g := f.g0; g != nil {
		sink += g.keys + g.ttlHist[ttlSlots/2].keys + int64(g.exampleHash)
		if g.firstPH {
			sink++
		}
	}
	if fs := f.fs; fs != nil && fs.census == nil {
		sink += int64(fs.rank)
	}
	a.warmSink += sink
}

// warmFamilies is how many families make warm worth its lookups.
const warmFamilies = 1024

// internFamily makes the interned record of family name the one famOf
// returns, for a key a walker classified (Add without Classify): the one
// lookup by name then answers the family's group, field state and
// findings' texts, each a lookup of its own before. nil for a name too
// long to intern.
func (a *Aggregator) internFamily(name string) *famName {
	if len(name) == 0 || len(name) > maxGroupName {
		return nil
	}
	inf := &a.inferred
	f := inf.interned[name]
	if f == nil {
		f = inf.intern(name)
	}
	inf.fam = f
	return f
}

// famName is an interned family name and what the aggregator found of it:
// its field state and its group in database 0, once known. The lookup
// that interns a key's family answers those too: a keyspace of thousands
// of families looked each up in a map of its own, a miss in the
// processor's cache each. The map holds pointers: records of 88 bytes as
// its values made its table five times the size, copied at every growth.
type famName struct {
	name  string
	fs    *fieldState
	g0    *group
	texts registry.FamilyTexts // its findings' texts (CheckInferredTexts)
}

// famSlab is how many famName records infer allocates at once.
const famSlab = 256

// famOf returns the interned record of family name when it is the one
// infer found last (Classify, then Add, of the same key) or internFamily
// made current, or nil. What the caller writes in it is the family's
// from then on.
func (a *Aggregator) famOf(name string) *famName {
	f := a.inferred.fam
	if f == nil || len(f.name) != len(name) || len(name) == 0 {
		return nil
	}
	if unsafe.StringData(f.name) != unsafe.StringData(name) && f.name != name {
		return nil // internFamily's record holds the walker's first string of the name
	}
	return f
}

// inferred is what Aggregator.infer learned of the last key it inferred.
type inferred struct {
	key       string // the key, as given (compared by address: the same string)
	ok        bool   // vals are its values
	vals      []valSpan
	buf       []byte
	interned  map[string]*famName          // families by name, each one string
	gen       uint64                       // times interned was cleared (preClassify's records are of one)
	slab      []famName                    // records not yet handed out
	fam       *famName                     // the family of key, as interned, or nil
	loose     famName                      // fam of a name too long to intern
	shapes    naming.ShapeCache[*shapeRec] // families by key shape
	shapesGen uint64                       // the gen of shapes' records
}

// valSpan is a value InferValues handed over: key[off:off+n], of slot.
type valSpan struct {
	off, n uint32
	slot   int
}

// maxInterned bounds the families infer keeps as strings: the keys of
// one then share its string. Most keyspaces have a few; a messy one has
// thousands, each met over and over: as many as an audit keeps (famCap).
const maxInterned = 1 << 14

// inferValue records a value InferValues handed over for inferred.key.
func (a *Aggregator) inferValue(slot int, v string) {
	inf := &a.inferred
	sp, ok := spanOf(inf.key, slot, v)
	if !ok {
		inf.ok = false // not a slice of the key: Add infers the key again
		return
	}
	inf.vals = append(inf.vals, sp)
}

// spanOf is value v of slot as a span of key, when v is a slice of key.
func spanOf(key string, slot int, v string) (valSpan, bool) {
	off := uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.StringData(key)))
	if len(v) == 0 || len(v) > len(key) || off > uintptr(len(key)-len(v)) {
		return valSpan{}, false
	}
	return valSpan{off: uint32(off), n: uint32(len(v)), slot: slot}, true
}

// valuesOf returns the values infer recorded for key when it was the
// last key inferred.
func (a *Aggregator) valuesOf(key string) ([]valSpan, bool) {
	inf := &a.inferred
	if !inf.ok || len(key) != len(inf.key) || unsafe.StringData(key) != unsafe.StringData(inf.key) {
		return nil, false
	}
	return inf.vals, true
}

// wantsFields reports whether a key of class cl may enter a field sample
// now: the aggregator's own answer, which the hints publish.
func (a *Aggregator) wantsFields(key string, cl *Class) bool {
	if len(key) > maxSampleKey || a.opts.SkipFields {
		return false
	}
	var fs *fieldState
	if cl.Entry != nil {
		if !fieldType(cl.Entry.Type) {
			return false
		}
		fs = &a.tmplFields[cl.Entry.Index]
	} else {
		if f := a.famOf(cl.Family); f != nil && f.fs != nil {
			fs = f.fs
		} else if fs = a.famFields[cl.Family]; fs != nil && f != nil {
			f.fs = fs
		}
		if fs == nil && (len(cl.Family) > maxGroupName || a.families >= a.famCap()) {
			return false
		}
		if fs == nil && !a.familyMayCensus(a.rankOf(cl.Family), cl.Family) ||
			fs != nil && fs.census == nil && !a.familyMayCensus(fs.rank, fs.family) {
			return false
		}
	}
	return fs == nil || a.asks(fs)
}
