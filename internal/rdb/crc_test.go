package rdb

import (
	"math/rand/v2"
	"testing"
)

// crcBytewise is the CRC64 a byte at a time, the plain algorithm the
// faster paths are held to.
func crcBytewise(c uint64, p []byte) uint64 {
	for _, b := range p {
		c = crcTab[0][byte(c)^b] ^ c>>8
	}
	return c
}

// crcTestData is n random bytes from seed.
func crcTestData(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return data
}

// TestCRC64Lanes: inputs long enough for the two-lane loop of the tables
// give the bytewise CRC, whatever the length, the starting CRC and the
// split (crcTables itself: crc64Update takes the carry-less path where
// the CPU has it).
func TestCRC64Lanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	data := crcTestData(9, 5*crcLane+123)
	for _, n := range []int{2*crcLane - 1, 2 * crcLane, 2*crcLane + 1, 2*crcLane + 15, 4 * crcLane, 4*crcLane + 17, len(data)} {
		for _, start := range []uint64{0, 0xe9c6d914c4b8d9ca} {
			want := crcBytewise(start, data[:n])
			if got := crcTables(start, data[:n]); got != want {
				t.Fatalf("len %d from %x: %x, bytewise %x", n, start, got, want)
			}
			cut := rng.IntN(n)
			if got := crcTables(crcTables(start, data[:cut]), data[cut:n]); got != want {
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

// TestCRC64Paths: every path (carry-less folding where the CPU has it,
// the two-lane tables, the tail loops) gives the bytewise CRC for every
// length around the path boundaries, from any start and any alignment.
func TestCRC64Paths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	data := crcTestData(5, 2*crcLane+1000)
	lengths := []int{0, 1, 15, 16, 63, 64, 65, 127, 128, 255, 256, 257, 319, 320, 321, 1000, 4096, 4099, 2*crcLane - 3, 2*crcLane + 777}
	for range 200 {
		lengths = append(lengths, rng.IntN(len(data)-64))
	}
	for _, n := range lengths {
		off := rng.IntN(64)
		p := data[off : off+n]
		for _, start := range []uint64{0, ^uint64(0), rng.Uint64()} {
			want := crcBytewise(start, p)
			if got := crc64Update(start, p); got != want {
				t.Fatalf("len %d at offset %d from %x: %x, bytewise %x (carry-less path: %v)", n, off, start, got, want, haveCLMUL)
			}
		}
	}
	if got := CRC64([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("check value %x", got)
	}
}

// TestCRCXPow: x^(8n) by shifts agrees with the table's x^(8n).
func TestCRCXPow(t *testing.T) {
	for _, n := range []int{0, 1, 2, 16, 64, 1000} {
		if got, want := crcXPow(8*n), crcZeros(n); got != want {
			t.Fatalf("x^%d = %x, want %x", 8*n, got, want)
		}
	}
}

// BenchmarkCRC64 is the checksum over one reader buffer, the size the
// decoder folds at a time; "tables" is the table path alone.
func BenchmarkCRC64(b *testing.B) {
	p := make([]byte, readerBufSize)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.Run("update", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			crc64Update(0, p)
		}
	})
	b.Run("tables", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			crcTables(0, p)
		}
	})
}

// FuzzCRC64: crc64Update agrees with the bytewise CRC on any input, from
// any start, split anywhere.
func FuzzCRC64(f *testing.F) {
	f.Add([]byte("123456789"), uint64(0), 4)
	f.Add(make([]byte, 777), uint64(0xe9c6d914c4b8d9ca), 300)
	f.Fuzz(func(t *testing.T, p []byte, start uint64, cut int) {
		want := crcBytewise(start, p)
		if got := crc64Update(start, p); got != want {
			t.Fatalf("len %d from %x: %x, bytewise %x", len(p), start, got, want)
		}
		if cut = max(cut, 0); cut <= len(p) {
			if got := crc64Update(crc64Update(start, p[:cut]), p[cut:]); got != want {
				t.Fatalf("len %d cut at %d: %x, bytewise %x", len(p), cut, got, want)
			}
		}
	})
}
