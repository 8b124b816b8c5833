package inventory

import (
	"testing"
)

// FuzzFieldSetHash holds the census's set hash to normalizeFields: two
// lists of distinct names hash alike exactly when they normalize to the
// same set.
func FuzzFieldSetHash(f *testing.F) {
	f.Add("orderId", "amount", "u1001", "u1002")
	f.Add("名称", "\xb3x", "a-1", "a-2")
	f.Add("discountValue", "discountType", "x", "__ns__")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		// A value's field names are distinct (a hash's are; a JSON
		// object's should be).
		if a == b || a == c || a == d || b == c || c == d {
			return
		}
		x := []string{a, b, c}
		y := []string{c, d, a}
		hx, nx := fieldSetHash(x)
		hy, ny := fieldSetHash(y)
		same := slicesEqual(normalizeFields(x), normalizeFields(y))
		if same && (hx != hy || nx != ny) {
			t.Fatalf("%q and %q normalize alike but hash %x/%d and %x/%d", x, y, hx, nx, hy, ny)
		}
		if !same && hx == hy && nx == ny && len(normalizeFields(x)) == nx && len(normalizeFields(y)) == ny {
			t.Fatalf("%q and %q differ but hash alike", x, y)
		}
		for _, s := range []string{a, b, c, d} {
			if _, maybe := wordHash(s); !maybe {
				for i := 0; i < len(s); i++ {
					if s[i] >= '0' && s[i] <= '9' || s[i] == '#' {
						t.Fatalf("wordHash(%q) says it holds no digit", s)
					}
				}
			}
		}
	})
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCensusAddCounts holds census.add, which finds the set it counted
// last without its map, to a count by set: runs of one set, sets that
// alternate, sets that come back after others, and past maxSigs sets
// the census given up.
func TestCensusAddCounts(t *testing.T) {
	var sets []*FieldSet
	for i := range maxSigs + 1 {
		names := []string{"a", "b", string(rune('c' + i%20)), string(rune('A' + i/20))}
		h, n := fieldSetHash(names)
		sets = append(sets, &FieldSet{hash: h, n: n, names: normalizeFields(names)})
	}
	for _, tc := range []struct {
		name string
		seq  []int
	}{
		{"runs", []int{0, 0, 0, 1, 1, 2, 0, 0, 3, 3, 3, 1}},
		{"alternating", []int{0, 1, 0, 1, 2, 0, 2, 1, 1, 0}},
		{"many", func() []int {
			var s []int
			for i := range 3000 {
				s = append(s, i*i%7, i%3, i%(maxSigs-1))
			}
			return s
		}()},
	} {
		c := &census{}
		want := map[uint64]int64{}
		for _, i := range tc.seq {
			c.add(sets[i], "k", 0, 1, 1<<30)
			want[sets[i].hash]++
		}
		if c.keys != int64(len(tc.seq)) || len(c.sigs) != len(want) {
			t.Fatalf("%s: %d values in %d sets, want %d in %d", tc.name, c.keys, len(c.sigs), len(tc.seq), len(want))
		}
		for h, n := range want {
			if s := c.sigs[h]; s == nil || s.count != n {
				t.Fatalf("%s: set %x counted %v, want %d", tc.name, h, s, n)
			}
		}
	}
	c := &census{}
	for i := range sets {
		c.add(sets[i], "k", 0, 1, 1<<30)
		c.add(sets[0], "k", 0, 1, 1<<30)
	}
	if !c.overflow || c.sigs != nil || c.last != nil {
		t.Fatalf("%d sets: overflow %v, %d sets kept", len(sets), c.overflow, len(c.sigs))
	}
}
