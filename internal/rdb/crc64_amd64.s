//go:build !purego

#include "textflag.h"

// func crcFold(crc uint64, p []byte, k *crcFoldKeys) (lo, hi uint64)
//
// Folds p (a multiple of 64 bytes, at least 64) into 16 bytes whose CRC64
// from 0 is the CRC64 of p from crc; see crc64_clmul.go for the algebra.
// Four 16-byte accumulators X0..X3 each take every fourth block: one
// round multiplies each by x^(8·64) mod P (two carry-less products, one
// per half) and adds the next block. The four are then folded into X3 by
// 16 bytes at a time, in order.
TEXT ·crcFold(SB), NOSPLIT, $0-56
	MOVQ crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DX

	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVQ  AX, X4
	PXOR  X4, X0
	ADDQ  $64, SI
	SUBQ  $64, CX

	// X8: the keys for 64 bytes, low half for the low (earlier) half of
	// an accumulator, high half for the high half.
	MOVOU 0(DX), X8

loop:
	CMPQ CX, $64
	JB   tail

	MOVO      X0, X4
	MOVO      X1, X5
	MOVO      X2, X6
	MOVO      X3, X7
	PCLMULQDQ $0x00, X8, X0
	PCLMULQDQ $0x00, X8, X1
	PCLMULQDQ $0x00, X8, X2
	PCLMULQDQ $0x00, X8, X3
	PCLMULQDQ $0x11, X8, X4
	PCLMULQDQ $0x11, X8, X5
	PCLMULQDQ $0x11, X8, X6
	PCLMULQDQ $0x11, X8, X7
	MOVOU     0(SI), X9
	MOVOU     16(SI), X10
	MOVOU     32(SI), X11
	MOVOU     48(SI), X12
	PXOR      X4, X0
	PXOR      X5, X1
	PXOR      X6, X2
	PXOR      X7, X3
	PXOR      X9, X0
	PXOR      X10, X1
	PXOR      X11, X2
	PXOR      X12, X3

	ADDQ $64, SI
	SUBQ $64, CX
	JMP  loop

tail:
	// X8: the keys for 16 bytes. X1 += X0·x^128, X2 += X1·x^128, ...
	MOVOU     16(DX), X8
	MOVO      X0, X4
	PCLMULQDQ $0x00, X8, X0
	PCLMULQDQ $0x11, X8, X4
	PXOR      X4, X1
	PXOR      X0, X1
	MOVO      X1, X4
	PCLMULQDQ $0x00, X8, X1
	PCLMULQDQ $0x11, X8, X4
	PXOR      X4, X2
	PXOR      X1, X2
	MOVO      X2, X4
	PCLMULQDQ $0x00, X8, X2
	PCLMULQDQ $0x11, X8, X4
	PXOR      X4, X3
	PXOR      X2, X3

	MOVQ   X3, lo+40(FP)
	PSHUFD $0xee, X3, X3
	MOVQ   X3, hi+48(FP)
	RET
