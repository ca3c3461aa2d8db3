package mmiotrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample holds one line of every kind in the kernel's formats
// (kernel/trace/trace_mmiotrace.c), including the "trace" file header, a
// lost-events mark, PCIDEV with and without driver, UNMAP with id -1 and
// an older tool's nanosecond timestamps.
const sample = `# tracer: mmiotrace
#
VERSION 20070824
PCIDEV 0000 80861237 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 
PCIDEV 0020 8086100e b febc0000 c041 0 0 0 0 feb80002 20000 40 0 0 0 0 40000 e1000
LSPCI 00:04.0 Ethernet controller: Intel Corporation 82540EM Gigabit Ethernet Controller (rev 03)
MAP 12.345678 1 0xfebc0000 0xffffc90000100000 0x20000 0x0 0
R 4 12.345700 1 0xfebc0008 0x80080783 0xffffffff8160a1b2 0
W 4 12.345800 1 0xfebc00d8 0xffffffff 0xffffffff8160a1c0 0
R 1 12.345900 1 0xfebc0010 0x7f 0x0 0
W 2 12.346000 1 0xfebc0012 0xbeef 0x0 0
R 8 12.346100 1 0xfebc0020 0x123456789abcdef0 0x0 0
UNKNOWN 12.346200 1 0xfebc0030 0f,1f,44 0xffffffff8160a1d0 0
MARK 12.400000 X is up
MARK 0.000000 Lost 42 events.
MARK 12.500000 
UNMAP 13.000000 1 0x0 0
UNMAP 13.000001 -1 0x0 0
R 4 5.123456789 2 0xfebc0008 0x1 0x0 0
rw what?
`

