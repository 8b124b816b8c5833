// Package swar holds the eight-bytes-at-a-time tests (SIMD within a
// register) that the key matcher, the JSON scanners and the report's
// string encoder share: each sets the top bit of the bytes of a word that
// pass a test, so a scanner skips eight plain bytes with one comparison.
//
//	w := swar.Load(s, i)                       // s[i:i+8], little-endian
//	if m := swar.Eq(w, '"') | swar.Less(w, 0x20); m != 0 {
//		i += bits.TrailingZeros64(m) >> 3  // the first such byte
//	}
//
// Only the lowest flagged byte is exact: a borrow may flag bytes above
// it. The tests hold every function to a byte-at-a-time reference.
//
// It imports no package of this module.
package swar

// Lo and Hi are the bytes 0x01 and 0x80 in every lane of a word.
const (
	Lo = 0x0101010101010101
	Hi = 0x8080808080808080
)

// Load is s[i:i+8] as a little-endian word.
func Load(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

// Eq flags the bytes of x equal to c.
func Eq(x uint64, c byte) uint64 {
	v := x ^ Lo*uint64(c)
	return (v - Lo) &^ v & Hi
}

// Less flags the bytes of x below c (c <= 0x80).
func Less(x uint64, c byte) uint64 { return (x - Lo*uint64(c)) &^ x & Hi }

// High flags the bytes of x at or above 0x80.
func High(x uint64) uint64 { return x & Hi }
