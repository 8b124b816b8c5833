package rdb

import "encoding/binary"

// CRC64 as Redis computes the RDB trailer (src/crc64.c): the "Jones"
// polynomial 0xad93d23594c935a9, reflected input and output, initial value
// 0, no final xor. Check value: CRC64("123456789") = 0xe9c6d914c4b8d9ca.
//
// The implementation is slicing-by-16: sixteen 256-entry tables let the
// loop fold sixteen input bytes per step. Long inputs are cut in pairs of
// lanes of crcLane bytes whose CRCs are computed side by side (the CPU
// overlaps two independent chains of table lookups) and then combined:
// CRC(A‖B) = CRC(A)·x^(8|B|) mod P ⊕ CRC₀(B), the CRC being linear.

// crcPolyReflected is the Jones polynomial with its bits reversed, as the
// reflected (LSB-first) algorithm needs it.
const crcPolyReflected = 0x95ac9329ac4bc9b5

// crcTable[k][b] is the CRC of byte b followed by k zero bytes.
type crcTable [16][256]uint64

// crcTab is computed once at package initialisation and never written
// afterwards.
var crcTab = makeCRCTable()

func makeCRCTable() *crcTable {
	t := new(crcTable)
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crcPolyReflected
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < len(t); k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}

// crcLane is the length of one lane; crcLaneShift is x^(8·crcLane) mod P,
// what shifting a CRC past crcLane bytes multiplies it by.
const crcLane = 16 << 10

var crcLaneShift = crcZeros(crcLane)

// crcZeros returns x^(8n) mod P: the CRC register, started at the
// polynomial 1 (the top bit, reflected), after n zero bytes.
func crcZeros(n int) uint64 {
	r := uint64(1) << 63
	for range n {
		r = crcTab[0][r&0xff] ^ r>>8
	}
	return r
}

// crcMul returns a·b mod P, both in the reflected representation (bit 63
// is x^0): the sum of b·x^k for every term x^k of a, b stepping up a
// degree each time. Masks instead of branches: the bits are random.
func crcMul(a, b uint64) uint64 {
	var p uint64
	for k := 63; k >= 0; k-- {
		p ^= b & -(a >> k & 1)
		b = b>>1 ^ crcPolyReflected&-(b&1)
	}
	return p
}

// crcXPow returns x^m mod P: 1 (bit 63) multiplied by x m times, a
// multiplication by x being a shift towards bit 0 that adds P when x^64
// comes out.
func crcXPow(m int) uint64 {
	r := uint64(1) << 63
	for range m {
		r = r>>1 ^ crcPolyReflected&-(r&1)
	}
	return r
}

// crc64Update extends crc (0 for a fresh checksum) with p: long inputs
// mostly by carry-less multiplication where the CPU has it
// (crc64_clmul.go), the rest by the tables.
func crc64Update(crc uint64, p []byte) uint64 {
	crc, p = crcBlocks(crc, p)
	return crcTables(crc, p)
}

// crcTables extends crc with p by table lookups.
func crcTables(crc uint64, p []byte) uint64 {
	t := crcTab
	for len(p) >= 2*crcLane {
		a, b := p[:crcLane], p[crcLane:2*crcLane]
		ca, cb := crc, uint64(0)
		for len(a) >= 16 && len(b) >= 16 {
			q, r := a[:16], b[:16]
			u := ca ^ binary.LittleEndian.Uint64(q)
			v := cb ^ binary.LittleEndian.Uint64(r)
			x0 := t[15][u&0xff] ^ t[14][u>>8&0xff] ^ t[13][u>>16&0xff] ^ t[12][u>>24&0xff]
			x1 := t[11][u>>32&0xff] ^ t[10][u>>40&0xff] ^ t[9][u>>48&0xff] ^ t[8][u>>56]
			x2 := t[7][q[8]] ^ t[6][q[9]] ^ t[5][q[10]] ^ t[4][q[11]]
			x3 := t[3][q[12]] ^ t[2][q[13]] ^ t[1][q[14]] ^ t[0][q[15]]
			y0 := t[15][v&0xff] ^ t[14][v>>8&0xff] ^ t[13][v>>16&0xff] ^ t[12][v>>24&0xff]
			y1 := t[11][v>>32&0xff] ^ t[10][v>>40&0xff] ^ t[9][v>>48&0xff] ^ t[8][v>>56]
			y2 := t[7][r[8]] ^ t[6][r[9]] ^ t[5][r[10]] ^ t[4][r[11]]
			y3 := t[3][r[12]] ^ t[2][r[13]] ^ t[1][r[14]] ^ t[0][r[15]]
			ca = (x0 ^ x1) ^ (x2 ^ x3)
			cb = (y0 ^ y1) ^ (y2 ^ y3)
			a, b = a[16:], b[16:]
		}
		crc = crcMul(ca, crcLaneShift) ^ cb
		p = p[2*crcLane:]
	}
	for len(p) >= 16 {
		q := p[:16]
		a := crc ^ binary.LittleEndian.Uint64(q)
		// Four independent chains: the XORs form a tree, not one long
		// dependency chain the CPU would have to walk serially. The
		// second half does not depend on crc: its bytes index the tables
		// straight from the input.
		x0 := t[15][a&0xff] ^ t[14][a>>8&0xff] ^ t[13][a>>16&0xff] ^ t[12][a>>24&0xff]
		x1 := t[11][a>>32&0xff] ^ t[10][a>>40&0xff] ^ t[9][a>>48&0xff] ^ t[8][a>>56]
		x2 := t[7][q[8]] ^ t[6][q[9]] ^ t[5][q[10]] ^ t[4][q[11]]
		x3 := t[3][q[12]] ^ t[2][q[13]] ^ t[1][q[14]] ^ t[0][q[15]]
		crc = (x0 ^ x1) ^ (x2 ^ x3)
		p = p[16:]
	}
	if len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^
			t[6][crc>>8&0xff] ^
			t[5][crc>>16&0xff] ^
			t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^
			t[2][crc>>40&0xff] ^
			t[1][crc>>48&0xff] ^
			t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}

// CRC64 returns the Redis RDB checksum of p. It is exported for tools that
// build or patch RDB files (tests, fixtures).
func CRC64(p []byte) uint64 { return crc64Update(0, p) }
