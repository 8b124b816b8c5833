package inventory

import (
	"cmp"
	"slices"
	"strings"
)

// topRef is a top key as the report orders it: larger first, then by
// name, then by database.
type topRef struct {
	bytes int64
	w     uint64 // nameWord of the name at the depth being sorted
	key   string
	db    int
	i     int32
}

// sortTopRefs sorts s by size (larger first), name and database, 8 bytes
// of the names at a time: most of a long list are keys of one size and
// of a few families, whose names share long prefixes, which each
// comparison of whole names read again.
func sortTopRefs(s []topRef) {
	for i := range s {
		s[i].w = nameWord(s[i].key, 0)
	}
	slices.SortFunc(s, func(p, q topRef) int {
		if p.bytes != q.bytes {
			return cmp.Compare(q.bytes, p.bytes)
		}
		return cmp.Compare(p.w, q.w)
	})
	for a := 0; a < len(s); {
		b := a + 1
		for b < len(s) && s[b].bytes == s[a].bytes && s[b].w == s[a].w {
			b++
		}
		sortNames(s[a:b], 8)
		a = b
	}
}

// sortNames sorts s, whose names agree on their first d bytes (a byte 0
// and the end of a name alike), by name and database.
func sortNames(s []topRef, d int) {
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
	if !longer {
		// The names end within these 8 bytes: names that read alike
		// differ only by trailing zero bytes, the shorter first.
		slices.SortFunc(s, func(p, q topRef) int {
			return cmp.Or(cmp.Compare(p.w, q.w), cmp.Compare(len(p.key), len(q.key)), cmp.Compare(p.db, q.db))
		})
		return
	}
	slices.SortFunc(s, func(p, q topRef) int { return cmp.Compare(p.w, q.w) })
	for a := 0; a < len(s); {
		b := a + 1
		for b < len(s) && s[b].w == s[a].w {
			b++
		}
		sortNames(s[a:b], d+8)
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
	var w uint64
	for i := 0; i < 8; i++ {
		w <<= 8
		if d+i < len(s) {
			w |= uint64(s[d+i])
		}
	}
	return w
}
