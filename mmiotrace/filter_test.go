package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genLog writes a small log in the kernel's format with two devices, maps,
// marks, a lost-events mark and n accesses of mixed widths.
func genLog(n int, seed int64) string {
	rnd := rand.New(rand.NewSource(seed))
	var b strings.Builder
	b.WriteString("VERSION 20070824\n")
	b.WriteString("PCIDEV 0000 80861237 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \n")
	b.WriteString("PCIDEV 0020 8086100e b febc0000 c041 0 0 0 0 feb80002 20000 40 0 0 0 0 40000 e1000\n")
	b.WriteString("PCIDEV 0028 1af41000 a febf1000 c061 0 0 fe000000 0 feb40000 1000 20 0 0 4000 0 40000 virtio-pci\n")
	b.WriteString("MAP 1.000000 1 0xfebc0000 0xffffc90000100000 0x20000 0x0 0\n")
	b.WriteString("MAP 1.000001 2 0xfebf1000 0xffffc90000200000 0x1000 0x0 0\n")
	ts := uint64(1000002)
	for i := 0; i < n; i++ {
		ts += uint64(rnd.Intn(50))
		sec, us := ts/1e6, ts%1e6
		id := 1
		base := uint64(0xfebc0000)
		if rnd.Intn(5) == 0 {
			id, base = 2, 0xfebf1000
		}
		widths := []int{1, 2, 4, 4, 4, 8}
		w := widths[rnd.Intn(len(widths))]
		off := uint64(rnd.Intn(0x400)) &^ uint64(w-1)
		kind := "R"
		if rnd.Intn(3) == 0 {
			kind = "W"
		}
		switch rnd.Intn(200) {
		case 0:
			fmt.Fprintf(&b, "MARK %d.%06d step %d\n", sec, us, i)
			continue
		case 1:
			fmt.Fprintf(&b, "MARK 0.000000 Lost %d events.\n", 1+rnd.Intn(9))
			continue
		case 2:
			fmt.Fprintf(&b, "UNKNOWN %d.%06d %d 0x%x 0f,1f,44 0xffffffff8160a1d0 0\n", sec, us, id, base+off)
			continue
		}
		val := rnd.Uint64() >> (64 - 8*w)
		fmt.Fprintf(&b, "%s %d %d.%06d %d 0x%x 0x%x 0x%x 0\n", kind, w, sec, us, id, base+off, val, 0xffffffff81000000+uint64(rnd.Intn(1<<20)))
	}
	b.WriteString("UNMAP 99.000000 1 0x0 0\n")
	return b.String()
}

func naiveFilter(t *testing.T, log string, f *Filter) string {
	t.Helper()
	var out strings.Builder
	rd := NewReader(strings.NewReader(log))
	s := NewStream(f)
	var rec Record
	for rd.ReadInto(&rec) == nil {
		keep, err := s.Keep(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if keep {
			out.Write(rec.Line)
			out.WriteByte('\n')
		}
	}
	return out.String()
}

func TestFilterParallelMatchesSequential(t *testing.T) {
	log := genLog(20000, 1)
	mustBAR := func(s string) BARRange {
		br, err := ParseBARRange(s)
		if err != nil {
			t.Fatal(err)
		}
		return br
	}
	var kw KindSet
	kw.Add(KindWrite)
	for name, f := range map[string]*Filter{
		"awk-like":  {Kinds: kw, Widths: 1 << 4, Ranges: []AddrRange{{0xfebc0100, 0xfebc0200}}},
		"bar":       {BARs: []BARRange{mustBAR("0000:00:04.0/0+0x8..0x10")}},
		"bar-by-id": {BARs: []BARRange{mustBAR("1af4:1000/0")}},
		"value":     {ValueMask: 0x8, ValueBits: 0x8},
		"map-id":    {MapIDs: []int32{2}},
		"time":      {HasStart: true, Start: 1.1e9, HasEnd: true, End: 1.2e9},
	} {
		t.Run(name, func(t *testing.T) {
			want := naiveFilter(t, log, f)
			var out bytes.Buffer
			st, err := FilterLog(context.Background(), strings.NewReader(log), &out, f, FilterOptions{Workers: 3, ChunkSize: 4096})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("parallel output differs from sequential (%d vs %d bytes)", out.Len(), len(want))
			}
			if st.Lines != int64(strings.Count(log, "\n")) || st.Kept != int64(strings.Count(want, "\n")) || st.Lost == 0 {
				t.Errorf("stats %+v", st)
			}
			// Structural records are always kept; some accesses dropped.
			for _, p := range []string{"VERSION ", "PCIDEV 0020", "MAP 1.000000 1", "UNMAP ", "MARK 0.000000 Lost"} {
				if !strings.Contains(want, "\n"+p) && !strings.HasPrefix(want, p) {
					t.Errorf("%q missing from output", p)
				}
			}
			if len(want) >= len(log) {
				t.Errorf("filter kept everything")
			}
		})
	}
}

