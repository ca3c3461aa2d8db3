package ptsynth

import "fmt"

// Slice is a part of a run that ran on the CPU: the steps [From, To) of
// Runs[Run].
type Slice struct{ Run, From, To int }

// Switched is a per-CPU trace of several runs taking turns on one CPU.
type Switched struct {
	Runs   []*Run
	Slices []Slice
	// Enc is the trace of each slice (its TSC, kinds and lengths); PT is
	// their concatenation, the CPU's trace.
	Enc  []*Encoded
	PT   []byte
	Perf []byte
}

// PerCPU writes the per-CPU trace of runs taking turns on CPU cpu, as
// `perf record -e intel_pt//u -C cpu --switch-events` (system-wide, user
// mode only) would record it: each run is cut after each of its system
// calls, and the pieces run in turn (the first piece of each run, then
// the second, ...), the context switches happening in the kernel while
// tracing is off. Each piece's trace starts with a PSB+ (TSC) and
// TIP.PGE and ends with TIP.PGD at its system call; the sideband has the
// COMM and MMAP2 records of every run, ITRACE_START of the first, a
// SWITCH_CPU_WIDE out and in record at each switch, AUX and EXIT records,
// and the build-id table. gap is the number of TSC ticks between two
// pieces (0: 1000).
func PerCPU(runs []*Run, classify Classifier, o Options, cpu int32, gap uint64) (*Switched, error) {
	if gap == 0 {
		gap = 1000
	}
	if o.TSC0 == 0 {
		o.TSC0 = 1_000_000_000
	}
	if o.TicksPerInsn == 0 {
		o.TicksPerInsn = 1
	}
	sw := &Switched{Runs: runs}
	// pieces of each run, cut after its system calls
	pieces := make([][]Slice, len(runs))
	for r, run := range runs {
		from := 0
		for i, s := range run.Steps {
			code := run.Bytes(s.IP)
			if code == nil {
				return nil, fmt.Errorf("ptsynth: run %d step %d: no code at %#x", r, i, s.IP)
			}
			_, k, err := classify(code)
			if err != nil {
				return nil, fmt.Errorf("ptsynth: run %d step %d: %w", r, i, err)
			}
			if k == Syscall || i+1 == len(run.Steps) {
				pieces[r] = append(pieces[r], Slice{r, from, i + 1})
				from = i + 1
			}
		}
	}
	for k := 0; ; k++ {
		more := false
		for r := range runs {
			if k < len(pieces[r]) {
				sw.Slices = append(sw.Slices, pieces[r][k])
				more = true
			}
		}
		if !more {
			break
		}
	}
	tsc := o.TSC0
	w := &perfWriter{cpu: cpu}
	var ids []buildID
	seen := map[string]bool{}
	t0 := tsc
	for _, run := range runs {
		w.pid = int32(run.PID)
		for _, id := range w.startRecords(run, t0-10) {
			if !seen[id.id+id.path] {
				seen[id.id+id.path] = true
				ids = append(ids, id)
			}
		}
	}
	first := runs[sw.Slices[0].Run]
	w.pid = int32(first.PID)
	w.rec(12, 0, t0-1, w.pidtid(nil)) // ITRACE_START
	for i, sl := range sw.Slices {
		run := runs[sl.Run]
		if i > 0 {
			prev := runs[sw.Slices[i-1].Run]
			if prev != run {
				ts := tsc - gap/2
				// switch out of prev (next: run), then into run (prev: prev)
				w.pid = int32(prev.PID)
				w.rec(15, 1<<13, ts, le.AppendUint32(le.AppendUint32(nil, uint32(run.PID)), uint32(run.PID)))
				w.pid = int32(run.PID)
				w.rec(15, 0, ts+1, le.AppendUint32(le.AppendUint32(nil, uint32(prev.PID)), uint32(prev.PID)))
			}
		}
		piece := &Run{PID: run.PID, Comm: run.Comm, Maps: run.Maps, Code: run.Code, Steps: run.Steps[sl.From:sl.To]}
		po := o
		po.TSC0 = tsc
		enc, err := Encode(piece, classify, po)
		if err != nil {
			return nil, err
		}
		sw.Enc = append(sw.Enc, enc)
		sw.PT = append(sw.PT, enc.PT...)
		tsc = enc.TSC[len(enc.TSC)-1] + gap
	}
	tEnd := tsc
	w.pid = int32(runs[sw.Slices[len(sw.Slices)-1].Run].PID)
	// AUXTRACE: size, offset, reference, idx, tid (-1: per-CPU), cpu, reserved; data.
	a := le.AppendUint64(nil, uint64(len(sw.PT)))
	a = le.AppendUint64(a, 0)
	a = le.AppendUint64(a, 0)
	a = le.AppendUint32(a, 0)
	a = le.AppendUint32(a, ^uint32(0))
	a = le.AppendUint32(a, uint32(cpu))
	a = le.AppendUint32(a, 0)
	w.user(71, a)
	w.b = append(w.b, sw.PT...)
	w.rec(11, 0, tEnd, le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0), uint64(len(sw.PT))), 0))
	for _, run := range runs {
		w.pid = int32(run.PID)
		ex := le.AppendUint32(nil, uint32(run.PID))
		ex = le.AppendUint32(ex, 1)
		ex = le.AppendUint32(ex, uint32(run.PID))
		ex = le.AppendUint32(ex, 1)
		ex = le.AppendUint64(ex, tEnd)
		w.rec(4, 0, tEnd, ex)
	}
	head := &perfWriter{}
	head.auxtraceInfo(8)
	sw.Perf = finish(append(head.b, w.b...), ids, 8)
	return sw, nil
}
