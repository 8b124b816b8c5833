package rdb

import "encoding/binary"

// CRC64 as Redis computes the RDB trailer (src/crc64.c): the "Jones"
// polynomial 0xad93d23594c935a9, reflected input and output, initial value
// 0, no final xor. Check value: CRC64("123456789") = 0xe9c6d914c4b8d9ca.
//
// The implementation is slicing-by-8: eight 256-entry tables let the loop
// fold eight input bytes per step, which keeps checksumming well above the
// decoder's target throughput.

// crcPolyReflected is the Jones polynomial with its bits reversed, as the
// reflected (LSB-first) algorithm needs it.
const crcPolyReflected = 0x95ac9329ac4bc9b5

type crcTable [8][256]uint64

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
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}

// crc64Update extends crc (0 for a fresh checksum) with p.
func crc64Update(crc uint64, p []byte) uint64 {
	t := crcTab
	for len(p) >= 8 {
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
