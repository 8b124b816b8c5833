//go:build amd64 && !purego

package rdb

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// The carry-less multiplication path (PCLMULQDQ, on every x86-64 CPU since
// 2010) folds long inputs at memory speed instead of a table lookup per
// byte.
//
// The algebra. A 16-byte block read little-endian is a polynomial of
// degree < 128 in the reflected order: bit j stands for x^(127-j), so the
// low 8 bytes L are its high-degree half and X = L·x^64 + H. Moving X
// past d more bytes multiplies it by x^(8d), and modulo P that is
//
//	X·x^(8d) ≡ L·(x^(8d+64) mod P) + H·(x^(8d) mod P)
//
// two 64×64-bit carry-less products, each under 128 bits: the result is
// again a 16-byte block that can be added (XOR) to the block d bytes
// later. One subtlety: multiplying two reflected 64-bit values gives a
// 127-bit product whose bit k stands for x^(126-k), one degree short of
// the block order, so the keys carry one power of x less:
// x^(8d+63) and x^(8d-1).
//
// The CRC of a message is M·x^64 mod P; the starting CRC is added to the
// first 8 bytes. When everything is folded into one block X, the CRC is
// X·x^64 mod P: the CRC from 0 of X's 16 bytes, one step of the tables.

// crcFoldKeys are the reflected keys for d = 64 (the four-accumulator
// round) and d = 16 (joining the accumulators): low half first.
type crcFoldKeys [4]uint64

var haveCLMUL = cpu.X86.HasPCLMULQDQ

var crcKeys = crcFoldKeys{
	crcXPow(8*64 + 63), crcXPow(8*64 - 1),
	crcXPow(8*16 + 63), crcXPow(8*16 - 1),
}

// crcFold is in crc64_amd64.s. len(p) is a multiple of 64, at least 64.
//
//go:noescape
func crcFold(crc uint64, p []byte, k *crcFoldKeys) (lo, hi uint64)

// crcFoldMin is the shortest input worth the vector path.
const crcFoldMin = 256

// crcBlocks folds the longest multiple-of-64 prefix of p into crc with
// PCLMULQDQ when the CPU has it and p is long enough, and returns the
// rest of p for the tables.
func crcBlocks(crc uint64, p []byte) (uint64, []byte) {
	if !haveCLMUL || len(p) < crcFoldMin {
		return crc, p
	}
	n := len(p) &^ 63
	lo, hi := crcFold(crc, p[:n], &crcKeys)
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return crcTables(0, b[:]), p[n:]
}
