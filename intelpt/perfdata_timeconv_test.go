package intelpt

import (
	"encoding/binary"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// timeConv appends a PERF_RECORD_TIME_CONV: shift, mult, zero and, when
// long, cycles, mask and the two capability bytes.
func (w *perfWriter) timeConv(c PerfTimeConv, long bool) {
	le := binary.LittleEndian
	body := make([]byte, 24)
	le.PutUint64(body, c.Shift)
	le.PutUint64(body[8:], c.Mult)
	le.PutUint64(body[16:], c.Zero)
	if long {
		ext := make([]byte, 24)
		le.PutUint64(ext, c.Cycles)
		le.PutUint64(ext[8:], c.Mask)
		if c.UserTimeZero {
			ext[16] = 1
		}
		if c.UserTimeShort {
			ext[17] = 1
		}
		body = append(body, ext...)
	}
	w.record(perfRecordTimeConv, body, nil)
}

// bigToNS is the conversion computed exactly with big integers:
// zero + floor(tsc * mult / 2^shift).
func bigToNS(c PerfTimeConv, tsc uint64) uint64 {
	if c.UserTimeShort {
		tsc = c.Cycles + ((tsc - c.Cycles) & c.Mask)
	}
	v := new(big.Int).Mul(new(big.Int).SetUint64(tsc), new(big.Int).SetUint64(c.Mult))
	v.Rsh(v, uint(c.Shift))
	v.Add(v, new(big.Int).SetUint64(c.Zero))
	return v.Uint64()
}

func TestPerfDataTimeConv(t *testing.T) {
	// A 2.1 GHz TSC as the kernel describes it: ns = tsc * mult >> 31.
	mult := uint64(1<<31) * 10 / 21
	for _, c := range []struct {
		name string
		conv PerfTimeConv
		long bool
	}{
		{"perf 5.11+", PerfTimeConv{Shift: 31, Mult: mult, Zero: 0xfffffff12345678, Cycles: 0x1234, Mask: 1<<56 - 1, UserTimeZero: true}, true},
		{"short counter", PerfTimeConv{Shift: 31, Mult: mult, Zero: 5e9, Cycles: 0x7_0000_0000, Mask: 1<<32 - 1, UserTimeZero: true, UserTimeShort: true}, true},
		{"old perf", PerfTimeConv{Shift: 10, Mult: 1000, Zero: 42}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w perfWriter
			var e Encoder
			e.Encode(Packet{Kind: KindPSB})
			w.auxtraceInfo([]uint64{8, 0, 0, 0, 0, 1 << 10})
			w.timeConv(c.conv, c.long)
			w.auxtrace(0, -1, 0, e.Bytes())
			tr, err := PerfDataPT(w.file(8, 0))
			if err != nil {
				t.Fatal(err)
			}
			if tr.TimeConv == nil {
				t.Fatal("TIME_CONV not found")
			}
			if *tr.TimeConv != c.conv {
				t.Errorf("TimeConv = %+v, want %+v", *tr.TimeConv, c.conv)
			}
			for _, tsc := range []uint64{0, 1, 2_100_000_000, 0x7_1234_5678, 1<<40 + 12345, 1<<63 - 1} {
				if got, want := tr.TimeConv.ToNS(tsc), bigToNS(c.conv, tsc); got != want {
					t.Errorf("ToNS(%#x) = %d, want %d", tsc, got, want)
				}
			}
		})
	}
	// One second of a 2.1 GHz TSC is one second of perf time.
	c := PerfTimeConv{Shift: 31, Mult: mult, Zero: 1000}
	if d := c.ToNS(4_200_000_000) - c.ToNS(2_100_000_000); d < 999_999_990 || d > 1_000_000_010 {
		t.Errorf("2.1e9 TSC ticks = %d ns, want about 1e9", d)
	}
}

func TestPerfDataTimeConvErrors(t *testing.T) {
	var w perfWriter
	w.record(perfRecordTimeConv, make([]byte, 16), nil) // shift and mult only
	_, err := PerfDataPT(w.file(8, 0))
	if !errors.Is(err, ErrPerfData) || !strings.Contains(err.Error(), "short TIME_CONV") || !strings.Contains(err.Error(), "offset 0x") {
		t.Errorf("short TIME_CONV: %v", err)
	}
	w = perfWriter{}
	w.timeConv(PerfTimeConv{Shift: 64, Mult: 1}, false)
	if _, err := PerfDataPT(w.file(8, 0)); !errors.Is(err, ErrPerfData) || !strings.Contains(err.Error(), "time_shift 64") {
		t.Errorf("time_shift 64: %v", err)
	}
	w = perfWriter{}
	if tr, err := PerfDataPT(w.file(8, 0)); err != nil || tr.TimeConv != nil {
		t.Errorf("no TIME_CONV: %+v, %v", tr, err)
	}
}
