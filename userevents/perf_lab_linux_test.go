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
			for j := 0; j < 64; j++ { // 64 checks per iteration: see BenchmarkEnabledDisabled
				if off.Enabled() {
					n++
				}
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

	// Same loop shape as the C program, alternated with it five times on
	// one locked thread; wall clock and the thread's CPU time, best of each.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 200000
	dataPath, _ := f.Path("user_events_data")
	type cost struct{ wall, cpu float64 }
	best := map[string]cost{}
	keep := func(name string, c cost) {
		b, ok := best[name]
		if !ok || c.wall < b.wall {
			b.wall = c.wall
		}
		if !ok || c.cpu < b.cpu {
			b.cpu = c.cpu
		}
		best[name] = b
	}
	timeit := func(name string, fn func(i int)) {
		c0, _ := iunix.ClockNS(iunix.ClockThreadCPU)
		t0 := time.Now()
		for i := 0; i < n; i++ {
			fn(i)
		}
		wall := float64(time.Since(t0).Nanoseconds()) / n
		c1, _ := iunix.ClockNS(iunix.ClockThreadCPU)
		keep(name, cost{wall, float64(c1-c0) / n})
	}
	idx := ev.idx
	var pl [12]byte
	iov := []iunix.Iovec{{Base: (*byte)(unsafe.Pointer(&idx))}, {Base: &pl[0]}}
	iov[0].SetLen(4)
	iov[1].SetLen(12)
	var v benchRec
	for round := 0; round < 5; round++ {
		timeit("write", func(i int) {
			if err := ev.Write(uint32(i), uint64(i)); err != nil {
				t.Fatal(err)
			}
		})
		timeit("typed", func(i int) {
			v.A, v.B = uint32(i), uint64(i)
			if err := typed.Write(&v); err != nil {
				t.Fatal(err)
			}
		})
		// The floor: the same writev from Go with prebuilt iovecs.
		timeit("raw", func(i int) {
			pl[0] = byte(i)
			if _, e := iunix.Writev(p.raw, iov); e != 0 {
				t.Fatal(e)
			}
		})
		out, err := exec.Command(cbin, dataPath, strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cbin, err, out)
		}
		w := strings.Fields(strings.TrimSpace(string(out)))
		if len(w) != 3 || w[0] != "c_writev_ns_per_op" {
			t.Fatalf("C output %q", out)
		}
		cw, err1 := strconv.ParseFloat(w[1], 64)
		cc, err2 := strconv.ParseFloat(w[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("C output %q", out)
		}
		keep("c", cost{cw, cc})
	}
	c := best["c"]
	report := fmt.Sprintf("enabled_disabled_ns_per_check %.3f allocs %d\n", float64(en.T.Nanoseconds())/float64(en.N)/64, en.AllocsPerOp()) +
		fmt.Sprintf("go_write_bench_ns_per_op %.1f allocs %d\n", float64(wr.T.Nanoseconds())/float64(wr.N), wr.AllocsPerOp()) +
		fmt.Sprintf("go_typed_write_bench_ns_per_op %.1f allocs %d\n", float64(ty.T.Nanoseconds())/float64(ty.N), ty.AllocsPerOp()) +
		fmt.Sprintf("%-28s %10s %10s %10s %10s\n", "loop (ns/op, best of 5)", "wall", "thread_cpu", "wall/C", "cpu/C")
	for _, k := range []string{"c", "raw", "typed", "write"} {
		b := best[k]
		report += fmt.Sprintf("%-28s %10.1f %10.1f %10.3f %10.3f\n", k, b.wall, b.cpu, b.wall/c.wall, b.cpu/c.cpu)
	}
	t.Log("\n" + report)
	saveOut(t, "perf.txt", []byte(report))
}
