package inventory

import (
	"slices"
	"strings"
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

	// The raw names of the last value and their set: most values of a
	// template name the same fields in the same order.
	lastRaw []string
	last    *fieldSet
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

// add counts a value with field names raw (as the walker gave them) of
// key, and copies what it keeps. It returns the change in the keys kept
// (one more, or fewer when a set grows past maxSigKeys) so the
// aggregator can count its budget.
func (c *census) add(raw []string, key string, db int, bytes int64, budget int) (kept int) {
	if c.overflow {
		return 0
	}
	s := c.last
	if s == nil || !slices.Equal(raw, c.lastRaw) {
		h, n := fieldSetHash(raw)
		if n == 0 {
			return 0
		}
		if c.sigs == nil {
			c.sigs = map[uint64]*fieldSet{}
		}
		if s = c.sigs[h]; s == nil {
			if len(c.sigs) >= maxSigs {
				return -c.drop()
			}
			s = &fieldSet{names: normalizeFields(raw)}
			c.sigs[h] = s
		}
		c.last = s
		c.lastRaw = c.lastRaw[:0]
		for _, r := range raw {
			c.lastRaw = append(c.lastRaw, strings.Clone(r))
		}
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
	c.sigs, c.last, c.lastRaw = nil, nil, nil
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
	var seen [maxFieldsPerKey]uint64
	n := 0
	var sum uint64
	for _, f := range raw {
		if f == "" || f == "__ns__" {
			continue
		}
		h := normalizedHash(f)
		if slices.Contains(seen[:n], h) {
			continue
		}
		if n == len(seen) {
			break
		}
		seen[n] = h
		n++
		sum += mix64(h)
	}
	return sum, n
}

// normalizedHash hashes the name normalizeFields makes of f: runs of
// letters and digits holding a digit read as '#', at most maxFieldName
// bytes of f.
func normalizedHash(f string) uint64 {
	if len(f) > maxFieldName {
		f = f[:maxFieldName]
	}
	h := uint64(14695981039346656037)
	put := func(c byte) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	for i := 0; i < len(f); {
		if !isAlnum(f[i]) {
			put(f[i])
			i++
			continue
		}
		j, digit := i, false
		for j < len(f) && isAlnum(f[j]) {
			digit = digit || (f[j] >= '0' && f[j] <= '9')
			j++
		}
		if digit {
			put('#')
		} else {
			for k := i; k < j; k++ {
				put(f[k])
			}
		}
		i = j
	}
	return h
}

// mix64 is murmur3's finalizer: it spreads a hash before it is summed.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
