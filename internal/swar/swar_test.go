package swar

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// first is the index of the lowest flagged byte of m, or 8.
func first(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// FuzzFirstFlag holds each test to its byte-at-a-time reference: the
// lowest flagged byte is the first byte that passes.
func FuzzFirstFlag(f *testing.F) {
	f.Add([]byte("ab\"cd\\\x01\x00"), byte('"'))
	f.Add([]byte("\xff\x80\x7f:::::"), byte(':'))
	f.Fuzz(func(t *testing.T, b []byte, c byte) {
		if len(b) < 8 {
			return
		}
		x := Load(string(b), 0)
		if x != binary.LittleEndian.Uint64(b) {
			t.Fatalf("Load %x", x)
		}
		want := func(pass func(byte) bool) int {
			for i := range 8 {
				if pass(b[i]) {
					return i
				}
			}
			return 8
		}
		if got, w := first(Eq(x, c)), want(func(v byte) bool { return v == c }); got != w {
			t.Fatalf("Eq(%q, %q): byte %d, want %d", b[:8], c, got, w)
		}
		if c <= 0x80 {
			if got, w := first(Less(x, c)), want(func(v byte) bool { return v < c }); got != w {
				t.Fatalf("Less(%q, %#x): byte %d, want %d", b[:8], c, got, w)
			}
		}
		if got, w := first(High(x)), want(func(v byte) bool { return v >= 0x80 }); got != w {
			t.Fatalf("High(%q): byte %d, want %d", b[:8], got, w)
		}
	})
}
