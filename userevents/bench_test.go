//go:build linux

package userevents

import (
	"os"
	"testing"
	"unsafe"

	iunix "github.com/iotap/iotap/internal/unix"
)

// benchEvent is an Event whose enable word is in anonymous mmap memory, as
// Register makes it, writing to fd (no kernel user_events needed).
func benchEvent(b testing.TB, cmd string, fd int) *Event {
	s := mustSchema(b, cmd)
	page, err := iunix.MmapAnon(4096)
	if err != nil {
		b.Fatal(err)
	}
	p := &Producer{raw: fd, evs: map[*Event]struct{}{}}
	return newEvent(p, s, 0, 0, (*uint32)(unsafe.Pointer(&page[0])))
}

// BenchmarkEnabledDisabled is Enabled on a disabled event: one atomic
// load. Each iteration checks 64 times so that the loop's own cost
// (b.Loop) does not hide it; ns/Enabled is the cost of one check.
func BenchmarkEnabledDisabled(b *testing.B) {
	e := benchEvent(b, "ev u32 a", -1)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for j := 0; j < 64; j++ {
			if e.Enabled() {
				n++
			}
		}
	}
	if n != 0 {
		b.Fatal("enabled")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/Enabled")
}

// BenchmarkBaselineLoad is the same loop with a plain (non-atomic) load:
// on amd64 an atomic load is a plain MOV, so both should cost the same.
func BenchmarkBaselineLoad(b *testing.B) {
	e := benchEvent(b, "ev u32 a", -1)
	n := 0
	p := e.slot
	for b.Loop() {
		for j := 0; j < 64; j++ {
			if *p != 0 {
				n++
			}
		}
	}
	if n != 0 {
		b.Fatal("enabled")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/load")
}

// BenchmarkWriteDevNull is the user-space cost of Write (encoding, the
// iovecs, writev) with /dev/null standing in for user_events_data.
func BenchmarkWriteDevNull(b *testing.B) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	e := benchEvent(b, "iotap_bench u32 a; u64 b", int(f.Fd()))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := e.Write(uint32(i), uint64(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTypedWriteDevNull is Typed.Write to /dev/null.
func BenchmarkTypedWriteDevNull(b *testing.B) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	type rec struct {
		A uint32 `userevents:"a"`
		B uint64 `userevents:"b"`
	}
	l, err := LayoutOf[rec]("iotap_bench")
	if err != nil {
		b.Fatal(err)
	}
	e := benchEvent(b, "iotap_bench u32 a; u64 b", int(f.Fd()))
	ty := &Typed[rec]{Event: e, layout: l}
	b.ReportAllocs()
	var v rec
	for b.Loop() {
		v.A++
		if err := ty.Write(&v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWriteAllocs(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := &testing.B{}
	e := benchEvent(b, "ev u32 a; u64 b; __rel_loc char[] s; char[8] c", int(f.Fd()))
	i := 1000
	s := "a string"
	if n := testing.AllocsPerRun(1000, func() {
		i++
		if err := e.Write(uint32(i), uint64(i), s, "tag"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Write: %v allocations", n)
	}
}

func TestWriteAllocsSmall(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := &testing.B{}
	e := benchEvent(b, "ev u32 a; u64 b; char[8] c", int(f.Fd()))
	if !e.small {
		t.Fatal("not on the stack path")
	}
	type rec struct {
		A uint32  `userevents:"a"`
		B uint64  `userevents:"b"`
		C [8]byte `userevents:"c"`
	}
	l, err := LayoutOf[rec]("ev")
	if err != nil {
		t.Fatal(err)
	}
	ty := &Typed[rec]{Event: e, layout: l}
	i := 1000
	if n := testing.AllocsPerRun(1000, func() {
		i++
		if err := e.Write(uint32(i), uint64(i), "tag"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Write: %v allocations", n)
	}
	v := rec{A: 1}
	if n := testing.AllocsPerRun(1000, func() {
		v.B++
		if err := ty.Write(&v); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Typed.Write: %v allocations", n)
	}
}
