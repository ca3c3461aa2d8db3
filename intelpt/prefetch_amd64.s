#include "textflag.h"

// func prefetch2(a, b *blockEntry)
//
// PREFETCHT0 both entries: the block decoder asks for the cache entries of
// both successors of a conditional branch before it reads the trace bit
// that picks one, so that the lookup does not wait for memory.
TEXT ·prefetch2(SB), NOSPLIT, $0-16
	MOVQ a+0(FP), AX
	MOVQ b+8(FP), BX
	PREFETCHT0 (AX)
	PREFETCHT0 (BX)
	RET
