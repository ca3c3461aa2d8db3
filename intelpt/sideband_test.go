package intelpt

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/iotap/iotap/perfdata"
)

// sbWriter builds sideband records with a TID|TIME|CPU sample_id trailer
// (what `iotap pt capture` asks the kernel for).
type sbWriter struct {
	data []byte
	time uint64
}

const sbSampleType = perfSampleTID | perfSampleTime | perfSampleCPU

func (w *sbWriter) rec(typ uint32, misc uint16, pid, tid int32, body []byte) {
	le := binary.LittleEndian
	w.time += 10
	h := make([]byte, 8, 8+len(body)+24)
	le.PutUint32(h, typ)
	le.PutUint16(h[4:], misc)
	le.PutUint16(h[6:], uint16(8+len(body)+24))
	h = append(h, body...)
	h = le.AppendUint32(h, uint32(pid))
	h = le.AppendUint32(h, uint32(tid))
	h = le.AppendUint64(h, w.time)
	h = le.AppendUint64(h, 3) // cpu 3
	w.data = append(w.data, h...)
}

func cname(s string) []byte {
	b := append([]byte(s), 0)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

func (w *sbWriter) mmap2(pid int32, addr, length, pgoff uint64, prot uint32, name string, buildID []byte) {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(pid))
	b = le.AppendUint32(b, uint32(pid))
	b = le.AppendUint64(b, addr)
	b = le.AppendUint64(b, length)
	b = le.AppendUint64(b, pgoff)
	var misc uint16 = PerfMiscUser
	u := make([]byte, 24)
	if buildID != nil {
		misc |= PerfMiscMmapBuildID
		u[0] = byte(len(buildID))
		copy(u[4:], buildID)
	} else {
		le.PutUint32(u, 254)
		le.PutUint64(u[8:], 1234)
	}
	b = append(b, u...)
	b = le.AppendUint32(b, prot)
	b = le.AppendUint32(b, 2) // MAP_PRIVATE
	b = append(b, cname(name)...)
	w.rec(PerfRecordMmap2, misc, pid, pid, b)
}

func (w *sbWriter) comm(pid, tid int32, name string, exec bool) {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(pid))
	b = le.AppendUint32(b, uint32(tid))
	var misc uint16 = PerfMiscUser
	if exec {
		misc |= PerfMiscCommExec
	}
	w.rec(PerfRecordComm, misc, pid, tid, append(b, cname(name)...))
}

func (w *sbWriter) task(typ uint32, pid, ppid, tid, ptid int32) {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(pid))
	b = le.AppendUint32(b, uint32(ppid))
	b = le.AppendUint32(b, uint32(tid))
	b = le.AppendUint32(b, uint32(ptid))
	b = le.AppendUint64(b, w.time)
	w.rec(typ, 0, pid, tid, b)
}

