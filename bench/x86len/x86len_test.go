// Package x86len compares iotap's intelpt/x86 length decoder with
// golang.org/x/arch/x86/x86asm on the same code, in the same run: speed
// (instructions per second) and agreement on instruction lengths.
package x86len

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/iotap/iotap/intelpt/x86"
	"golang.org/x/arch/x86/x86asm"
)

func text(tb testing.TB) []byte {
	path := os.Getenv("X86LEN_ELF")
	if path == "" {
		path = "/lib/x86_64-linux-gnu/libc.so.6"
	}
	f, err := elf.Open(path)
	if err != nil {
		tb.Skipf("%s: %v", path, err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil {
		tb.Skipf("%s: no .text", path)
	}
	b, err := s.Data()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestAgreement walks .text with iotap's decoder (which matches objdump on
// every instruction, see intelpt/x86's tests) and counts the instructions on
// which x86asm reports another length or fails.
func TestAgreement(t *testing.T) {
	code := text(t)
	var in x86.Inst
	n, wrong, failed := 0, 0, 0
	for off := 0; off < len(code); {
		if err := x86.Decode(code[off:], x86.Mode64, &in); err != nil {
			off++
			continue
		}
		n++
		inst, err := x86asm.Decode(code[off:], 64)
		switch {
		case err != nil:
			failed++
			if failed <= 5 {
				t.Logf("x86asm fails on % x: %v", code[off:off+int(in.Len)], err)
			}
		case inst.Len != int(in.Len):
			wrong++
			if wrong <= 5 {
				t.Logf("x86asm: % x is %d bytes, iotap %d", code[off:off+int(in.Len)], inst.Len, in.Len)
			}
		}
		off += int(in.Len)
	}
	t.Logf("%d instructions: x86asm got %d lengths wrong and failed on %d", n, wrong, failed)
}

// threadCPU returns the CPU time (user + system) of the calling thread, so
// that a benchmark on a shared machine can report instructions per second
// of CPU actually received, besides per second of wall time.
func threadCPU() float64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// measure runs decode b.N times on one locked OS thread and reports
// instructions per wall second and per CPU second.
func measure(b *testing.B, decode func() int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := threadCPU()
	n := 0
	for range b.N {
		n += decode()
	}
	cpu := threadCPU() - cpu0
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "insn/s")
	if cpu > 0 {
		b.ReportMetric(float64(n)/cpu, "insn/cpu-s")
	}
}

func BenchmarkDecode(b *testing.B) {
	code := text(b)
	var in x86.Inst
	measure(b, func() int {
		n := 0
		for off := 0; off < len(code); {
			if x86.Decode(code[off:], x86.Mode64, &in) != nil {
				off++
				continue
			}
			off += int(in.Len)
			n++
		}
		return n
	})
}

// BenchmarkLenClass walks the same code with x86.LenClass, which returns
// the length and class in registers instead of filling an Inst. The class
// is used (counted per class), as a walker uses it to stop at branches.
func BenchmarkLenClass(b *testing.B) {
	code := text(b)
	var classes [32]int
	measure(b, func() int {
		n := 0
		for off := 0; off < len(code); {
			l, c, err := x86.LenClass(code, off, x86.Mode64)
			if err != nil {
				off++
				continue
			}
			classes[c&31]++
			off += l
			n++
		}
		return n
	})
}

// BenchmarkLenClass64 walks the same code, length and class of each
// instruction, with x86.LenClass64 (inlined into the walk: no call) and
// x86.LenClass for what it leaves out (n == 0) and for the last 15 bytes.
func BenchmarkLenClass64(b *testing.B) {
	code := text(b)
	var classes [32]int
	measure(b, func() int {
		n := 0
		for off := 0; off < len(code); {
			var l int
			var c x86.Class
			if off <= len(code)-16 {
				l, c = x86.LenClass64(binary.LittleEndian.Uint64(code[off:]))
			}
			if l == 0 {
				var err error
				if l, c, err = x86.LenClass(code, off, x86.Mode64); err != nil {
					off++
					continue
				}
			}
			classes[c&31]++
			off += l
			n++
		}
		return n
	})
}

func BenchmarkX86asm(b *testing.B) {
	code := text(b)
	measure(b, func() int {
		n := 0
		for off := 0; off < len(code); {
			inst, err := x86asm.Decode(code[off:], 64)
			if err != nil || inst.Len == 0 {
				off++
				continue
			}
			off += inst.Len
			n++
		}
		return n
	})
}

// floorLen is the whole of floorDecode's work: one table lookup.
var floorLen = func() (t [256]uint8) {
	for i := range t {
		t[i] = 1 + uint8(i)&3
	}
	return
}()

// floorDecode has Decode's signature and does almost nothing: a calibration
// of what calling a decoder once per instruction costs on this machine (the
// call, the error result, storing and reloading the length).
//
//go:noinline
func floorDecode(code []byte, _ x86.Mode, in *x86.Inst) error {
	if len(code) < 16 {
		return x86.ErrTruncated
	}
	in.Len = floorLen[code[0]]
	return nil
}

// floorLenClass has LenClass's signature and does one table lookup: the
// floor of a walk whose decoder returns the length in a register.
//
//go:noinline
func floorLenClass(code []byte, off int, _ x86.Mode) (int, x86.Class, error) {
	if off < 0 || len(code)-off < 16 {
		return 0, 0, x86.ErrTruncated
	}
	b := code[off]
	return int(floorLen[b]), x86.Class(b >> 7), nil
}

func BenchmarkFloorLenClass(b *testing.B) {
	code := text(b)
	var classes [32]int
	measure(b, func() int {
		n := 0
		for off := 0; off < len(code); {
			l, c, err := floorLenClass(code, off, x86.Mode64)
			if err != nil {
				off++
				continue
			}
			classes[c&31]++
			off += l
			n++
		}
		return n
	})
}

func BenchmarkFloor(b *testing.B) {
	code := text(b)
	var in x86.Inst
	measure(b, func() int {
		n := 0
		for off := 0; off < len(code); {
			if floorDecode(code[off:], x86.Mode64, &in) != nil {
				off++
				continue
			}
			off += int(in.Len)
			n++
		}
		return n
	})
}

// TestInterleaved compares LenClass, LenClass64 and the call floor in one
// process at the same moments: ROUNDS rounds (X86LEN_ROUNDS, skipped when
// unset; bench/x86len.sh sets it with ROUNDS=N), each walking the code
// three times with each, and logs for each the median and the 10th and
// 90th percentiles of instructions per CPU second of the thread, and the
// median per-round ratio LenClass64 / LenClass. On a shared machine whose
// speed changes over time the per-round ratios and percentiles say more
// than medians of separate runs.
func TestInterleaved(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("X86LEN_ROUNDS"))
	if rounds <= 0 {
		t.Skip("X86LEN_ROUNDS not set")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	code := text(t)
	walks := []struct {
		name string
		walk func() int
	}{
		{"LenClass", func() int {
			n := 0
			for off := 0; off < len(code); {
				l, _, err := x86.LenClass(code, off, x86.Mode64)
				if err != nil {
					off++
					continue
				}
				off += l
				n++
			}
			return n
		}},
		{"LenClass64", func() int {
			n := 0
			for off := 0; off < len(code); {
				var l int
				if off <= len(code)-16 {
					l, _ = x86.LenClass64(binary.LittleEndian.Uint64(code[off:]))
				}
				if l == 0 {
					var err error
					if l, _, err = x86.LenClass(code, off, x86.Mode64); err != nil {
						off++
						continue
					}
				}
				off += l
				n++
			}
			return n
		}},
		{"FloorLenClass", func() int {
			n := 0
			for off := 0; off < len(code); {
				l, _, err := floorLenClass(code, off, x86.Mode64)
				if err != nil {
					off++
					continue
				}
				off += l
				n++
			}
			return n
		}},
	}
	rate := make([][]float64, len(walks))
	for range rounds {
		for i, w := range walks {
			c0 := threadCPU()
			n := w.walk() + w.walk() + w.walk()
			rate[i] = append(rate[i], float64(n)/(threadCPU()-c0))
		}
	}
	ratio := make([]float64, rounds)
	for k := range ratio {
		ratio[k] = rate[1][k] / rate[0][k]
	}
	for i, w := range walks {
		r := slices.Sorted(slices.Values(rate[i]))
		t.Logf("%-13s insn/cpu-s median %6.1f M  p10 %6.1f M  p90 %6.1f M", w.name,
			r[len(r)/2]/1e6, r[len(r)/10]/1e6, r[len(r)*9/10]/1e6)
	}
	slices.Sort(ratio)
	t.Logf("LenClass64 / LenClass per round: median %.2f (p10 %.2f, p90 %.2f), %d rounds",
		ratio[len(ratio)/2], ratio[len(ratio)/10], ratio[len(ratio)*9/10], rounds)
}
