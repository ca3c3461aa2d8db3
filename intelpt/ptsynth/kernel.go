package ptsynth

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"sort"

	"github.com/iotap/iotap/intelpt/x86"
)

// ExtractVmlinux returns the vmlinux ELF file inside a bzImage whose
// payload is gzip-compressed (as the kernel's scripts/extract-vmlinux
// finds it: the first gzip stream that decompresses to an ELF file).
func ExtractVmlinux(bzImage []byte) ([]byte, error) {
	if len(bzImage) < 0x300 || string(bzImage[0x202:0x206]) != "HdrS" {
		return nil, errors.New("ptsynth: not a bzImage (no HdrS boot header)")
	}
	magic := []byte{0x1f, 0x8b, 0x08}
	for off := 0; ; off++ {
		k := bytes.Index(bzImage[off:], magic)
		if k < 0 {
			return nil, errors.New("ptsynth: no gzip-compressed ELF payload in the bzImage")
		}
		off += k
		zr, err := gzip.NewReader(bytes.NewReader(bzImage[off:]))
		if err != nil {
			continue
		}
		zr.Multistream(false)
		var head [4]byte
		if _, err := io.ReadFull(zr, head[:]); err != nil || string(head[:]) != "\x7fELF" {
			continue
		}
		rest, err := io.ReadAll(zr)
		if err != nil && err != io.ErrUnexpectedEOF {
			return nil, err
		}
		return append(head[:], rest...), nil
	}
}

// KernelPath is the flow of a kernel function chosen without running it
// (kernel code cannot be single-stepped here): from the entry, forward
// conditional branches are taken and backward ones not, direct calls are
// followed and return where they were called from; the path ends at the
// entry function's return or at an indirect branch (where tracing is
// disabled: TIP.PGD). It is the true sequence of a run with those branch
// outcomes, for which Encode writes the trace a CPU would.
//
// code is the kernel text mapped at base; it returns nil when the path
// meets an instruction that is not synthesized, a backward jump, code
// outside [base, base+len(code)), or more than maxSteps instructions.
func KernelPath(code []byte, base, entry uint64, maxSteps int) *Run {
	return KernelPathRegions(map[uint64][]byte{base: code}, entry, maxSteps)
}

// KernelPathRegions is KernelPath through code in several regions (by
// run-time address), e.g. a module's text and the kernel's: the path may
// call from one into another; it ends (nil) outside all of them.
func KernelPathRegions(regions map[uint64][]byte, entry uint64, maxSteps int) *Run {
	run := &Run{Code: map[uint64][]byte{}}
	bases := make([]uint64, 0, len(regions))
	for base, code := range regions {
		run.Maps = append(run.Maps, Map{Start: base, End: base + uint64(len(code)), Perm: "r-xp", Path: "[kernel.kallsyms]"})
		run.Code[base] = code
		bases = append(bases, base)
	}
	sort.Slice(run.Maps, func(i, j int) bool { return run.Maps[i].Start < run.Maps[j].Start })
	at := func(ip uint64) []byte {
		for _, base := range bases {
			if code := regions[base]; ip >= base && ip-base < uint64(len(code)) {
				return code[ip-base:]
			}
		}
		return nil
	}
	var stack []uint64
	ip := entry
	for len(run.Steps) < maxSteps {
		b := at(ip)
		if b == nil {
			return nil
		}
		var in x86.Inst
		if err := x86.Decode(b, x86.Mode64, &in); err != nil {
			return nil
		}
		_, k, err := X86(b)
		if err != nil || k == Unsupported || k == Syscall {
			return nil
		}
		run.Steps = append(run.Steps, Step{IP: ip})
		fall := ip + uint64(in.Len)
		switch k {
		case Other:
			ip = fall
		case CondJump:
			if t := in.Target(ip); t > ip {
				ip = t
			} else {
				ip = fall
			}
		case JumpDirect:
			t := in.Target(ip)
			if t <= ip {
				return nil
			}
			ip = t
		case CallDirect:
			stack = append(stack, fall)
			ip = in.Target(ip)
		case Return:
			if len(stack) == 0 {
				return run
			}
			ip = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case JumpIndirect, CallIndirect:
			return run
		}
	}
	return nil
}
