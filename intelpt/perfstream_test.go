package intelpt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// chunkedPerfData writes the traces (one per CPU) into a perf.data as perf
// record does, each in AUXTRACE records of random sizes (1 byte up to
// max), the CPUs' records interleaved and separated by AUX records, so
// that packets run from one record into the next of their stream with
// other CPUs' records and other records between.
func chunkedPerfData(rng *rand.Rand, traces [][]byte, max int) []byte {
	var w perfWriter
	priv := make([]uint64, 17)
	priv[ptInfoPMUType] = 8
	w.auxtraceInfo(priv)
	offs := make([]int, len(traces))
	for left := true; left; {
		left = false
		for cpu, tr := range traces {
			if offs[cpu] == len(tr) {
				continue
			}
			left = true
			n := min(1+rng.IntN(max), len(tr)-offs[cpu])
			w.auxtrace(int32(cpu), 7, uint32(cpu), tr[offs[cpu]:offs[cpu]+n])
			offs[cpu] += n
			if rng.IntN(3) == 0 {
				w.aux(0)
			}
		}
	}
	return w.file(8, 0)
}

// samePerfTrace checks that the streams OpenPerfDataPT reads from b (in
// reads of every size, one byte at a time too) are PerfDataPTTruncated's,
// with the same configuration and loss.
func samePerfTrace(t *testing.T, b []byte) {
	t.Helper()
	want, werr := PerfDataPTTruncated(b)
	got, gerr := OpenPerfDataPT(bytes.NewReader(b), int64(len(b)))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("OpenPerfDataPT: %v; PerfDataPTTruncated: %v", gerr, werr)
	}
	if gerr != nil {
		if !errors.Is(gerr, ErrPerfData) {
			t.Fatalf("unwrapped error %v", gerr)
		}
		return
	}
	if len(got.Streams) != len(want.Streams) || got.Truncated != want.Truncated || got.Config != want.Config ||
		got.LossSummary() != want.LossSummary() || (got.TimeConv == nil) != (want.TimeConv == nil) {
		t.Fatalf("got %d streams, %q, %+v, %q; want %d, %q, %+v, %q", len(got.Streams), got.Truncated, got.Config, got.LossSummary(),
			len(want.Streams), want.Truncated, want.Config, want.LossSummary())
	}
	for i := range want.Streams {
		g, w := &got.Streams[i], &want.Streams[i]
		if g.CPU != w.CPU || g.TID != w.TID || g.Idx != w.Idx || g.Len() != int64(len(w.Data)) || g.Data != nil {
			t.Fatalf("stream %d: %+v, want %+v (%d bytes)", i, g, w, len(w.Data))
		}
		for _, r := range []io.Reader{g.Reader(), iotest.OneByteReader(g.Reader()), iotest.HalfReader(g.Reader())} {
			data, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(data, w.Data) {
				t.Fatalf("stream %d: %d bytes, %v; want %d bytes", i, len(data), err, len(w.Data))
			}
		}
	}
}

// TestOpenPerfDataPT: the streams read from the file are those cut out
// of it whole (PerfDataPT's, the reference checked against perf script's
// listing by the perf.data tests), on two CPUs' traces in AUXTRACE records
// of random sizes, cut short at every length, and on the recorded test
// files.
func TestOpenPerfDataPT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tr [2][]byte
	for i := range tr {
		tr[i], _ = os.ReadFile(filepath.Join("testdata/libipt", []string{"ovf.pt", "dump-all-packets.pt"}[i]))
		if len(tr[i]) == 0 {
			t.Skip("testdata/libipt not available")
		}
	}
	b := chunkedPerfData(rng, tr[:], 5)
	samePerfTrace(t, b)
	for cut := 0; cut < len(b); cut += 3 {
		samePerfTrace(t, b[:cut])
	}
	files, _ := filepath.Glob("testdata/libipt/*.perf.data")
	files2, _ := filepath.Glob("../perfdata/testdata/*.data")
	for _, f := range append(files, files2...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { samePerfTrace(t, b) })
	}
}

