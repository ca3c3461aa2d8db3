package userevents

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	iunix "github.com/iotap/iotap/internal/unix"
)

// TestLabPerf measures, in one guest run, Enabled on a disabled event,
// Event.Write and Typed.Write on an enabled event, and the same writev(2)
// from C (bench/userevents/writev.c), and prints the ratio. It asserts
// allocations only, never timings.
func TestLabPerf(t *testing.T) {
	f, p := labProducer(t)
	cbin := "/bin/ue_writev"
	if _, err := os.Stat(cbin); err != nil {
		t.Skip("no " + cbin + " in the guest")
	}
	off, err := p.Register("iotap_bench_off u32 a")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := p.Register("iotap_bench u32 a; u64 b")
	if err != nil {
		t.Fatal(err)
	}
	type benchRec struct {
		A uint32 `userevents:"a"`
		B uint64 `userevents:"b"`
	}
	l, err := LayoutOf[benchRec]("iotap_bench")
	if err != nil {
		t.Fatal(err)
	}
	typed := &Typed[benchRec]{Event: ev, layout: l}
	r, err := NewRecorder(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Add(System, "iotap_bench"); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil { // enabled; nobody reads: the ring overwrites
		t.Fatal(err)
	}
	if !waitEnabled(ev, true) {
		t.Fatal("not enabled")
	}

	en := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if off.Enabled() {
				n++
			}
		}
		if n != 0 {
			b.Fatal("enabled")
		}
	})
	wr := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := ev.Write(uint32(i), uint64(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	ty := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		var v benchRec
		for b.Loop() {
			v.A++
			v.B++
			if err := typed.Write(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	if en.AllocsPerOp() != 0 || wr.AllocsPerOp() != 0 || ty.AllocsPerOp() != 0 {
		t.Errorf("allocations: Enabled %d, Write %d, Typed.Write %d", en.AllocsPerOp(), wr.AllocsPerOp(), ty.AllocsPerOp())
	}

	// Same loop shape as the C program, alternated with it, on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 200000
	dataPath, _ := f.Path("user_events_data")
	bestGo, bestTy, bestRaw, bestC := 0.0, 0.0, 0.0, 0.0
	for round := 0; round < 5; round++ {
		t0 := time.Now()
		for i := 0; i < n; i++ {
			if err := ev.Write(uint32(i), uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
		g := float64(time.Since(t0).Nanoseconds()) / n
		var v benchRec
		t0 = time.Now()
		for i := 0; i < n; i++ {
			v.A, v.B = uint32(i), uint64(i)
			if err := typed.Write(&v); err != nil {
				t.Fatal(err)
			}
		}
		ty := float64(time.Since(t0).Nanoseconds()) / n
		if bestTy == 0 || ty < bestTy {
			bestTy = ty
		}
		// The floor: the same writev issued from Go with prebuilt iovecs.
		idx := ev.idx
		var pl [12]byte
		iov := []iunix.Iovec{{Base: (*byte)(unsafe.Pointer(&idx))}, {Base: &pl[0]}}
		iov[0].SetLen(4)
		iov[1].SetLen(12)
		t0 = time.Now()
		for i := 0; i < n; i++ {
			pl[0] = byte(i)
			if _, e := iunix.Writev(p.raw, iov); e != 0 {
				t.Fatal(e)
			}
		}
		raw := float64(time.Since(t0).Nanoseconds()) / n
		if bestRaw == 0 || raw < bestRaw {
			bestRaw = raw
		}
		out, err := exec.Command(cbin, dataPath, strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cbin, err, out)
		}
		c, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "c_writev_ns_per_op")), 64)
		if err != nil {
			t.Fatalf("C output %q", out)
		}
		if bestGo == 0 || g < bestGo {
			bestGo = g
		}
		if bestC == 0 || c < bestC {
			bestC = c
		}
	}
	report := fmt.Sprintf(`enabled_disabled_ns_per_op %.3f allocs %d
go_write_bench_ns_per_op %.1f allocs %d
go_typed_write_bench_ns_per_op %.1f allocs %d
go_write_loop_ns_per_op %.1f
go_typed_write_loop_ns_per_op %.1f
go_raw_writev_loop_ns_per_op %.1f
c_writev_loop_ns_per_op %.1f
go_write_over_c_ratio %.3f
go_typed_write_over_c_ratio %.3f
`, float64(en.T.Nanoseconds())/float64(en.N), en.AllocsPerOp(),
		float64(wr.T.Nanoseconds())/float64(wr.N), wr.AllocsPerOp(),
		float64(ty.T.Nanoseconds())/float64(ty.N), ty.AllocsPerOp(),
		bestGo, bestTy, bestRaw, bestC, bestGo/bestC, bestTy/bestC)
	t.Log("\n" + report)
	saveOut(t, "perf.txt", []byte(report))
}
