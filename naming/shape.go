package naming

import "strings"

// AppendInferShape appends to dst the shape of key: a string that every
// key Infer (with separator sep) gives the same template as key shares,
// and InferValues the same values at the same offsets, for a caller that
// infers millions of keys of a few families and keeps each shape's
// template. In a shape a run of digits whose value no rule reads is
// zeros: 5 to 7 digits (too long for a word such as "md5" or "2fa", too
// short for a date), 9, 10, 12, 16, or 19 and more (IDs and Unix times:
// not a date, a time stamp, a phone or an ID-card number), unless it
// follows a 'v' (a version, which stays in the template) or a '+' (a
// phone number). Every other byte is the key's own.
//
// ok is false, and dst returned as it was, for a key with an '@' (an
// e-mail address), or when sep is a digit.
func AppendInferShape(dst []byte, key string, sep byte) (_ []byte, ok bool) {
	if isDigit(sep) || strings.IndexByte(key, '@') >= 0 {
		return dst, false
	}
	n := len(dst)
	dst = append(dst, key...)
	s := dst[n:]
	for off := 0; ; {
		i, j, found := digitRun(key[off:], 5)
		if !found {
			return dst, true
		}
		i, j = off+i, off+j
		if shapeless(j-i) && (i == 0 || key[i-1]|0x20 != 'v' && key[i-1] != '+') {
			for k := i; k < j; k++ {
				s[k] = '0'
			}
		}
		off = j
	}
}

// shapeless reports whether Infer reads nothing of a run of n >= 5
// digits but its length: 8 may be a date, 11, 13 and 15 a phone number,
// 14 a time stamp, 17 and 18 an ID-card number.
func shapeless(n int) bool {
	switch n {
	case 8, 11, 13, 14, 15, 17, 18:
		return false
	}
	return true
}

// ShapeCache keeps one value per key shape (AppendInferShape), for a
// caller that infers millions of keys of a few families: the keys of a
// family of numeric IDs share a few shapes, and one lookup of the shape
// answers what inferring the key did. A keyspace whose shapes do not
// repeat (IDs in hex, UUIDs) pays a shape and a miss per key, so when
// fewer than half the lookups of a round hit, Get stays out of the way
// for a while. The zero value is ready; not safe for concurrent use.
type ShapeCache[V any] struct {
	m     map[string]V
	buf   []byte // the shape of the key Get read
	looks int    // lookups this round
	hits  int
	skip  int // keys left to go without a lookup
	found int64
}

const (
	maxShapeKey = 256     // longer keys go without a lookup: the map holds at most 4,096 × 256 bytes
	maxShapes   = 1 << 12 // shapes kept; past that the map is emptied
	shapeRound  = 1 << 10 // lookups between two judgements of the hits
	shapesAside = 1 << 16 // keys that go without a lookup after a poor round
)

// Get reads key's shape (with separator sep) and returns the value kept
// for it. shaped reports whether the key has a shape the cache keeps (a
// key of over 256 bytes has none): Put then keeps a value for it.
func (c *ShapeCache[V]) Get(key string, sep byte) (v V, ok, shaped bool) {
	if len(key) > maxShapeKey {
		return v, false, false
	}
	if c.skip > 0 {
		c.skip--
		return v, false, false
	}
	if c.buf, shaped = AppendInferShape(c.buf[:0], key, sep); !shaped {
		return v, false, false
	}
	c.looks++
	if v, ok = c.m[string(c.buf)]; ok {
		c.hits++
		c.found++
	}
	if c.looks == shapeRound {
		if c.hits < c.looks/2 {
			c.skip = shapesAside
		}
		c.looks, c.hits = 0, 0
	}
	return v, ok, true
}

// Put keeps v for the shape of the key Get read last (when it had one).
func (c *ShapeCache[V]) Put(v V) {
	switch {
	case c.m == nil:
		c.m = map[string]V{}
	case len(c.m) >= maxShapes:
		clear(c.m)
	}
	c.m[string(c.buf)] = v
}

// PutFor keeps v for key's shape, for a caller that did not Get key just
// before (it inferred a window of keys at once). It keeps nothing while
// the cache is set aside.
func (c *ShapeCache[V]) PutFor(key string, sep byte, v V) {
	if c.skip > 0 || len(key) > maxShapeKey {
		return
	}
	var shaped bool
	if c.buf, shaped = AppendInferShape(c.buf[:0], key, sep); shaped {
		c.Put(v)
	}
}

// Reset forgets every value kept, for a caller whose values are no
// longer valid.
func (c *ShapeCache[V]) Reset() { clear(c.m) }

// Found is how many keys Get answered.
func (c *ShapeCache[V]) Found() int64 { return c.found }
