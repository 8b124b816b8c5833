package inventory

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFieldSetsAgree: whatever way a walker gets a value's set (hashed
// anew, from the cache, from the last value of as many names, from bytes
// or strings), it is the set the census makes of the raw names itself.
func TestFieldSetsAgree(t *testing.T) {
	pool := []string{"orderId", "userId", "amount", "status", "__ns__", "", "u1001", "u1002", "a8f3e1",
		"createdAt", "a-very-long-field-name-that-is-cut-at-sixty-four-bytes-by-the-census-xyz", "é", "#"}
	rng := rand.New(rand.NewPCG(1, 2))
	var sets FieldSets
	n := 20000
	if testing.Short() {
		n = 5000
	}
	for i := range n {
		raw := make([]string, rng.IntN(6))
		for j := range raw {
			raw[j] = pool[rng.IntN(len(pool))]
		}
		if i%3 == 0 && len(raw) > 1 { // the same names in another order: another last set, the same set
			raw[0], raw[1] = raw[1], raw[0]
		}
		bs := make([][]byte, len(raw))
		for j, f := range raw {
			bs[j] = []byte(f)
		}
		var got *FieldSet
		switch i % 4 {
		case 0:
			got = sets.Of(raw)
		case 1:
			got = sets.OfBytes(bs)
		case 2:
			got = sets.OfAny(raw)
		default:
			got = sets.OfBytesAny(bs)
		}
		for j := range bs { // the walker's buffer is reused: nothing may point into it
			clear(bs[j])
		}
		if len(raw) == 0 {
			if got != nil {
				t.Fatalf("%q: a set for no names", raw)
			}
			continue
		}
		h, k := fieldSetHash(raw)
		if got.hash != h || got.n != k || !slices.Equal(got.names, normalizeFields(raw)) {
			t.Fatalf("%q (way %d): set %x/%d %q, want %x/%d %q", raw, i%4, got.hash, got.n, got.names, h, k, normalizeFields(raw))
		}
	}
}

// TestFieldSetsBounded: past maxCachedSets distinct sets a FieldSets
// keeps no more, and still answers right.
func TestFieldSetsBounded(t *testing.T) {
	var sets FieldSets
	for i := range maxCachedSets + 100 {
		raw := []string{"f" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))}
		if s := sets.Of(raw); !slices.Equal(s.names, normalizeFields(raw)) {
			t.Fatalf("%q: %q", raw, s.names)
		}
	}
	if len(sets.m) > maxCachedSets {
		t.Fatalf("%d sets cached, bound %d", len(sets.m), maxCachedSets)
	}
}
