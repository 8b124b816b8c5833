package inventory

import "unsafe"

// FieldSet is the field names of a value as the census counts them:
// hashed, normalized and sorted once (see FieldSets), then shared,
// read-only, by every record whose value holds the same names. A walker
// that gives Record.Set sends a set's names once and a pointer
// afterwards, instead of copying every value's names to the aggregator.
type FieldSet struct {
	hash  uint64
	n     int      // distinct normalized names; 0 when none counts (only __ns__ or empty names)
	names []string // normalizeFields of the names, never changed
	raw   []string // for a record's own Fields: normalized only when a census keeps the set
}

// normalized returns the set's normalized names.
func (s *FieldSet) normalized() []string {
	if s.names == nil {
		return normalizeFields(s.raw)
	}
	return s.names
}

// FieldSets hands out one FieldSet per distinct set of field names a
// walker reads. It belongs to one goroutine (a decoder); the FieldSets it
// returns may go to any.
type FieldSets struct {
	m   map[uint64]*FieldSet
	raw []string // OfBytes's scratch
	// the names of the last value read with as many, hash fields then
	// JSON keys (OfBytesAny, OfAny)
	byCount []lastSet
}

// lastSet is the names the last value of as many names held, as given,
// and their set: the values of one template mostly hold the same names in
// the same order, which a comparison finds for less than a hash.
type lastSet struct {
	flat []byte // the names back to back
	lens []int
	set  *FieldSet
}

// maxCachedSets bounds the sets a FieldSets remembers (at most
// maxFieldBytes of names each): past it, every new set is built anew.
const maxCachedSets = 4096

// Of returns the FieldSet of the names raw (nil when raw is empty).
// Nothing of raw is kept but the normalized copy made the first time
// its set is seen, so raw may point into a walker's buffers.
func (c *FieldSets) Of(raw []string) *FieldSet {
	if len(raw) == 0 {
		return nil
	}
	h, n := fieldSetHash(raw)
	if s := c.m[h]; s != nil {
		return s
	}
	s := &FieldSet{hash: h, n: n, names: normalizeFields(raw)}
	if c.m == nil {
		c.m = map[uint64]*FieldSet{}
	}
	if len(c.m) < maxCachedSets {
		c.m[h] = s
	}
	return s
}

// OfBytes is Of for names given as byte slices (a decoder's view of its
// buffer): it reads them in place.
func (c *FieldSets) OfBytes(raw [][]byte) *FieldSet {
	c.raw = c.raw[:0]
	for _, f := range raw {
		c.raw = append(c.raw, unsafe.String(unsafe.SliceData(f), len(f)))
	}
	s := c.Of(c.raw)
	clear(c.raw) // keep no pointer into the caller's buffers
	return s
}

// ofBytesAfter is OfBytes answered first by l, the set last seen where
// raw comes from (nil: none kept), which it then holds.
func (c *FieldSets) ofBytesAfter(l *lastSet, raw [][]byte) *FieldSet {
	if l == nil {
		return c.OfBytes(raw)
	}
	if sameNames(l, raw) {
		return l.set
	}
	l.set = c.OfBytes(raw)
	l.remember(raw)
	return l.set
}

// OfBytesAny is OfBytes for a value whose template is not known yet (see
// Helper.AddRead): a value holding the very names of the last value of
// as many names, in the same order (which values of one template mostly
// do), gets its set without hashing.
func (c *FieldSets) OfBytesAny(raw [][]byte) *FieldSet {
	return c.ofBytesAfter(c.lastOfCount(len(raw), false), raw)
}

// OfAny is Of for the names of a value whose template is not known
// yet, as OfBytesAny.
func (c *FieldSets) OfAny(raw []string) *FieldSet {
	return c.ofAfter(c.lastOfCount(len(raw), true), raw)
}

// lastOfCount is the last set of n names (of JSON keys, or of hash
// fields), nil when none is kept.
func (c *FieldSets) lastOfCount(n int, json bool) *lastSet {
	if n == 0 || n > maxFieldsPerKey+1 {
		return nil
	}
	if json {
		n += maxFieldsPerKey + 2
	}
	if c.byCount == nil {
		c.byCount = make([]lastSet, 2*(maxFieldsPerKey+2))
	}
	return &c.byCount[n]
}

// ofAfter is ofBytesAfter for names given as strings.
func (c *FieldSets) ofAfter(l *lastSet, raw []string) *FieldSet {
	if l == nil {
		return c.Of(raw)
	}
	if sameNames(l, raw) {
		return l.set
	}
	l.set = c.Of(raw)
	l.remember(raw)
	return l.set
}

func sameNames[T ~string | ~[]byte](l *lastSet, raw []T) bool {
	if l.set == nil || len(l.lens) != len(raw) {
		return false
	}
	p := 0
	for j, f := range raw {
		if l.lens[j] != len(f) || string(l.flat[p:p+len(f)]) != string(f) {
			return false
		}
		p += len(f)
	}
	return true
}

func (l *lastSet) remember(raw any) {
	l.flat, l.lens = l.flat[:0], l.lens[:0]
	switch raw := raw.(type) {
	case [][]byte:
		for _, f := range raw {
			l.flat = append(l.flat, f...)
			l.lens = append(l.lens, len(f))
		}
	case []string:
		for _, f := range raw {
			l.flat = append(l.flat, f...)
			l.lens = append(l.lens, len(f))
		}
	}
}
