package inventory

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/keyguard/keyguard/internal/swar"
)

// census counts the field sets of a template's (or family's) values:
// every key whose field names the walker read is counted under its set
// (names normalized: see normalizeFields), and the keys of each set are
// kept while the set is rare. From the counts, report time learns each
// template's style (the fields most of its values hold) and finds the
// values holding another owner's style. Memory does not grow with the
// key count: at most maxSigs sets per template (more, and its values
// vary too much to tell styles: overflow), keys kept per set up to
// maxSigKeys and per aggregator up to maxCensusKeys.
type census struct {
	sigs     map[uint64]*fieldSet
	overflow bool  // more than maxSigs field sets
	keys     int64 // values with field names counted
	// The set add counted last, by its hash: the values of a template
	// mostly hold one set, found so without the map. sigs keeps every
	// set it holds until drop, after which add counts nothing.
	lastHash uint64
	last     *fieldSet
}

// fieldSet is one field set of a census.
type fieldSet struct {
	names []string // normalized, sorted
	count int64
	keys  []censusKey // its keys while count <= maxSigKeys; nil past that, or when the budget ran out
	lost  bool        // keys were not kept (the per-aggregator budget ran out)
}

type censusKey struct {
	key   string
	db    int
	bytes int64
}

// Census bounds.
const (
	maxSigs       = 64
	maxSigKeys    = 1000
	maxCensusKeys = 100_000
)

// add counts a value of key with the field names set, and copies what
// it keeps. It returns the change in the keys kept
// (one more, or fewer when a set grows past maxSigKeys) so the
// aggregator can count its budget.
func (c *census) add(set *FieldSet, key string, db int, bytes int64, budget int) (kept int) {
	if c.overflow {
		return 0
	}
	h, n := set.hash, set.n
	if n == 0 {
		return 0
	}
	s := c.last
	if s == nil || c.lastHash != h {
		if c.sigs == nil {
			c.sigs = map[uint64]*fieldSet{}
		}
		if s = c.sigs[h]; s == nil {
			if len(c.sigs) >= maxSigs {
				return -c.drop()
			}
			s = &fieldSet{names: set.normalized()}
			c.sigs[h] = s
		}
		c.last, c.lastHash = s, h
	}
	c.keys++
	s.count++
	switch {
	case s.count > maxSigKeys:
		n := len(s.keys)
		s.keys = nil
		return -n
	case budget <= 0:
		s.lost = true
	default:
		s.keys = append(s.keys, censusKey{strings.Clone(clip(key, maxKeepKey)), db, bytes})
		return 1
	}
	return 0
}

// drop gives the census up (its values hold too many field sets) and
// returns how many keys it kept.
func (c *census) drop() int {
	n := 0
	for _, s := range c.sigs {
		n += len(s.keys)
	}
	c.overflow = true
	c.sigs, c.last = nil, nil
	return n
}

// merge adds o's counts and keys to c; it returns the change in the
// keys c keeps.
func (c *census) merge(o *census, budget int) int {
	if c.overflow || o.overflow {
		c.keys += o.keys
		return -c.drop()
	}
	kept := 0
	for h, os := range o.sigs {
		s := c.sigs[h]
		if s == nil {
			if len(c.sigs) >= maxSigs {
				c.keys += o.keys
				return kept - c.drop()
			}
			if c.sigs == nil {
				c.sigs = map[uint64]*fieldSet{}
			}
			s = &fieldSet{names: os.names}
			c.sigs[h] = s
		}
		s.count += os.count
		s.lost = s.lost || os.lost
		switch {
		case s.count > maxSigKeys:
			kept -= len(s.keys)
			s.keys = nil
		case budget-kept < len(os.keys):
			s.lost = true
		default:
			s.keys = append(s.keys, os.keys...)
			kept += len(os.keys)
		}
	}
	c.keys += o.keys
	return kept
}

// sets returns the census's field sets, the most common first.
func (c *census) sets() []*fieldSet {
	out := make([]*fieldSet, 0, len(c.sigs))
	for _, s := range c.sigs {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *fieldSet) int {
		if a.count != b.count {
			return int(b.count - a.count)
		}
		return slices.Compare(a.names, b.names)
	})
	return out
}