func TestRawSideband(t *testing.T) {
	var w sbWriter
	bid := []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	w.comm(100, 100, "sh", true)
	w.mmap2(100, 0x400000, 0x3000, 0x1000, 5, "/bin/sh", nil)
	w.mmap2(100, 0x7f0000000000, 0x10000, 0x2000, 5, "/lib/libc.so.6", bid)
	w.mmap2(100, 0x600000, 0x1000, 0, 3, "/bin/sh", nil) // data: not code
	w.task(PerfRecordFork, 101, 100, 101, 100)
	w.comm(101, 101, "prog", true)
	w.mmap2(101, 0x500000, 0x2000, 0, 5, "/bin/prog", nil)
	// mmap(MAP_FIXED) over the middle of the first mapping
	w.mmap2(101, 0x500800, 0x800, 0, 5, "/bin/other", nil)
	w.task(PerfRecordFork, 102, 100, 102, 100) // no exec: keeps sh's mappings
	w.rec(PerfRecordSwitchCPUWide, PerfMiscSwitchOut, 100, 100, []byte{101, 0, 0, 0, 101, 0, 0, 0})
	w.rec(PerfRecordAux, 0, 101, 101, binary.LittleEndian.AppendUint64(make([]byte, 16), AuxFlagTruncated))
	w.rec(PerfRecordLost, 0, -1, -1, binary.LittleEndian.AppendUint64(make([]byte, 8), 7))
	w.rec(99, 0, 1, 1, nil) // a type from the future
	w.task(PerfRecordExit, 101, 100, 101, 100)

	s := RawSideband(w.data, sbSampleType, true)
	if s.Truncated != "" || len(s.Bad) > 0 {
		t.Fatalf("truncated %q, bad %v", s.Truncated, s.Bad)
	}
	if s.Unknown[99] != 1 || s.ByType["type_99"] != 1 {
		t.Errorf("unknown types %v, by type %v", s.Unknown, s.ByType)
	}
	if s.LostRecords != 7 || s.AuxTruncated != 1 || !s.Lossy() {
		t.Errorf("lost %d, aux truncated %d", s.LostRecords, s.AuxTruncated)
	}
	if !strings.Contains(s.LossSummary(), "7 records lost") {
		t.Errorf("loss summary %q", s.LossSummary())
	}
	r := s.Records[2]
	if r.Type != PerfRecordMmap2 || r.Addr != 0x7f0000000000 || r.PgOff != 0x2000 || r.BuildIDHex() != "deadbeef0102030405060708090a0b0c0d0e0f10" ||
		r.Filename != "/lib/libc.so.6" || r.Time != 30 || r.CPU != 3 || r.PID != 100 {
		t.Errorf("mmap2 with build-id: %+v", r)
	}
	sw := s.Records[9]
	if sw.Type != PerfRecordSwitchCPUWide || !sw.SwitchOut() || sw.NextPrevPID != 101 || sw.PID != 100 {
		t.Errorf("switch: %+v", sw)
	}

	a := s.AddressSpaces()
	got := func(pid int32) string {
		var l []string
		for _, m := range a.Process(pid).Mappings {
			l = append(l, m.String())
		}
		return strings.Join(l, "; ")
	}
	for _, c := range []struct {
		pid  int32
		want string
	}{
		{100, "400000-403000 00001000 /bin/sh; 7f0000000000-7f0000010000 00002000 /lib/libc.so.6"},
		{101, "500000-500800 00000000 /bin/prog; 500800-501000 00000000 /bin/other; 501000-502000 00001000 /bin/prog"},
		{102, "400000-403000 00001000 /bin/sh; 7f0000000000-7f0000010000 00002000 /lib/libc.so.6"},
	} {
		if g := got(c.pid); g != c.want {
			t.Errorf("pid %d mappings:\n got %s\nwant %s", c.pid, g, c.want)
		}
	}
	if want := []string{"pid 101: 500800-501000 00000000 /bin/other replaces part of 500000-502000 00000000 /bin/prog"}; strings.Join(a.OverlapNotes, "|") != strings.Join(want, "|") {
		t.Errorf("overlap notes %q, want %q", a.OverlapNotes, want)
	}
	if a.Overlaps != 1 || !a.Exited[101] || a.Process(101).Comm != "prog" {
		t.Errorf("overlaps %d, exited %v, comm %q", a.Overlaps, a.Exited, a.Process(101).Comm)
	}
	p := a.Process(101)
	for _, c := range []struct {
		addr uint64
		want string
	}{{0x4fffff, ""}, {0x500000, "/bin/prog"}, {0x5007ff, "/bin/prog"}, {0x500800, "/bin/other"}, {0x501fff, "/bin/prog"}, {0x502000, ""}} {
		m := p.Lookup(c.addr)
		g := ""
		if m != nil {
			g = m.File
		}
		if g != c.want {
			t.Errorf("lookup %#x: %q, want %q", c.addr, g, c.want)
		}
	}
	if m := p.Lookup(0x501234); m.FileOffset(0x501234) != 0x1234 {
		t.Errorf("file offset of the right part: %#x", m.FileOffset(0x501234))
	}

	// Cut inside a record: the records before it, and the cut reported.
	cut := RawSideband(w.data[:len(w.data)-5], sbSampleType, true)
	if cut.Truncated == "" || len(cut.Records) != len(s.Records)-1 {
		t.Errorf("cut: truncated %q, %d records", cut.Truncated, len(cut.Records))
	}
	// A record too short for its type: skipped and listed with its offset.
	var bad sbWriter
	bad.rec(PerfRecordMmap2, 0, 1, 1, make([]byte, 16))
	bad.comm(1, 1, "x", false)
	bs := RawSideband(bad.data, sbSampleType, true)
	if len(bs.Bad) != 1 || !strings.Contains(bs.Bad[0].Error(), "offset 0x0: MMAP2") || len(bs.Records) != 1 {
		t.Errorf("bad record: %v, %d records", bs.Bad, len(bs.Records))
	}
}