func readAll(t *testing.T, in string) []*Record {
	t.Helper()
	rd := NewReader(strings.NewReader(in))
	var out []*Record
	for {
		r, err := rd.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func writeAll(t *testing.T, recs []*Record) string {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRoundTripSample(t *testing.T) {
	recs := readAll(t, sample)
	if got := writeAll(t, recs); got != sample {
		t.Fatalf("round trip differs:\n%s\nwant:\n%s", got, sample)
	}
}

func TestRoundTripGolden(t *testing.T) {
	for _, p := range []string{"testdata/e1000-bind.log", "testdata/e1000-trace-file.log.xz", "../testdata/mmiotrace/e1000-probe.log"} {
		data, err := os.ReadFile(p)
		if err == nil && DetectCompression(data) != None {
			dec, _, closeDec, derr := Decompress(bytes.NewReader(data))
			if derr != nil {
				t.Fatal(derr)
			}
			data, err = io.ReadAll(dec)
			closeDec()
		}
		if errors.Is(err, os.ErrNotExist) {
			t.Logf("%s not recorded yet", p)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rd := NewReader(bytes.NewReader(data))
		var out bytes.Buffer
		w := NewWriter(&out)
		var rec Record
		kinds := map[Kind]int{}
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			kinds[rec.Kind]++
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		if !bytes.Equal(out.Bytes(), data) {
			t.Errorf("%s: round trip is not byte-identical", p)
		}
		if kinds[KindOther] != 0 || kinds[KindRead] == 0 || kinds[KindWrite] == 0 || kinds[KindMap] == 0 {
			t.Errorf("%s: kinds %v", p, kinds)
		}
	}
}

func TestFields(t *testing.T) {
	recs := readAll(t, sample)
	want := []Kind{KindComment, KindComment, KindVersion, KindPCIDev, KindPCIDev, KindLSPCI, KindMap,
		KindRead, KindWrite, KindRead, KindWrite, KindRead, KindUnknown, KindMark, KindMark, KindMark,
		KindUnmap, KindUnmap, KindRead, KindOther}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, k := range want {
		if recs[i].Kind != k {
			t.Errorf("record %d: kind %v, want %v", i, recs[i].Kind, k)
		}
	}
	p := recs[4].PCI
	if p.Addr().String() != "0000:00:04.0" || p.Vendor != 0x8086 || p.Device != 0x100e || p.IRQ != 0xb ||
		p.BARStart(0) != 0xfebc0000 || p.Size[0] != 0x20000 || !p.BARIsIO(1) || string(p.Driver) != "e1000" {
		t.Errorf("PCIDEV fields: %+v", p)
	}
	if len(recs[3].PCI.Driver) != 0 || recs[3].PCI.NoTrailingSpace {
		t.Errorf("driverless PCIDEV: %+v", recs[3].PCI)
	}
	m := recs[6]
	if m.Time.NS != 12345678000 || m.MapID != 1 || m.Phys != 0xfebc0000 || m.Virt != 0xffffc90000100000 || m.Len != 0x20000 {
		t.Errorf("MAP fields: %+v", m)
	}
	r := recs[7]
	if r.Width != 4 || r.Phys != 0xfebc0008 || r.Value != 0x80080783 || r.PC != 0xffffffff8160a1b2 || r.Time.Digits != 6 {
		t.Errorf("R fields: %+v", r)
	}
	if recs[12].Opcode != [3]byte{0x0f, 0x1f, 0x44} {
		t.Errorf("UNKNOWN opcode %x", recs[12].Opcode)
	}
	if string(recs[13].Text) != "X is up" {
		t.Errorf("MARK text %q", recs[13].Text)
	}
	if n, ok := recs[14].Lost(); !ok || n != 42 {
		t.Errorf("Lost() = %d, %v", n, ok)
	}
	if _, ok := recs[13].Lost(); ok {
		t.Error("ordinary mark reported as lost events")
	}
	if recs[17].MapID != -1 {
		t.Errorf("UNMAP id %d", recs[17].MapID)
	}
	if ts := recs[18].Time; ts.NS != 5123456789 || ts.Digits != 9 {
		t.Errorf("ns timestamp %+v", ts)
	}
}

func TestBadLines(t *testing.T) {
	for _, tc := range []struct{ line, field string }{
		{"R 3 1.000000 1 0x10 0x1 0x0 0", "width"},
		{"R 4 1.000000 1 0xzz 0x1 0x0 0", "physical address"},
		{"W 4 1.000000 1 0x10 0x1 0x0", "pc"},
		{"W 4 1.000000 1 0x10 0x1 0x0 0 extra", "pid"},
		{"MAP 1.0 1 0x1 0x2 0x3 0x0", "pc"},
		{"UNMAP x 1 0x0 0", "timestamp"},
		{"UNKNOWN 1.000000 1 0x10 0f,1f 0x0 0", "opcode bytes"},
		{"PCIDEV 0020 8086100e b 1 2 3", "resource"},
		{"MARK abc", "timestamp"},
		{"R 4 1.0000000000 1 0x10 0x1 0x0 0", "timestamp"},
		{"R 4 1.000000 1 0x11111111111111111 0x1 0x0 0", "physical address"},
	} {
		in := "VERSION 20070824\n" + tc.line + "\n"
		rd := NewReader(strings.NewReader(in))
		var rec Record
		if err := rd.ReadInto(&rec); err != nil {
			t.Fatal(err)
		}
		err := rd.ReadInto(&rec)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || pe.Field != tc.field || !errors.Is(err, ErrFormat) {
			t.Errorf("%q: err %v, want line 2 field %q", tc.line, err, tc.field)
		}
		if err != nil && !strings.Contains(err.Error(), "line 2") {
			t.Errorf("error text lacks line number: %v", err)
		}
	}
}

func TestKeepGoing(t *testing.T) {
	in := "VERSION 20070824\nR 4 junk\nR 4 1.000000 1 0x10 0x1 0x0 0\nW x\n"
	rd := NewReader(strings.NewReader(in))
	rd.SetKeepGoing(true)
	var n int
	var rec Record
	for rd.ReadInto(&rec) == nil {
		n++
	}
	if n != 2 || rd.Skipped() != 2 {
		t.Fatalf("read %d, skipped %d; want 2, 2", n, rd.Skipped())
	}
	var pe *ParseError
	if !errors.As(rd.FirstSkipError(), &pe) || pe.Line != 2 {
		t.Errorf("first skip error %v", rd.FirstSkipError())
	}
}

func TestTruncatedLastLine(t *testing.T) {
	rd := NewReader(strings.NewReader("VERSION 20070824\nMARK 1.000000 tail"))
	var rec Record
	rd.ReadInto(&rec)
	if err := rd.ReadInto(&rec); err != nil || string(rec.Text) != "tail" || !rd.Truncated() {
		t.Fatalf("err %v text %q truncated %v", err, rec.Text, rd.Truncated())
	}
}

func TestCompressedInput(t *testing.T) {
	for _, c := range []Compression{Gzip, XZ, Zstd} {
		var b bytes.Buffer
		zw, err := NewCompressWriter(&b, c)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(zw, sample)
		zw.Close()
		rd := NewReader(&b)
		var out bytes.Buffer
		w := NewWriter(&out)
		var rec Record
		for rd.ReadInto(&rec) == nil {
			w.Write(&rec)
		}
		w.Flush()
		rd.Close()
		if rd.Compression() != c || out.String() != sample {
			t.Errorf("%v: detected %v, content equal %v", c, rd.Compression(), out.String() == sample)
		}
	}
}

func TestLongLines(t *testing.T) {
	long := "MARK 1.000000 " + strings.Repeat("x", 600<<10)
	recs := readAll(t, "VERSION 20070824\n"+long+"\n")
	if len(recs) != 2 || len(recs[1].Text) != 600<<10 {
		t.Fatal("long marker not read whole")
	}
	rd := NewReader(strings.NewReader(long + "\n"))
	rd.SetMaxLine(300 << 10)
	var rec Record
	if err := rd.ReadInto(&rec); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("over-long line: %v", err)
	}
}

func TestReadIntoDoesNotAllocate(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 20000; i++ {
		in.WriteString("R 4 12.345700 1 0xfebc0008 0x80080783 0xffffffff8160a1b2 0\nMARK 1.000000 Lost 3 events.\n")
	}
	rd := NewReader(strings.NewReader(in.String()))
	var rec Record
	rd.ReadInto(&rec) // set-up allocations happen on the first read
	allocs := testing.AllocsPerRun(10000, func() {
		if err := rd.ReadInto(&rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ReadInto allocates %.1f times per record", allocs)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	big := genLog(40000, 6) // mapped (>= 1 MiB)
	var zs bytes.Buffer
	zw, _ := NewCompressWriter(&zs, Zstd)
	io.WriteString(zw, big)
	zw.Close()
	for name, content := range map[string][]byte{
		"small.log": []byte(sample), "big.log": []byte(big), "big.log.zst": zs.Bytes(),
		"trunc.log": []byte(strings.TrimSuffix(big, "\n")),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, content, 0o600)
		rd, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		var rec Record
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			w.Write(&rec)
		}
		w.Flush()
		if err := rd.Close(); err != nil {
			t.Fatal(err)
		}
		want := string(content)
		switch name {
		case "big.log.zst":
			want = big
		case "trunc.log":
			want = big
			if !rd.Truncated() {
				t.Error("truncated file not reported")
			}
		}
		if out.String() != want {
			t.Errorf("%s: content differs", name)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file opened")
	}
}

// TestRecordLostMarks: only "Lost N events." is a loss mark; the text
// "Lost events." (prefix and suffix overlapping) is not, and does not
// panic (found by FuzzFilterMatchesReader).
func TestRecordLostMarks(t *testing.T) {
	for _, c := range []struct {
		text string
		n    uint64
		ok   bool
	}{
		{"Lost 42 events.", 42, true},
		{"Lost 0 events.", 0, true},
		{"Lost events.", 0, false},
		{"Lost  events.", 0, false},
		{"Lost x events.", 0, false},
		{"Lost 3 events", 0, false},
		{"lost 3 events.", 0, false},
	} {
		var r Record
		if err := ParseLine([]byte("MARK 0.000001 "+c.text), &r); err != nil {
			t.Fatal(err)
		}
		if n, ok := r.Lost(); n != c.n || ok != c.ok {
			t.Errorf("%q: Lost() = %d, %v; want %d, %v", c.text, n, ok, c.n, c.ok)
		}
	}
}

// TestReusedRecordPC: a record reused for the next line keeps no PC from
// the access before it (mmio read --symbols named a MARK line with the
// previous access's function: seen in the lab, TestLabSymbolsModule).
func TestReusedRecordPC(t *testing.T) {
	var r Record
	lines := []string{
		"R 4 28.978071 1 0xfea00008 0x78 0xffffffffc032308b 0",
		"MARK 28.988972 iotap: bound 0000:00:07.0 iotap_labdrv",
		"MAP 28.961514 1 0xfea00000 0xff7f74c980400000 0x100000 0x0 0",
		"UNMAP 28.990000 1 0x0 0",
		"# a comment",
	}
	if err := ParseLine([]byte(lines[0]), &r); err != nil || r.PC != 0xffffffffc032308b {
		t.Fatalf("R line: PC %#x, %v", r.PC, err)
	}
	for _, l := range lines[1:] {
		r2 := r
		if err := ParseLine([]byte(l), &r2); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if r2.PC != 0 {
			t.Errorf("%s: PC %#x left from the R line before it", l, r2.PC)
		}
	}
	// The same through a Reader over the whole log.
	rd := NewReader(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	for i := 0; ; i++ {
		if err := rd.ReadInto(&r); err != nil {
			break
		}
		if i > 0 && r.PC != 0 {
			t.Errorf("line %d (%s): PC %#x", i+1, lines[i], r.PC)
		}
	}
}

// TestReaderDropBehind: a mapped Reader that drops the pages it has read
// (DropBehind, as ReadLog's record-by-record jobs use it) returns
// the records, lines and counts of a Reader of the same bytes, over a
// 9 MiB file (two drops), with ReadInto's last record intact each time.
func TestReaderDropBehind(t *testing.T) {
	bind, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for len(data) < 9<<20 {
		data = append(data, bind...)
	}
	path := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rd.DropBehind()
	if rd.dropAt == 0 {
		t.Fatal("a mapped Reader does not drop")
	}
	want := NewReader(bytes.NewReader(data))
	var a, b Record
	n := 0
	for {
		errA, errB := rd.ReadInto(&a), want.ReadInto(&b)
		if errA != errB {
			t.Fatalf("record %d: error %v, want %v", n, errA, errB)
		}
		if errA != nil {
			break
		}
		if string(a.Line) != string(b.Line) || a.Kind != b.Kind || a.Time != b.Time {
			t.Fatalf("record %d: %q, want %q", n, a.Line, b.Line)
		}
		n++
	}
	if rd.dropped < 4<<20 || rd.Line() != want.Line() || n == 0 {
		t.Fatalf("dropped %d bytes, %d lines (want %d), %d records", rd.dropped, rd.Line(), want.Line(), n)
	}
}
