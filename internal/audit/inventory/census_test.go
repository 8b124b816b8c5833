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
