package inventory

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wantTopOrder is the report's order of top keys, by whole names.
func wantTopOrder(p, q topRef) int {
	if p.bytes != q.bytes {
		return cmp.Compare(q.bytes, p.bytes)
	}
	return cmp.Or(strings.Compare(p.key, q.key), cmp.Compare(p.db, q.db))
}

func checkTopOrder(t *testing.T, refs []topRef) {
	t.Helper()
	got := slices.Clone(refs)
	// The scratch as the report lends it: the settle's, not zeroed.
	scratch := make([]wordKey, 2*len(got))
	for i := range scratch {
		scratch[i] = wordKey{w: uint64(i) * 0x9e3779b97f4a7c15, j: uint32(i * 7)}
	}
	sortTopRefs(got, scratch)
	want := slices.Clone(refs)
	slices.SortStableFunc(want, wantTopOrder)
	for i := range got {
		if wantTopOrder(got[i], want[i]) != 0 {
			t.Fatalf("at %d of %d: %q (%d bytes, db %d), want %q (%d bytes, db %d)", i, len(got),
				got[i].key, got[i].bytes, got[i].db, want[i].key, want[i].bytes, want[i].db)
		}
	}
}

// TestSortTopRefs holds the sort by 8-byte words to the sort by whole
// names: long shared prefixes, names that end inside a word or differ by
// trailing zero bytes, one name in several databases, few sizes.
func TestSortTopRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"", "a", "cache:product:detail:p", "feed:user:", "x\x00", "cache:product:detail:p2188", strings.Repeat("k", 40)}
	tails := []string{"", "\x00", "\x00\x00", "1", "12", "\xff", "é", "0000000", "00000000", "000000000"}
	for _, size := range []int{1, 5, 13, 100, 5000} {
		refs := make([]topRef, size)
		for i := range refs {
			key := prefixes[rng.IntN(len(prefixes))]
			for range rng.IntN(4) {
				if rng.IntN(2) == 0 {
					key += tails[rng.IntN(len(tails))]
				} else {
					key += string(rune('0' + rng.IntN(10)))
				}
			}
			refs[i] = topRef{bytes: int64(rng.IntN(3)) * 100, key: key, db: int32(rng.IntN(3)), i: int32(i)}
		}
		checkTopOrder(t, refs)
	}
}

// FuzzSortTopRefs: names cut from the input at the given lengths, sizes
// and databases from its bytes.
func FuzzSortTopRefs(f *testing.F) {
	f.Add([]byte("cache:product:detail:p1\x00cache:product:detail:p1\x00\x00"), []byte{3, 200, 5, 200, 9, 3})
	f.Fuzz(func(t *testing.T, names, lens []byte) {
		var refs []topRef
		for i := 0; i+1 < len(lens); i += 2 {
			n := min(int(lens[i])%40, len(names))
			refs = append(refs, topRef{bytes: int64(lens[i+1] % 2), key: string(names[:n]), db: int32(lens[i+1] % 3), i: int32(len(refs))})
			if len(names) > 0 {
				names = names[1:]
			}
		}
		checkTopOrder(t, refs)
	})
}

// BenchmarkSortTopRefs sorts 100,000 top keys as a long list of an RDB
// file holds them: nine in ten of one size and of three families, the
// others of a few sizes; "names" compares whole names as the report did.
func BenchmarkSortTopRefs(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	families := []string{"cache:product:detail:p", "feed:user:", "event:order:"}
	refs := make([]topRef, 100_000)
	for i := range refs {
		size := int64(200)
		if i%10 == 0 {
			size = int64(700 + rng.IntN(30))
		}
		key := families[rng.IntN(len(families))] + strconv.Itoa(rng.IntN(1_000_000))
		refs[i] = topRef{bytes: size, key: key, i: int32(i)}
	}
	s := make([]topRef, len(refs))
	b.Run("words", func(b *testing.B) {
		for b.Loop() {
			copy(s, refs)
			sortTopRefs(s, nil)
		}
	})
	b.Run("names", func(b *testing.B) {
		for b.Loop() {
			copy(s, refs)
			slices.SortFunc(s, wantTopOrder)
		}
	})
}

// TestNameWord: a name's bytes d to d+8, big-endian, zeros past its end,
// at every depth of names of every length to 24 bytes (the tail of a
// name of 8 bytes or more is read with one load, then shifted).
func TestNameWord(t *testing.T) {
	full := "\xff\x00abcdefghij\x80klmnopqrstu\x01"
	for n := 0; n <= len(full); n++ {
		s := full[:n]
		for d := 0; d <= n+9; d += 1 {
			var want uint64
			for i := range 8 {
				want <<= 8
				if d+i < len(s) {
					want |= uint64(s[d+i])
				}
			}
			if got := nameWord(s, d); got != want {
				t.Errorf("nameWord(%q, %d) = %#x, want %#x", s, d, got, want)
			}
		}
	}
}
