package inventory

import (
	"cmp"
	"slices"
	"strings"
)

// topRef is a top key as the report orders it: larger first, then by
// name, then by database.
type topRef struct {
	bytes  int64
	w      uint64 // nameWord of the name at the depth being sorted
	key    string
	db     int32
	i      int32 // the key's index in the list
	keyLen int32 // the key's full length: the report reads no more of the list's key
}

// sortTopRefs sorts s by size (larger first), name and database, 8 bytes
// of the names at a time, each by radix on the bytes in which they
// differ: most of a long list are keys of one size and of a few
// families, whose names share long prefixes, which each comparison of
// whole names read again.
// scratch, when it holds 2·len(s), is written instead of fresh memory.
func sortTopRefs(s []topRef, scratch []wordKey) {
	if len(scratch) < 2*len(s) {
		scratch = make([]wordKey, 2*len(s))
	}
	t := refSorter{a: scratch[:len(s)], b: scratch[len(s) : 2*len(s)]}
	for i := range s {
		s[i].w = nameWord(s[i].key, 0)
	}
	t.byKey(s, func(r *topRef) uint64 { return r.w })
	t.byKey(s, func(r *topRef) uint64 { return ^(uint64(r.bytes) ^ 1<<63) }) // larger first
	for a := 0; a < len(s); {
		b := a + 1
		for b < len(s) && s[b].bytes == s[a].bytes && s[b].w == s[a].w {
			b++
		}
		t.sortNames(s[a:b], 8)
		a = b
	}
}

// wordKey is a sort key and the index of its reference.
type wordKey struct {
	w uint64
	j uint32
}

// refSorter is the scratch of sortTopRefs.
type refSorter struct{ a, b []wordKey }

// byKey sorts s by key, keeping the order of equal keys: one counting
// pass per byte of the keys that is not the same in all of them (the
// names of a family share most of theirs), on 16-byte keys, then the
// references moved once.
func (t *refSorter) byKey(s []topRef, key func(*topRef) uint64) {
	a, b := t.a[:len(s)], t.b[:len(s)]
	var or, and uint64 = 0, ^uint64(0)
	for j := range s {
		w := key(&s[j])
		a[j] = wordKey{w, uint32(j)}
		or |= w
		and &= w
	}
	differ := or ^ and
	if differ == 0 {
		return
	}
	for shift := 0; shift < 64; shift += 8 {
		if differ>>shift&0xff == 0 {
			continue
		}
		var count [256]int
		for _, x := range a {
			count[x.w>>shift&0xff]++
		}
		sum := 0
		for c, n := range count {
			count[c], sum = sum, sum+n
		}
		for _, x := range a {
			c := x.w >> shift & 0xff
			b[count[c]] = x
			count[c]++
		}
		a, b = b, a
	}
	// Place k gets the reference a[k].j: follow each cycle once.
	for start := range a {
		if int(a[start].j) == start {
			continue
		}
		first := s[start]
		k := start
		for {
			next := int(a[k].j)
			a[k].j = uint32(k) // placed
			if next == start {
				s[k] = first
				break
			}
			s[k] = s[next]
			k = next
		}
	}
}

// sortNames sorts s, whose names agree on their first d bytes (a byte 0
// and the end of a name alike), by name and database.
func (t *refSorter) sortNames(s []topRef, d int) {
	if len(s) < 2 {
		return
	}
	if len(s) <= 12 {
		slices.SortFunc(s, func(p, q topRef) int {
			return cmp.Or(strings.Compare(p.key, q.key), cmp.Compare(p.db, q.db))
		})
		return
	}
	longer := false
	for i := range s {
		s[i].w = nameWord(s[i].key, d)
		longer = longer || len(s[i].key) > d+8
	}
	t.byKey(s, func(r *topRef) uint64 { return r.w })
	for a := 0; a < len(s); {
		b := a + 1
		for b < len(s) && s[b].w == s[a].w {
			b++
		}
		if longer {
			t.sortNames(s[a:b], d+8)
		} else if b-a > 1 {
			// The names end within these 8 bytes: names that read alike
			// differ only by trailing zero bytes, the shorter first.
			slices.SortFunc(s[a:b], func(p, q topRef) int {
				return cmp.Or(cmp.Compare(len(p.key), len(q.key)), cmp.Compare(p.db, q.db))
			})
		}
		a = b
	}
}

// nameWord is the name's bytes d to d+8 as a big-endian number, zero past
// its end: numbers in the order of the bytes.
func nameWord(s string, d int) uint64 {
	if d+8 <= len(s) {
		return uint64(s[d])<<56 | uint64(s[d+1])<<48 | uint64(s[d+2])<<40 | uint64(s[d+3])<<32 |
			uint64(s[d+4])<<24 | uint64(s[d+5])<<16 | uint64(s[d+6])<<8 | uint64(s[d+7])
	}
	if d >= len(s) {
		return 0
	}
	if len(s) >= 8 {
		// The name ends within these 8 bytes: its last 8 read at once,
		// shifted so that byte d leads and zeros follow its end.
		e := len(s) - 8
		w := uint64(s[e])<<56 | uint64(s[e+1])<<48 | uint64(s[e+2])<<40 | uint64(s[e+3])<<32 |
			uint64(s[e+4])<<24 | uint64(s[e+5])<<16 | uint64(s[e+6])<<8 | uint64(s[e+7])
		return w << (8 * uint(d+8-len(s)))
	}
	var w uint64
	for i := 0; i < 8; i++ {
		w <<= 8
		if d+i < len(s) {
			w |= uint64(s[d+i])
		}
	}
	return w
}