// perfFileWithSideband wraps sideband records in a perf.data file with one
// attribute (sample_id_all, TID|TIME|CPU) and a build-id feature section.
func perfFileWithSideband(records []byte, buildIDs []PerfBuildID) []byte {
	le := binary.LittleEndian
	const attrSize = 136
	attr := make([]byte, attrSize+16)
	le.PutUint32(attr, 1) // software
	le.PutUint32(attr[4:], attrSize)
	le.PutUint64(attr[24:], sbSampleType)
	le.PutUint64(attr[40:], 1<<18 /* sample_id_all */)
	h := make([]byte, perfdata.FileHeaderSize)
	copy(h, PerfMagic)
	le.PutUint64(h[8:], perfdata.FileHeaderSize)
	le.PutUint64(h[16:], uint64(len(attr)))
	le.PutUint64(h[24:], perfdata.FileHeaderSize)
	le.PutUint64(h[32:], uint64(len(attr)))
	dOff := uint64(perfdata.FileHeaderSize + len(attr))
	le.PutUint64(h[40:], dOff)
	le.PutUint64(h[48:], uint64(len(records)))
	var sec []byte
	for _, b := range buildIDs {
		name := cname(b.Filename)
		r := make([]byte, 36, 36+len(name))
		le.PutUint32(r, 67)
		le.PutUint16(r[4:], b.CPUMode)
		le.PutUint16(r[6:], uint16(36+len(name)))
		le.PutUint32(r[8:], uint32(b.PID))
		copy(r[12:], b.BuildID)
		sec = append(sec, append(r, name...)...)
	}
	out := append(append(h, attr...), records...)
	if buildIDs != nil {
		le.PutUint64(out[72:], 1<<perfFeatBuildID)
		table := dOff + uint64(len(records))
		out = le.AppendUint64(out, table+16)
		out = le.AppendUint64(out, uint64(len(sec)))
		out = append(out, sec...)
	}
	return out
}

func TestPerfSidebandSynthetic(t *testing.T) {
	var w sbWriter
	w.comm(7, 7, "a", true)
	w.mmap2(7, 0x1000, 0x1000, 0, 5, "/a", nil)
	w.rec(200, 0, 7, 7, nil)
	bid := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	b := perfFileWithSideband(w.data, []PerfBuildID{{PID: -1, CPUMode: PerfMiscUser, BuildID: bid, Filename: "/a"}})
	s, err := PerfSideband(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) != 2 || s.Unknown[200] != 1 || s.Lossy() {
		t.Fatalf("records %d, unknown %v, loss %q", len(s.Records), s.Unknown, s.LossSummary())
	}
	if len(s.BuildIDs) != 1 || s.BuildIDs[0].Hex() != "0102030405060708090a0b0c0d0e0f1011121314" || s.BuildIDs[0].Filename != "/a" {
		t.Fatalf("build-ids %+v", s.BuildIDs)
	}
	m := s.AddressSpaces().Process(7).Lookup(0x1800)
	if m == nil || fmt.Sprintf("%x", m.BuildID) != "0102030405060708090a0b0c0d0e0f1011121314" {
		t.Errorf("mapping of /a takes perf's build-id: %+v", m)
	}
	// Header's data size 0: perf record was killed.
	k := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(k[48:], 0)
	s, err = PerfSideband(k)
	if err != nil || !strings.Contains(s.Truncated, "did not finish") || len(s.Records) != 2 {
		t.Errorf("unfinished file: %v, %q, %d records", err, s.Truncated, len(s.Records))
	}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte("PERFILE"), "missing PERFILE2"},
		{b[:50], "shorter than its 104-byte header"},
	} {
		if _, err := PerfSideband(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.b, err, c.want)
		}
	}
}

// FuzzPerfSideband: no panic, every record inside the input, and the
// address spaces build without panic, on any bytes.
func FuzzPerfSideband(f *testing.F) {
	var w sbWriter
	w.comm(7, 7, "a", true)
	w.mmap2(7, 0x1000, 0x1000, 0, 5, "/a", []byte{1, 2, 3})
	w.mmap2(7, 0x1800, 0x1000, 0, 5, "/b", nil)
	w.task(PerfRecordFork, 8, 7, 8, 7)
	w.rec(PerfRecordSwitch, PerfMiscSwitchOut, 7, 7, nil)
	f.Add(perfFileWithSideband(w.data, []PerfBuildID{{PID: 7, BuildID: make([]byte, 20), Filename: "/a"}}))
	f.Add(append(append([]byte(nil), PerfMagic...), 16, 0, 0, 0, 0, 0, 0, 0))
	if b, err := os.ReadFile("../perfdata/testdata/cpu-clock-z.data"); err == nil {
		f.Add(b) // perf record -z: compressed records
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := PerfSideband(data)
		if err != nil {
			return
		}
		for _, r := range s.Records {
			// (a record inflated from a compressed one has the compressed
			// record's offset)
			if r.Offset < 0 || r.Offset >= int64(len(data)) {
				t.Fatalf("record at %d+%d outside %d bytes", r.Offset, r.Size, len(data))
			}
		}
		a := s.AddressSpaces()
		for _, p := range a.Procs {
			for i := 1; i < len(p.Mappings); i++ {
				if p.Mappings[i].Start < p.Mappings[i-1].End {
					t.Fatalf("overlapping mappings after insert: %v %v", p.Mappings[i-1], p.Mappings[i])
				}
			}
		}
		RawSideband(data, sbSampleType, true)
	})
}
