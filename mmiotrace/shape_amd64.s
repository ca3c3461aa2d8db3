#include "textflag.h"

// Bytes '0'-1, '9'+1, 'a'-1, 'f'+1, sixteen of each.
DATA shapeBounds<>+0(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA shapeBounds<>+8(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA shapeBounds<>+16(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA shapeBounds<>+24(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA shapeBounds<>+32(SB)/8, $0x6060606060606060
DATA shapeBounds<>+40(SB)/8, $0x6060606060606060
DATA shapeBounds<>+48(SB)/8, $0x6767676767676767
DATA shapeBounds<>+56(SB)/8, $0x6767676767676767
GLOBL shapeBounds<>(SB), RODATA|NOPTR, $64

// func matchVec(a *rwWindow, s *rwShape, nv int) bool
//
// For each of the first nv 16-byte blocks of a: every byte b must
// satisfy b&mask == fix, and be a digit, a letter a-f where letter is
// 0xff, or anything where free is 0xff (rwShape: fix, mask, free and
// letter are its first fields, 96 bytes each). SSE2; signed compares, so
// bytes >= 0x80 are neither digits nor letters.
TEXT ·matchVec(SB), NOSPLIT, $0-25
	MOVQ a+0(FP), SI
	MOVQ s+8(FP), DI
	MOVQ nv+16(FP), CX
	TESTQ CX, CX
	JLE fail
	MOVOU shapeBounds<>+0(SB), X8
	MOVOU shapeBounds<>+16(SB), X9
	MOVOU shapeBounds<>+32(SB), X10
	MOVOU shapeBounds<>+48(SB), X11
loop:
	MOVOU (SI), X0
	MOVOU 96(DI), X1
	PAND X0, X1
	MOVOU (DI), X6
	PCMPEQB X6, X1
	MOVOU X0, X2
	PCMPGTB X8, X2
	MOVOU X9, X3
	PCMPGTB X0, X3
	PAND X3, X2
	MOVOU X0, X4
	PCMPGTB X10, X4
	MOVOU X11, X5
	PCMPGTB X0, X5
	PAND X5, X4
	MOVOU 288(DI), X5
	PAND X5, X4
	POR X4, X2
	MOVOU 192(DI), X5
	POR X5, X2
	PAND X1, X2
	PMOVMSKB X2, AX
	CMPL AX, $0xffff
	JNE fail
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNZ loop
	MOVB $1, ret+24(FP)
	RET
fail:
	MOVB $0, ret+24(FP)
	RET
