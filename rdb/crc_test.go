package rdb

import (
	"math/rand/v2"
	"testing"
)

// TestCRC64Lanes: inputs long enough for the two-lane loop give the
// bytewise CRC, whatever the length, the starting CRC and the split.
func TestCRC64Lanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	data := make([]byte, 5*crcLane+123)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	bytewise := func(c uint64, p []byte) uint64 {
		for _, b := range p {
			c = crcTab[0][byte(c)^b] ^ c>>8
		}
		return c
	}
	for _, n := range []int{2*crcLane - 1, 2 * crcLane, 2*crcLane + 1, 2*crcLane + 15, 4 * crcLane, 4*crcLane + 17, len(data)} {
		for _, start := range []uint64{0, 0xe9c6d914c4b8d9ca} {
			want := bytewise(start, data[:n])
			if got := crc64Update(start, data[:n]); got != want {
				t.Fatalf("len %d from %x: %x, bytewise %x", n, start, got, want)
			}
			cut := rng.IntN(n)
			if got := crc64Update(crc64Update(start, data[:cut]), data[cut:n]); got != want {
				t.Fatalf("len %d cut at %d: %x, bytewise %x", n, cut, got, want)
			}
		}
	}
	// x^(8n)·x^(8m) = x^(8(n+m)), and 1 is the identity.
	if got, want := crcMul(crcZeros(3), crcZeros(5)), crcZeros(8); got != want {
		t.Fatalf("x^24·x^40 = %x, want %x", got, want)
	}
	if got := crcMul(1<<63, 0x1234); got != 0x1234 {
		t.Fatalf("1·a = %x", got)
	}
}
