package inventory

import (
	"cmp"
	"math/rand/v2"
	"strings"
	"testing"
)

// Two keys past their common prefix order by prefix8 as by their bytes
// wherever prefix8 tells them apart: short keys, zero bytes and high
// bytes included.
func TestPrefix8Order(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0, 1, 'a', 'b', 0x7f, 0x80, 0xff}
	word := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	told := 0
	for range 200_000 {
		pre := strings.Repeat("k", rng.IntN(3))
		a, b := pre+word(), pre+word()
		cp := commonPrefix(a, b)
		if a[:cp] != b[:cp] || cp < min(len(a), len(b)) && a[cp] == b[cp] {
			t.Fatalf("commonPrefix(%q, %q) = %d", a, b, cp)
		}
		pa, pb := prefix8(a[cp:]), prefix8(b[cp:])
		if pa == pb {
			continue
		}
		told++
		if got, want := cmp.Compare(pa, pb), strings.Compare(a, b); got != want {
			t.Fatalf("%q against %q: prefix8 orders them %d, their bytes %d", a, b, got, want)
		}
	}
	if told < 100_000 {
		t.Fatalf("prefix8 told only %d pairs apart", told)
	}
}
