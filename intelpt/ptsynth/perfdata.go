package ptsynth

import (
	"bytes"
	"debug/elf"
	"encoding/binary"

	"github.com/iotap/iotap/intelpt/symtab"
)

// PerfOptions describe the perf.data to write.
type PerfOptions struct {
	PMUType uint32 // intel_pt PMU type (0: 8)
	CPU     int32  // the CPU the thread ran on
	// PerThread writes the trace as perf record --per-thread does (AUXTRACE
	// of cpu -1); otherwise as a per-CPU trace of CPU.
	PerThread bool
	// Chunk, when set, writes the trace in AUXTRACE records of at most
	// Chunk bytes, each followed by the AUX record of its part, as perf
	// record writes a trace longer than what it reads of the AUX area at
	// a time (packets then continue from one record into the next);
	// 0: the whole trace in one record.
	Chunk int
}

const (
	sampleTID, sampleTime, sampleCPU = 1 << 1, 1 << 2, 1 << 7
	sampleType                       = sampleTID | sampleTime | sampleCPU
	attrSampleIDAll                  = 1 << 18
	attrSize                         = 136 // PERF_ATTR_SIZE_VER8
)

type perfWriter struct {
	b   []byte
	pid int32
	cpu int32
}

var le = binary.LittleEndian

func cstr(s string) []byte {
	b := append([]byte(s), 0)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// rec appends a kernel record with its sample_id (TID, TIME, CPU).
func (w *perfWriter) rec(typ uint32, misc uint16, tm uint64, body []byte) {
	n := 8 + len(body) + 24
	w.b = le.AppendUint32(w.b, typ)
	w.b = le.AppendUint16(w.b, misc)
	w.b = le.AppendUint16(w.b, uint16(n))
	w.b = append(w.b, body...)
	w.b = le.AppendUint32(w.b, uint32(w.pid))
	w.b = le.AppendUint32(w.b, uint32(w.pid))
	w.b = le.AppendUint64(w.b, tm)
	w.b = le.AppendUint32(w.b, uint32(w.cpu))
	w.b = le.AppendUint32(w.b, 0)
}

// user appends a perf tool record (no sample_id).
func (w *perfWriter) user(typ uint32, body []byte) {
	w.b = le.AppendUint32(w.b, typ)
	w.b = le.AppendUint16(w.b, 0)
	w.b = le.AppendUint16(w.b, uint16(8+len(body)))
	w.b = append(w.b, body...)
}

func (w *perfWriter) pidtid(b []byte) []byte {
	b = le.AppendUint32(b, uint32(w.pid))
	return le.AppendUint32(b, uint32(w.pid))
}

// PerfData writes the run and its trace as `perf record -e intel_pt//u
// --per-thread` would have: the intel_pt attribute, AUXTRACE_INFO,
// TIME_CONV (perf time = TSC), COMM, an MMAP2 per executable mapping,
// ITRACE_START, the trace in one AUXTRACE record, AUX, EXIT, and the
// build-id table of the mapped files.
func PerfData(run *Run, enc *Encoded, o PerfOptions) []byte {
	if o.PMUType == 0 {
		o.PMUType = 8
	}
	w := &perfWriter{pid: int32(run.PID), cpu: o.CPU}
	t0 := enc.TSC[0]
	w.auxtraceInfo(o.PMUType)
	ids := w.startRecords(run, t0)
	w.rec(12, 0, t0-1, w.pidtid(nil))
	tEnd := enc.TSC[len(enc.TSC)-1] + 1
	chunk := len(enc.PT)
	if o.Chunk > 0 && o.Chunk < chunk {
		chunk = o.Chunk
	}
	for off := 0; off == 0 || off < len(enc.PT); off += chunk {
		part := enc.PT[off:min(off+chunk, len(enc.PT))]
		// AUXTRACE: size, offset, reference, idx, tid, cpu, reserved; data.
		a := le.AppendUint64(nil, uint64(len(part)))
		a = le.AppendUint64(a, uint64(off))
		a = le.AppendUint64(a, 0)
		a = le.AppendUint32(a, 0)
		a = le.AppendUint32(a, uint32(w.pid))
		if o.PerThread {
			a = le.AppendUint32(a, ^uint32(0))
		} else { // perf's per-CPU buffers: tid -1
			a = le.AppendUint32(a[:len(a)-4], ^uint32(0))
			a = le.AppendUint32(a, uint32(o.CPU))
		}
		a = le.AppendUint32(a, 0)
		w.user(71, a)
		w.b = append(w.b, part...)
		// AUX: offset, size, flags
		w.rec(11, 0, tEnd, le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, uint64(off)), uint64(len(part))), 0))
		if len(part) == 0 {
			break
		}
	}
	ex := w.pidtid(nil)
	ex = le.AppendUint32(ex[:0], uint32(w.pid))
	ex = le.AppendUint32(ex, 1) // parent
	ex = le.AppendUint32(ex, uint32(w.pid))
	ex = le.AppendUint32(ex, 1)
	ex = le.AppendUint64(ex, tEnd)
	w.rec(4, 0, tEnd, ex)
	return finish(w.b, ids, o.PMUType)
}