func TestFilterSemantics(t *testing.T) {
	log := genLog(3000, 2)
	br, _ := ParseBARRange("0000:00:04.0/0+0x8..0x10")
	f := &Filter{BARs: []BARRange{br}}
	out := naiveFilter(t, log, f)
	var rec Record
	accesses := 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if err := ParseLine([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Kind.IsAccess() {
			accesses++
			if rec.Phys < 0xfebc0008 || rec.Phys >= 0xfebc0010 {
				t.Fatalf("kept access outside BAR range: %s", line)
			}
		}
	}
	if accesses == 0 {
		t.Fatal("no access kept")
	}
}

func TestFilterBetween(t *testing.T) {
	log := "VERSION 20070824\nR 4 1.000000 1 0x10 0x1 0x0 0\nMARK 2.000000 X is up\nW 4 3.000000 1 0x10 0x2 0x0 0\n" +
		"MARK 4.000000 X is down\nR 4 5.000000 1 0x10 0x3 0x0 0\nMAP 6.000000 2 0x20 0x1 0x10 0x0 0\n"
	f := &Filter{Between: [2]string{"is up", "is down"}}
	var out bytes.Buffer
	if _, err := FilterLog(context.Background(), strings.NewReader(log), &out, f, FilterOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "VERSION 20070824\nMARK 2.000000 X is up\nW 4 3.000000 1 0x10 0x2 0x0 0\nMARK 4.000000 X is down\nMAP 6.000000 2 0x20 0x1 0x10 0x0 0\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestFilterErrorLineNumber(t *testing.T) {
	log := genLog(5000, 3)
	lines := strings.Split(log, "\n")
	lines[4000] = "W 4 garbage"
	bad := strings.Join(lines, "\n")
	for _, workers := range []int{1, 3} {
		_, err := FilterLog(context.Background(), strings.NewReader(bad), &bytes.Buffer{}, &Filter{}, FilterOptions{Workers: workers, ChunkSize: 4096})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 4001 {
			t.Errorf("workers=%d: err %v, want line 4001", workers, err)
		}
		st, err := FilterLog(context.Background(), strings.NewReader(bad), &bytes.Buffer{}, &Filter{}, FilterOptions{Workers: workers, ChunkSize: 4096, KeepGoing: true})
		if err != nil || st.Skipped != 1 || !errors.As(st.FirstSkip, &pe) || pe.Line != 4001 {
			t.Errorf("workers=%d keep-going: err %v stats %+v", workers, err, st)
		}
	}
}

func TestBARMap(t *testing.T) {
	m := NewBARMap()
	for _, r := range readAll(t, genLog(10, 1)) {
		m.Observe(r)
	}
	loc, ok := m.Lookup(0xfebc00d8)
	if !ok || loc.BAR.Addr.String() != "0000:00:04.0" || loc.BAR.Index != 0 || loc.Offset != 0xd8 || loc.BAR.Driver != "e1000" {
		t.Fatalf("lookup: %+v %v", loc, ok)
	}
	loc, ok = m.Lookup(0xfebf1004)
	if !ok || loc.BAR.Addr.String() != "0000:00:05.0" || loc.BAR.Index != 0 || loc.Offset != 4 {
		t.Fatalf("lookup 2: %+v %v", loc.BAR, ok)
	}
	if _, ok := m.Lookup(0xc040); ok {
		t.Error("I/O BAR resolved as memory")
	}
	if mp, ok := m.Mapping(2); !ok || mp.Phys != 0xfebf1000 || mp.Len != 0x1000 {
		t.Errorf("mapping 2: %+v %v", mp, ok)
	}
	if _, ok := m.Mapping(1); ok {
		t.Error("mapping 1 still live after its UNMAP")
	}
	if mp, off, ok := m.MapOffset(2, 0xfebf1010); !ok || mp.ID != 2 || off != 0x10 {
		t.Errorf("MapOffset: %+v %#x %v", mp, off, ok)
	}
	if _, _, ok := m.MapOffset(2, 0xfebf2000); ok {
		t.Error("MapOffset beyond the mapping")
	}
	if _, ok := m.Mapping(7); ok {
		t.Error("unknown map id found")
	}
}

func TestParseBARRange(t *testing.T) {
	for _, s := range []string{"0000:00:04.0", "0000:00:04.0/9", "zz:00.0/0", "0000:00:04.0/0+0x10..0x8", "../../x/0", "8086:10/0"} {
		if _, err := ParseBARRange(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	br, err := ParseBARRange("8086:100e/0+0x0..0x100")
	if err != nil || !br.ByID || br.Vendor != 0x8086 || br.Device != 0x100e || br.Hi != 0x100 {
		t.Errorf("by id: %+v %v", br, err)
	}
}

func TestParsePCIAddr(t *testing.T) {
	good := map[string]string{"0000:00:04.0": "0000:00:04.0", "00:1f.7": "0000:00:1f.7", "0001:Ff:1F.3": "0001:ff:1f.3"}
	for in, want := range good {
		a, err := ParsePCIAddr(in)
		if err != nil || a.String() != want {
			t.Errorf("%q: %v %v", in, a, err)
		}
	}
	for _, in := range []string{"", "0000:00:20.0", "0000:00:04.8", "0000:00:04.0/", "../../../etc", "0000:00:04.0\n", "0000-00:04.0", " 000:00:04.0"} {
		if _, err := ParsePCIAddr(in); !errors.Is(err, ErrBadPCIAddr) {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestFilterMappedFile covers the zero-copy path: a regular file is
// mapped and cut in place; the result equals the sequential filter's, with
// and without a final newline.
func TestFilterMappedFile(t *testing.T) {
	log := genLog(40000, 9)
	if len(log) < 1<<20 {
		t.Fatalf("log too small (%d) to be mapped", len(log))
	}
	var kw KindSet
	kw.Add(KindWrite)
	f := &Filter{Kinds: kw, Widths: 1 << 4, Ranges: []AddrRange{{0xfebc0100, 0xfebc0200}}}
	for _, text := range []string{log, strings.TrimSuffix(log, "\n")} {
		p := filepath.Join(t.TempDir(), "x.log")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		st, err := FilterLog(context.Background(), fh, &out, f, FilterOptions{Workers: 3, ChunkSize: 64 << 10})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := naiveFilter(t, text, f)
		if out.String() != want {
			t.Fatalf("mapped filter differs (%d vs %d bytes)", out.Len(), len(want))
		}
		if st.Truncated != !strings.HasSuffix(text, "\n") || st.Lines != int64(strings.Count(log, "\n")) {
			t.Errorf("stats %+v", st)
		}
	}
}
