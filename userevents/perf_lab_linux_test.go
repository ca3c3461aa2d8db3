package userevents

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
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

	// Same loop shape as the C program (a plain counted loop around the
	// write, n/100 untimed warm-up writes, the clocks read only before and
	// after), alternated with it `rounds` times on one locked thread; wall
	// clock and the writing thread's CPU time; median, min and max.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n, rounds = 50000, 15
	dataPath, _ := f.Path("user_events_data")
	type cost = perfCost
	samples := map[string][]cost{}
	timeit := func(name string, loop func(n int) error) {
		if err := loop(n / 100); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c0, _ := iunix.ClockNS(iunix.ClockThreadCPU)
		w0, _ := iunix.ClockNS(iunix.ClockMonotonic)
		err := loop(n)
		w1, _ := iunix.ClockNS(iunix.ClockMonotonic)
		c1, _ := iunix.ClockNS(iunix.ClockThreadCPU)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		samples[name] = append(samples[name], cost{float64(w1-w0) / n, float64(c1-c0) / n})
	}
	runC := func(name string, args ...string) {
		out, err := exec.Command(cbin, append([]string{dataPath, strconv.Itoa(n)}, args...)...).CombinedOutput()
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
		samples[name] = append(samples[name], cost{cw, cc})
	}
	idx := ev.idx
	var pl [12]byte
	iov := iunix.IovecPair{{Base: unsafe.Pointer(&idx), Len: 4}, {Base: unsafe.Pointer(&pl[0]), Len: 12}}
	for round := 0; round < rounds; round++ {
		runC("c_writev")
		runC("c_writev_2threads", "writev", "2")
		runC("c_pwrite", "pwrite")
		runC("c_pwrite_2threads", "pwrite", "2")
		timeit("go_raw_writev", func(n int) error { return rawLoop(p.raw, &iov, &pl, n) })
		timeit("go_raw_pwrite", func(n int) error { return rawPwriteLoop(p.raw, idx, n) })
		timeit("typed", func(n int) error { return typedLoop(typed, n) })
		timeit("write", func(n int) error { return writeLoop(ev, n) })
	}
	// Paired ratios: each round's loops ran within seconds of each other,
	// so the median over rounds of the per-round ratio to a C loop is the
	// estimate least disturbed by the host's load (the guest's clocks
	// count the time QEMU's thread is descheduled on the host).
	paired := func(k, ref string) float64 {
		r := make([]perfCost, rounds)
		for i := range r {
			a, b := samples[k][i], samples[ref][i]
			r[i] = perfCost{a.wall / b.wall, a.cpu / b.cpu}
		}
		return median(r).cpu
	}
	report := fmt.Sprintf("enabled_disabled_ns_per_check %.3f allocs %d\n", float64(en.T.Nanoseconds())/float64(en.N)/64, en.AllocsPerOp()) +
		fmt.Sprintf("go_write_bench_ns_per_op %.1f allocs %d\n", float64(wr.T.Nanoseconds())/float64(wr.N), wr.AllocsPerOp()) +
		fmt.Sprintf("go_typed_write_bench_ns_per_op %.1f allocs %d\n", float64(ty.T.Nanoseconds())/float64(ty.N), ty.AllocsPerOp()) +
		fmt.Sprintf("meltdown: %s", readSys("/sys/devices/system/cpu/vulnerabilities/meltdown")) +
		fmt.Sprintf("%d writes per loop, %d alternated rounds; ns/op median [min-max]; thread CPU ratios, median over rounds of the round's ratio, to C writev (single-threaded), C writev with a second thread, C pwrite (single-threaded); and ratio of minima to C writev\n", n, rounds) +
		fmt.Sprintf("%-18s %24s %24s %7s %7s %7s %7s\n", "loop", "wall", "thread_cpu", "/C", "/C2thr", "/Cpw", "min/C")
	cmin := minCost(samples["c_writev"])
	for _, k := range []string{"c_writev", "c_writev_2threads", "c_pwrite", "c_pwrite_2threads", "go_raw_writev", "go_raw_pwrite", "typed", "write"} {
		m, lo, hi := median(samples[k]), minCost(samples[k]), maxCost(samples[k])
		report += fmt.Sprintf("%-18s %8.1f [%6.1f-%6.1f] %8.1f [%6.1f-%6.1f] %7.3f %7.3f %7.3f %7.3f\n", k,
			m.wall, lo.wall, hi.wall, m.cpu, lo.cpu, hi.cpu,
			paired(k, "c_writev"), paired(k, "c_writev_2threads"), paired(k, "c_pwrite"), lo.cpu/cmin.cpu)
	}
	t.Log("\n" + report)
	saveOut(t, "perf.txt", []byte(report))
}

type perfCost = struct{ wall, cpu float64 }

func median(s []perfCost) perfCost {
	w := make([]float64, len(s))
	c := make([]float64, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return perfCost{w[len(w)/2], c[len(c)/2]}
}

func minCost(s []perfCost) perfCost {
	m := s[0]
	for _, x := range s {
		m.wall, m.cpu = min(m.wall, x.wall), min(m.cpu, x.cpu)
	}
	return m
}

func maxCost(s []perfCost) perfCost {
	m := s[0]
	for _, x := range s {
		m.wall, m.cpu = max(m.wall, x.wall), max(m.cpu, x.cpu)
	}
	return m
}

func readSys(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown\n"
	}
	return string(b)
}

// rawLoop is the Go floor: the C program's loop, prebuilt iovecs, one raw
// system call per write, through the library's system call stub.
//
//go:noinline
func rawLoop(fd int, iov *iunix.IovecPair, pl *[12]byte, n int) error {
	for i := 0; i < n; i++ {
		pl[0] = byte(i)
		if e := iunix.WritevPair(fd, iov, 2); e != 0 {
			return e
		}
	}
	return nil
}

// rawPwriteLoop is rawLoop with pwrite(2) of one buffer (index, payload).
//
//go:noinline
func rawPwriteLoop(fd int, idx uint32, n int) error {
	var b [16]byte
	binary.LittleEndian.PutUint32(b[:], idx)
	for i := 0; i < n; i++ {
		b[4] = byte(i)
		if e := iunix.Pwrite(fd, unsafe.Pointer(&b[0]), 16); e != 0 {
			return e
		}
	}
	return nil
}

type benchRec struct {
	A uint32 `userevents:"a"`
	B uint64 `userevents:"b"`
}

//go:noinline
func typedLoop(ev *Typed[benchRec], n int) error {
	var v benchRec
	for i := 0; i < n; i++ {
		v.A, v.B = uint32(i), uint64(i)
		if err := ev.Write(&v); err != nil {
			return err
		}
	}
	return nil
}

//go:noinline
func writeLoop(ev *Event, n int) error {
	for i := 0; i < n; i++ {
		if err := ev.Write(uint32(i), uint64(i)); err != nil {
			return err
		}
	}
	return nil
}