// auxtraceInfo appends AUXTRACE_INFO (type intel_pt, then perf's
// private words) and TIME_CONV (perf time = TSC: shift 0, mult 1, zero 0).
func (w *perfWriter) auxtraceInfo(pmuType uint32) {
	priv := make([]uint64, 16)
	priv[0] = uint64(pmuType)
	priv[2] = 1 // time_mult
	priv[5] = 10
	body := le.AppendUint32(nil, 1)
	body = le.AppendUint32(body, 0)
	for _, v := range priv {
		body = le.AppendUint64(body, v)
	}
	w.user(70, body)
	w.user(79, le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0), 1), 0))
}

// finish puts the header, the intel_pt attribute and the build-id table
// around the records data.
func finish(data []byte, ids []buildID, pmuType uint32) []byte {
	var sec []byte
	for _, id := range ids {
		name := cstr(id.path)
		r := make([]byte, 36, 36+len(name))
		le.PutUint32(r, 67)
		le.PutUint16(r[4:], 2) // user
		le.PutUint16(r[6:], uint16(36+len(name)))
		le.PutUint32(r[8:], uint32(id.pid))
		copy(r[12:32], id.id)
		sec = append(sec, append(r, name...)...)
	}
	attr := make([]byte, attrSize+16)
	le.PutUint32(attr, pmuType)
	le.PutUint32(attr[4:], attrSize)
	le.PutUint64(attr[8:], 1<<10|1<<13) // tsc_en, branch_en
	le.PutUint64(attr[24:], sampleType)
	le.PutUint64(attr[40:], attrSampleIDAll|1<<5|1<<8|1<<9|1<<13|1<<23) // sample_id_all, exclude_kernel, mmap, comm, task, mmap2
	const hdr = 104
	h := make([]byte, hdr)
	copy(h, "PERFILE2")
	le.PutUint64(h[8:], hdr)
	le.PutUint64(h[16:], uint64(len(attr)))
	le.PutUint64(h[24:], hdr)
	le.PutUint64(h[32:], uint64(len(attr)))
	dOff := uint64(hdr + len(attr))
	le.PutUint64(h[40:], dOff)
	le.PutUint64(h[48:], uint64(len(data)))
	le.PutUint64(h[72:], 1<<2) // HEADER_BUILD_ID
	out := append(append(h, attr...), data...)
	table := dOff + uint64(len(data))
	out = le.AppendUint64(out, table+16)
	out = le.AppendUint64(out, uint64(len(sec)))
	return append(out, sec...)
}

// buildID is an entry of perf's build-id table.
type buildID struct {
	id, path string
	pid      int32
}

// startRecords appends COMM (exec) and an MMAP2 per executable mapping,
// and returns the build-ids of the mapped files.
func (w *perfWriter) startRecords(run *Run, t0 uint64) []buildID {
	w.rec(3, 2|1<<13, t0-3, append(w.pidtid(nil), cstr(run.Comm)...))
	var ids []buildID
	seen := map[string]bool{}
	for _, m := range run.Maps {
		if !m.Exec() || m.Path == "[vsyscall]" {
			continue
		}
		b := w.pidtid(nil)
		misc := uint16(2)                  // user
		if m.Path == "[kernel.kallsyms]" { // perf's kernel map: pid -1
			b, misc = le.AppendUint32(le.AppendUint32(nil, ^uint32(0)), ^uint32(0)), 1
		}
		b = le.AppendUint64(b, m.Start)
		b = le.AppendUint64(b, m.End-m.Start)
		b = le.AppendUint64(b, m.Off)
		b = le.AppendUint32(b, m.Maj)
		b = le.AppendUint32(b, m.Min)
		b = le.AppendUint64(b, m.Ino)
		b = le.AppendUint64(b, 0)
		b = le.AppendUint32(b, 5) // PROT_READ|PROT_EXEC
		b = le.AppendUint32(b, 2) // MAP_PRIVATE
		b = append(b, cstr(m.Path)...)
		w.rec(10, misc, t0-2, b)
		if m.Path == "[vdso]" && !seen[m.Path] { // perf puts the vDSO's build-id in its table
			seen[m.Path] = true
			if f, err := elf.NewFile(bytes.NewReader(run.Code[m.Start])); err == nil {
				if id := symtab.BuildID(f); id != nil {
					name := m.Path
					if m.End <= 1<<32 {
						name = "[vdso32]" // as perf names a 32-bit process's vDSO
					}
					ids = append(ids, buildID{string(id), name, w.pid})
				}
			}
		}
		if !seen[m.Path] && len(m.Path) > 0 && m.Path[0] == '/' {
			seen[m.Path] = true
			if f, err := elf.Open(m.Path); err == nil {
				if id := symtab.BuildID(f); id != nil {
					ids = append(ids, buildID{string(id), m.Path, w.pid})
				}
				f.Close()
			}
		}
	}
	return ids
}

// Sideband returns the kernel's sideband records of the run as `iotap pt
// capture` stores them (cpuN.sideband, sample_id TID|TIME|CPU): COMM,
// MMAP2, ITRACE_START, AUX, EXIT.
func Sideband(run *Run, enc *Encoded) []byte {
	w := &perfWriter{pid: int32(run.PID)}
	t0 := enc.TSC[0]
	w.startRecords(run, t0)
	w.rec(12, 0, t0-1, w.pidtid(nil))
	tEnd := enc.TSC[len(enc.TSC)-1] + 1
	w.rec(11, 0, tEnd, le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0), uint64(len(enc.PT))), 0))
	return w.b
}

// SampleType is the sample_type of the records Sideband writes.
const SampleType = sampleType
