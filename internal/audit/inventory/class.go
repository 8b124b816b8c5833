package inventory

import (
	"math"
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

	// The values naming.InferValues hands over for an unregistered key,
	// as spans of the key, so that the aggregator's personal-data
	// evidence does not infer the key's template a second time
	// (seeFamilyPII). vals is false when they were not recorded (a
	// Class made by hand, more values than fit, a key too long).
	vals  bool
	nvals uint8
	val   [maxClassVals]valSpan
}

// valSpan is a value of an inferred template: key[off:off+n] for
// placeholder slot.
type valSpan struct {
	off, n uint16
	slot   uint8
}

// maxClassVals is how many inferred values a Class carries: keys with
// more are inferred again by the aggregator.
const maxClassVals = 4

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

	// inferring unregistered keys (infer)
	inferBuf []byte
	interned map[string]string
	cur      *Class // the class infer records values in
	curKey   string
	recordFn func(slot int, v string)
}

// NewClassifier returns a Classifier for reg that asks hints (those of
// the aggregators its records go to) whether a key may be sampled. With
// no hints every hash or string key is sampled.
func NewClassifier(reg *registry.Registry, hints ...*FieldHint) *Classifier {
	c := &Classifier{reg: reg, chk: reg.NewChecker(), hints: hints}
	c.recordFn = c.record
	return c
}

// Classify returns the class of key. The Class holds no reference to key.
func (c *Classifier) Classify(key string) Class {
	cl := c.classOf(key)
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

// Template returns the template or family of key, without the decisions
// Classify makes for the probes: what a sampler stratifies keys by.
func (c *Classifier) Template(key string) Class { return c.classOf(key) }

// classOf is the package's classOf, with the values of an unregistered
// key's template recorded in the Class.
func (c *Classifier) classOf(key string) Class {
	e := c.reg.Lookup(key)
	if e != nil {
		return Class{Entry: e, NS: e.Guard}
	}
	cl := Class{vals: len(key) <= math.MaxUint16}
	c.cur, c.curKey = &cl, key
	c.inferBuf = naming.InferValues(c.inferBuf[:0], key, c.reg.Separator, c.recordFn)
	c.cur, c.curKey = nil, ""
	cl.Family = c.intern(c.inferBuf)
	return cl
}

// record keeps a value InferValues handed over (a slice of the key) in
// the current class.
func (c *Classifier) record(slot int, v string) {
	cl, key := c.cur, c.curKey
	if !cl.vals {
		return
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.StringData(key))))
	if int(cl.nvals) == maxClassVals || slot > math.MaxUint8 || len(v) == 0 || off < 0 || off+len(v) > len(key) {
		cl.vals = false // the aggregator infers the key again
		return
	}
	cl.val[cl.nvals] = valSpan{off: uint16(off), n: uint16(len(v)), slot: uint8(slot)}
	cl.nvals++
}

// maxInterned bounds the inferred templates a Classifier keeps as
// strings: a keyspace has few, and each key of one gets the same string.
const maxInterned = 4096

func (c *Classifier) intern(b []byte) string {
	if s, ok := c.interned[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= maxGroupName {
		if c.interned == nil || len(c.interned) >= maxInterned {
			c.interned = map[string]string{}
		}
		c.interned[s] = s
	}
	return s
}

// classOf is the name part of a class: template or family, and the
// guard probe.
func classOf(reg *registry.Registry, chk *registry.Checker, key string) Class {
	e := reg.Lookup(key)
	if e == nil {
		return Class{Family: chk.Infer(key)}
	}
	return Class{Entry: e, NS: e.Guard}
}

// Classify is Classifier.Classify for a caller that feeds this
// aggregator alone, on its goroutine: the field-sample decision is exact.
func (a *Aggregator) Classify(key string) Class {
	cl := classOf(a.reg, a.chk, key)
	cl.Fields = a.wantsFields(key, &cl)
	return cl
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
		fs = a.famFields[cl.Family]
		if fs == nil && (len(cl.Family) > maxGroupName || a.families >= a.opts.MaxGroups) {
			return false
		}
		if fs == nil && !a.familyMayCensus(a.rankOf(cl.Family), cl.Family) ||
			fs != nil && fs.census == nil && !a.familyMayCensus(fs.rank, fs.family) {
			return false
		}
	}
	return fs == nil || a.asks(fs)
}
