#include "textflag.h"

// Bytes 0x0f, '0', 9 and 'a'-'0'-10, sixteen of each.
DATA hexConst<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA hexConst<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA hexConst<>+16(SB)/8, $0x3030303030303030
DATA hexConst<>+24(SB)/8, $0x3030303030303030
DATA hexConst<>+32(SB)/8, $0x0909090909090909
DATA hexConst<>+40(SB)/8, $0x0909090909090909
DATA hexConst<>+48(SB)/8, $0x2727272727272727
DATA hexConst<>+56(SB)/8, $0x2727272727272727
GLOBL hexConst<>(SB), RODATA|NOPTR, $64

// func hexBlocks(dst, src *byte, n int)
//
// Writes the lower-case hex of n 16-byte blocks of src (16*n bytes) to
// dst (32*n bytes), n > 0. SSE2: the nibbles of each byte are split
// (shift, mask), interleaved high then low (unpack), and turned into
// digits by adding '0', plus 'a'-'0'-10 where the nibble is above 9.
TEXT ·hexBlocks(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVOU hexConst<>+0(SB), X8
	MOVOU hexConst<>+16(SB), X9
	MOVOU hexConst<>+32(SB), X10
	MOVOU hexConst<>+48(SB), X11
loop:
	MOVOU (SI), X0
	MOVOU X0, X1
	PSRLW $4, X1
	PAND X8, X0
	PAND X8, X1
	MOVOU X1, X2
	PUNPCKLBW X0, X2
	PUNPCKHBW X0, X1
	MOVOU X2, X3
	PCMPGTB X10, X3
	PAND X11, X3
	PADDB X9, X2
	PADDB X3, X2
	MOVOU X1, X4
	PCMPGTB X10, X4
	PAND X11, X4
	PADDB X9, X1
	PADDB X4, X1
	MOVOU X2, (DI)
	MOVOU X1, 16(DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop
	RET