// TestPerfStreamChangedFile: a file that no longer holds what the first
// reading found is an error naming the offset, not a shorter stream.
func TestPerfStreamChangedFile(t *testing.T) {
	var w perfWriter
	w.auxtraceInfo(make([]uint64, 17))
	w.auxtrace(0, 1, 0, bytes.Repeat([]byte{0x02, 0x82}, 8))
	w.auxtrace(1, 1, 1, []byte{0, 0, 0})
	w.auxtrace(0, 1, 0, []byte{0, 0, 0, 0})
	b := w.file(8, 0)
	pt, err := OpenPerfDataPT(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(pt.Streams) != 2 || pt.Streams[0].Size != 20 {
		t.Fatalf("%v %+v", err, pt)
	}
	// the CPU of the last record changes from 0 to 2
	last := len(b) - 4 - perfAuxtraceRecSize
	b[last+40] = 2
	if _, err := io.ReadAll(pt.Streams[0].Reader()); !errors.Is(err, ErrPerfData) {
		t.Fatalf("changed file: %v", err)
	}
}

// TestPerfDataFileJobs: pt dump's listing (text and NDJSON) and pt
// stats' statistics of a perf.data read from its file are those of the
// same perf.data read whole, on two CPUs' traces of libipt's corpus in
// AUXTRACE records of up to 7 and 4096 bytes.
func TestPerfDataFileJobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tr [2][]byte
	for i, n := range []string{"apl11.pt", "skd010-tip.pt"} {
		tr[i], _ = os.ReadFile(filepath.Join(corpusDir, n))
		if len(tr[i]) == 0 {
			t.Skipf("libipt corpus not available")
		}
	}
	for _, max := range []int{7, 4096} {
		b := chunkedPerfData(rng, tr[:], max)
		whole, err := ParseInput(b)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "perf.data")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		pf, err := OpenPerfDataFile(p)
		if err != nil {
			t.Fatal(err)
		}
		file, err := PerfInput(pf.PerfTrace)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []DumpInputOptions{{File: "f", CPU: -1}, {File: "f", CPU: -1, JSON: true}, {CPU: 1}} {
			var a, c bytes.Buffer
			sa, errA := DumpInput(&a, whole, whole.Config(), DumpOptions{LastIP: true}, o)
			sc, errC := DumpInput(&c, file, file.Config(), DumpOptions{LastIP: true}, o)
			if errA != nil || errC != nil || a.String() != c.String() || sa.Errors != sc.Errors || len(sa.Loss()) != len(sc.Loss()) {
				t.Fatalf("max %d %+v: listing differs (%v, %v)\n%s\n---\n%s", max, o, errA, errC, a.String(), c.String())
			}
		}
		sa := InputStats(whole, "f", Config{})
		sc, err := ReadInputStats(context.Background(), file, "f", Config{})
		if err != nil {
			t.Fatal(err)
		}
		var a, c bytes.Buffer
		WriteStats(&a, "f", sa, whole.Perf, true)
		WriteStats(&c, "f", sc, file.Perf, true)
		if a.String() != c.String() {
			t.Fatalf("stats differ:\n%s\n%s", a.String(), c.String())
		}
		pf.Close()
	}
}

func FuzzOpenPerfDataPT(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	f.Add(chunkedPerfData(rng, [][]byte{{0x02, 0x82, 0x02, 0x82, 0, 0, 0}, {1, 2, 3}}, 2))
	if b, err := os.ReadFile("testdata/libipt/two-cpus.perf.data"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { samePerfTrace(t, b) })
}

// TestPerfStreamMap: Map gives the flow decoders the stream's bytes: a
// stream of one AUXTRACE record mapped from the perf.data itself, one of
// several records mapped from a temporary copy that is already gone from
// the temporary directory; a raw trace file mapped whole.
func TestPerfStreamMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tr, err := os.ReadFile(filepath.Join(corpusDir, "apl11.pt"))
	if err != nil {
		t.Skip("libipt corpus not available")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, max := range []int{len(tr), 100} {
		b := chunkedPerfData(rng, [][]byte{tr}, max)
		p := filepath.Join(t.TempDir(), "perf.data")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		pf, err := OpenPerfDataFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := &pf.Streams[0]
		m, err := s.Map()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.Data, tr) || m.Mapped() != canMap {
			t.Fatalf("records of %d bytes: %d bytes mapped (%v), want %d", max, len(m.Data), m.Mapped(), len(tr))
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("records of %d bytes: %d temporary files left", max, len(left))
		}
		m.DropBefore(int64(len(tr))) // dropped pages read again from the file
		if !bytes.Equal(m.Data, tr) {
			t.Fatal("dropped pages differ")
		}
		m.Close()
		pf.Close()
	}
	rs, err := RawFileStream(filepath.Join(corpusDir, "apl11.pt"), 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	m, err := rs.Map()
	if err != nil || !bytes.Equal(m.Data, tr) || rs.Len() != int64(len(tr)) {
		t.Fatalf("raw file: %v, %d bytes", err, len(m.Data))
	}
	m.Close()
	if got, err := io.ReadAll(rs.Reader()); err != nil || !bytes.Equal(got, tr) {
		t.Fatalf("raw file reader: %v", err)
	}
}
