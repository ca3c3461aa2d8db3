// Package x86 decodes the length and the control-flow class of x86
// instructions, which is what an Intel Processor Trace flow decoder needs to
// walk code: how far to step, and whether the instruction is a conditional
// branch (consumes a TNT bit), a direct jump or call (target from the
// displacement), an indirect one (target from a TIP packet), a return
// (possibly compressed), a far transfer or one of the few instructions PT
// treats specially (MOV CR3, VMPTRLD, VMLAUNCH/VMRESUME, PTWRITE...).
//
// Decode handles 16-, 32- and 64-bit code: legacy prefixes (including the
// 66/67 size overrides and their effect on immediates, displacements and
// moffs; REX, which counts only right before the opcode; the last of F2/F3
// selecting the instruction), the one-byte, 0F, 0F38 and 0F3A maps, 3DNow!
// (0F 0F), VEX (C5, C4), EVEX (62, maps 0F/0F38/0F3A/5/6; in 32- and 16-bit
// mode only when the next byte is not a memory operand, otherwise BOUND),
// XOP (8F, maps 8-10), ModRM/SIB/displacement in 16- and 32/64-bit
// addressing, and the encodings whose size depends on a ModRM field (F6/F7
// /0-/1 take an immediate, MOV to/from control registers ignore
// ModRM.mod). Like Intel hardware (and libipt, and objdump -M intel64), in
// 64-bit mode a 66 prefix does not shorten a near branch's displacement.
//
// The decoder is a few 256-entry tables built at initialisation from the
// Intel SDM opcode maps; it does not allocate and does not use reflection.
// A fast path (at most one legacy prefix and a REX, one-byte and 0F maps:
// 95 % of libc's instructions) computes the length with table lookups and
// arithmetic instead of branches, because walking code is bound by the
// latency of byte -> length -> next byte; every other instruction takes the
// general path, and a test checks that both agree at every offset.
//
// LenClass is the entry point for walking code when only the length and
// the class are needed (a block decoder stepping to the next branch): it
// returns them in registers, takes the offset rather than a subslice, and
// has its own fast paths (per-position tables picked with conditional
// moves; a second path for REX 0F, TEST, the FF group, MOV r64, imm64,
// VEX and EVEX). It gives Decode's length, class and error at every offset (tests
// on libc and random code, the fuzz target, and every instruction of the
// objdump comparisons below). LenClass64 is its common case for 64-bit
// code, small enough to be inlined into a walker: from the first eight
// bytes of an instruction, one table entry for its first two bytes (no
// legacy prefix; a REX or 0F at most before the opcode) and the ModRM's
// length, or 0 for LenClass to decode (12 % of libc's instructions). The
// same tests check it. Speed: docs/performance.md and bench/x86len.sh.
//
// The oracle is GNU objdump (-M intel64): the tests compare every
// instruction of libc, the dynamic loader, qemu-system-x86_64, the lab
// kernel's vmlinux (extracted from the bzImage's gzip payload, as the
// kernel's scripts/extract-vmlinux does) and its 16-bit setup code, SeaBIOS
// (32-bit) and SeaVGABIOS (16-bit, gcc -m16), valgrind's 32-bit tools when
// installed, and random bytes in all three modes: lengths and classes must
// be equal. Where objdump departs from
// Intel hardware the tests name the case: objdump prints fwait (9B) and
// the x87 instruction after it as one instruction, and decodes a PTWRITE
// with 66 and a LOCK MOV CR3, which raise #UD.
//
// Not decoded (ErrInvalid): APX (the REX2 prefix D5 and EVEX map 4), EVEX
// map 7 and VEX maps other than 0F, 0F38 and 0F3A. FRED's ERETS/ERETU
// (F2/F3 0F 01 CA) are classed Other.
//
// Why not golang.org/x/arch/x86/x86asm: it is a full disassembler (operands,
// syntax) and, as measured for this project with v0.32.0 on libc.so.6's
// 335,735 instructions, it got 470 lengths wrong (for example vzeroupper,
// c5 f8 77, as 4 or 5 bytes), failed on rdpkru/wrpkru, and decoded 3.6 M
// instructions/s, slower than libipt's whole flow decoder. bench/x86len.sh
// reproduces this in one run with this package on the same code (470
// wrong, 3 failures; 4.6 M against 61 M instructions per CPU second). A
// flow decoder needs neither operands nor text, but it needs every length
// right.
package x86