// fieldSetHash is an order-independent hash of the set of normalized
// names of raw (the set normalizeFields makes, without allocating) and
// its size; the reserved __ns__ and empty names are left out.
func fieldSetHash(raw []string) (uint64, int) {
	// Names without digits are their own normal form: two of them hash
	// alike only when they are equal, which a hash's field names never
	// are. Only names that normalize (u1001, u1002 → u#) can repeat, so
	// only they are looked up among the names seen.
	var seen [maxFieldsPerKey]uint64
	n, norm := 0, 0
	var sum uint64
	for _, f := range raw {
		if f == "" || f == "__ns__" {
			continue
		}
		if len(f) > maxFieldName {
			f = f[:maxFieldName]
		}
		h, maybe := wordHash(f)
		if maybe {
			h = normalizedHash(f)
			if slices.Contains(seen[:norm], h) {
				continue
			}
			seen[norm] = h
			norm++
		}
		if n == maxFieldsPerKey {
			break
		}
		n++
		sum += h
	}
	return sum, n
}

// normalizedHash hashes the name normalizeFields makes of f (at most
// maxFieldName bytes), for a name wordHash says may hold a digit; a name
// without digits (most are) is its own normal form, hashed by wordHash
// alone.
func normalizedHash(f string) uint64 {
	var buf [maxFieldName]byte
	n := normalizeName(&buf, f)
	h, _ := wordHash(unsafe.String(&buf[0], n)) // n > 0: f is not empty
	return h
}

// normalizeName writes the normal form of f (at most maxFieldName bytes)
// to buf and returns its length: every run of letters and digits holding
// a digit reads as '#'.
func normalizeName(buf *[maxFieldName]byte, f string) int {
	n := 0
	for i := 0; i < len(f); {
		if !isAlnum(f[i]) {
			buf[n] = f[i]
			n++
			i++
			continue
		}
		j, hasDigit := i, false
		for j < len(f) && isAlnum(f[j]) {
			hasDigit = hasDigit || f[j]-'0' <= 9
			j++
		}
		if hasDigit {
			buf[n] = '#'
			n++
		} else {
			n += copy(buf[n:], f[i:j])
		}
		i = j
	}
	return n
}

// wordHash hashes a short name with a few overlapping loads and one
// multiply per eight bytes, and reports whether the name may hold an
// ASCII digit or '#' (never false when it does; a few bytes over 0x80
// answer true too, and the caller then takes the exact way).
func wordHash(s string) (uint64, bool) {
	const m = 0x9e3779b97f4a7c15
	n := len(s)
	h := uint64(n) * m
	var dig uint64
	switch {
	case n >= 8:
		for i := 0; i+8 < n; i += 8 {
			x := swar.Load(s, i)
			dig |= digitLanes(x)
			h = (h ^ x) * m
			h ^= h >> 29
		}
		x := swar.Load(s, n-8) // the last eight bytes, overlapping the last word
		dig |= digitLanes(x)
		h = (h ^ x) * m
	case n >= 4:
		x := uint64(le32(s)) | uint64(le32(s[n-4:]))<<32
		dig = digitLanes(x)
		h = (h ^ x) * m
	default:
		for i := 0; i < n; i++ {
			h = (h ^ uint64(s[i])) * m
			if s[i]-'0' <= 9 || s[i] == '#' {
				dig = 1
			}
		}
	}
	h = (h ^ h>>32) * 0xff51afd7ed558ccd // spread before the set's sum
	return h ^ h>>29, dig != 0
}

// digitLanes flags the bytes of x holding a digit 0x30..0x39 (and
// 0xb0..0xb9), or '#', which a normalized name holds.
func digitLanes(x uint64) uint64 {
	y := x | swar.Hi
	return (y-swar.Lo*0x30)&^(y-swar.Lo*0x3a)&swar.Hi | swar.Eq(x, '#')
}

func le32(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
