package detect

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// ptCounter counts the bytes read through it.
type ptCounter struct {
	r io.Reader
	n *int64
}

func (c ptCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// TestPTInputDump: a raw trace lists what libipt's ptdump lists for it
// (the corpus's .exp), streamed through the wrap (which sees every byte)
// and loaded alike; a perf.data has no stream of a CPU it did not trace.
func TestPTInputDump(t *testing.T) {
	const corpus = "../../shared/testdata/intelpt-libipt/call_direct-ret_compressed"
	want, err := os.ReadFile(corpus + "-ptdump.exp")
	if err != nil {
		t.Skipf("libipt corpus: %v", err)
	}
	const trace = "../intelpt/testdata/libipt/call_direct-ret_compressed.pt"
	size, _ := os.Stat(trace)
	for _, stream := range []bool{true, false} {
		in, err := OpenPT(trace, stream)
		if err != nil {
			t.Fatal(err)
		}
		var w bytes.Buffer
		var n int64
		wraps := 0
		sum, err := in.Dump(context.Background(), &w, in.Config(), intelpt.DumpOptions{}, intelpt.DumpInputOptions{File: trace, CPU: -1},
			func(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt) {
				wraps++
				if ra != nil {
					t.Error("Dump reads at offsets")
				}
				return ptCounter{r, &n}, ra
			})
		in.Close()
		if err != nil || w.String() != string(want) || len(sum.Loss()) != 0 {
			t.Errorf("stream %v: %v, loss %q:\n%s\nptdump lists:\n%s", stream, err, sum.Loss(), w.String(), want)
		}
		if stream && (wraps != 1 || n != size.Size()) || !stream && wraps != 0 {
			t.Errorf("stream %v: wrapped %d times, %d of %d bytes read through it", stream, wraps, n, size.Size())
		}
	}
	in, err := OpenPT("../intelpt/testdata/libipt/two-cpus.perf.data", true)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if sum, err := in.Dump(context.Background(), io.Discard, in.Config(), intelpt.DumpOptions{}, intelpt.DumpInputOptions{CPU: 5}, nil); err != nil || sum.Streams != 0 {
		t.Errorf("perf.data, cpu 5: %d streams, %v", sum.Streams, err)
	}
}

// ptdumpCounts are the packets by name, the PSBs and the decoding errors
// libipt's ptdump lists in exp (its output without options:
// "OFFSET  NAME  PAYLOAD" lines, "[OFFSET: error decoding packet: ...]").
func ptdumpCounts(exp []byte) (byName map[string]int64, errs int64) {
	byName = map[string]int64{}
	for _, l := range strings.Split(string(exp), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case strings.HasPrefix(l, "[") && strings.Contains(l, ": error decoding packet"):
			errs++
		case len(f) >= 2 && !strings.HasPrefix(l, "["):
			byName[f[1]]++
		}
	}
	return byName, errs
}

// TestPTInputStatsLibipt: the statistics of each raw trace of libipt's
// corpus decoded without options, streamed and loaded, count the packets
// of each kind, the PSBs, the overflows and the decoding errors that
// libipt's ptdump lists for it (NAME-ptdump.exp), and the bytes of the
// file.
func TestPTInputStatsLibipt(t *testing.T) {
	const corpus = "../../shared/testdata/intelpt-libipt/"
	manifest, err := os.ReadFile(corpus + "MANIFEST.tsv")
	if err != nil {
		t.Skipf("libipt corpus: %v", err)
	}
	tested := 0
	for _, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[1] != "-" || f[3] != "-" {
			continue // a CPU or ptdump options: not ptdump's plain listing
		}
		exp, err := os.ReadFile(corpus + f[0] + "-ptdump.exp")
		if err != nil {
			t.Fatal(err)
		}
		trace := corpus + f[0] + ".pt"
		st, err := os.Stat(trace)
		if err != nil {
			t.Fatal(err)
		}
		byName, errs := ptdumpCounts(exp)
		var total int64
		for _, n := range byName {
			total += n
		}
		for _, stream := range []bool{true, false} {
			in, err := OpenPT(trace, stream)
			if err != nil {
				t.Fatalf("%s: %v", trace, err)
			}
			items, err := in.Stats(context.Background(), in.Config(), 1, nil)
			in.Close()
			if errors.Is(err, intelpt.ErrNoPSB) && byName["psb"] == 0 {
				continue // ptdump lists nothing either
			}
			if err != nil || len(items) != 1 {
				t.Errorf("%s (streamed %v): %d items, %v", f[0], stream, len(items), err)
				continue
			}
			s := items[0].Stats
			got := map[string]int64{}
			for _, k := range intelpt.Kinds() {
				if n := s.Count(k); n != 0 {
					got[k.String()] = n
				}
			}
			if !reflect.DeepEqual(got, byName) || s.Packets != total || s.PSBs != byName["psb"] || s.Overflows != byName["ovf"] ||
				s.Errors != errs || s.Bytes != st.Size() {
				t.Errorf("%s (streamed %v): packets %v (%d), PSBs %d, overflows %d, errors %d, %d bytes; ptdump lists %v (%d), %d errors, the file has %d bytes",
					f[0], stream, got, s.Packets, s.PSBs, s.Overflows, s.Errors, s.Bytes, byName, total, errs, st.Size())
			}
		}
		tested++
	}
	t.Logf("%d traces compared with ptdump", tested)
	if tested < 50 {
		t.Errorf("%d traces of the corpus compared, want the corpus's plain ones (50 or more)", tested)
	}
}

// TestPTInputDumpWorkers: a raw file of 16 MiB or more listed by
// segments on two goroutines (the wrap's ReaderAt reading it) lists
// what one pass lists (itself checked against libipt's ptdump): the same
// bytes (CRC-32 and length of the 160 MB listings), a line per packet of
// each copy of the libipt trace it repeats.
func TestPTInputDumpWorkers(t *testing.T) {
	one, err := os.ReadFile("../intelpt/testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	copies := int(intelpt.ParallelStatsMin)/len(one) + 1
	trace := filepath.Join(t.TempDir(), "big.pt")
	if err := os.WriteFile(trace, bytes.Repeat(one, copies), 0o600); err != nil {
		t.Fatal(err)
	}
	var out [2]listingSum
	for i, workers := range []int{1, 2} {
		in, err := OpenPT(trace, true)
		if err != nil {
			t.Fatal(err)
		}
		at := false
		sum, err := in.Dump(context.Background(), &out[i], in.Config(), intelpt.DumpOptions{}, intelpt.DumpInputOptions{File: trace, CPU: -1, Workers: workers},
			func(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt) {
				at = ra != nil
				return r, ra
			})
		in.Close()
		if err != nil || sum.Loss() != nil {
			t.Fatalf("%d workers: %v, loss %q", workers, err, sum.Loss())
		}
		if at != (workers > 1) {
			t.Errorf("%d workers: read at offsets %v", workers, at)
		}
	}
	if out[0] != out[1] {
		t.Fatalf("two workers list %+v, one pass %+v", out[1], out[0])
	}
	if want := int64(7 * copies); out[1].lines != want { // psb fup mode.exec psbend tnt.8 fup tip.pgd
		t.Errorf("%d lines, want %d", out[1].lines, want)
	}
}

// listingSum sums up what is written to it.
type listingSum struct {
	crc          uint32
	bytes, lines int64
}

func (s *listingSum) Write(b []byte) (int, error) {
	s.crc = crc32.Update(s.crc, crc32.IEEETable, b)
	s.bytes += int64(len(b))
	s.lines += int64(bytes.Count(b, []byte{'\n'}))
	return len(b), nil
}

// TestPTInputStats: a raw file streamed has the statistics of the same
// file loaded, read through the wrap with its ReaderAt (both checked
// against libipt's ptdump by TestPTInputStatsLibipt); a perf.data has
// one item per stream; standard input without a PSB is ErrNoPSB naming
// "-".
func TestPTInputStats(t *testing.T) {
	const trace = "../intelpt/testdata/libipt/dump-all-packets.pt"
	loaded, err := OpenPT(trace, false)
	if err != nil {
		t.Fatal(err)
	}
	want := intelpt.InputStats(loaded.Loaded, trace, intelpt.Config{})
	in, err := OpenPT(trace, true)
	if err != nil {
		t.Fatal(err)
	}
	gotAt := false
	got, err := in.Stats(context.Background(), intelpt.Config{}, 1, func(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt) {
		gotAt = ra != nil
		return r, ra
	})
	in.Close()
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got, want) || !gotAt {
		t.Errorf("streamed %+v, %v (ReaderAt %v); loaded %+v", got, err, gotAt, want)
	}

	perf, err := OpenPT("../intelpt/testdata/libipt/two-cpus.perf.data", true)
	if err != nil {
		t.Fatal(err)
	}
	defer perf.Close()
	if items, err := perf.Stats(context.Background(), perf.Config(), 0, nil); err != nil || len(items) != 2 || items[0].Name != "cpu 0" {
		t.Errorf("perf.data: %+v, %v", items, err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "zeros"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 300))
	f.Seek(0, 0)
	defer func(s *os.File) { os.Stdin = s; f.Close() }(os.Stdin)
	os.Stdin = f
	stdin, err := OpenPT("-", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Stats(context.Background(), intelpt.Config{}, 0, nil); !errors.Is(err, intelpt.ErrNoPSB) || !strings.HasPrefix(err.Error(), "-: ") {
		t.Errorf("stdin without PSB: %v", err)
	}
}

// TestPTInputStatsNegativeWorkers: PTInput.Stats refuses negative workers
// as an *intelpt.ArgError for a raw trace and a perf.data alike (the
// perf.data's streams took no notice of it).
func TestPTInputStatsNegativeWorkers(t *testing.T) {
	for _, path := range []string{"../intelpt/testdata/libipt/ovf.pt", "../intelpt/testdata/libipt/two-cpus.perf.data"} {
		in, err := OpenPT(path, true)
		if err != nil {
			t.Fatal(err)
		}
		_, err = in.Stats(context.Background(), in.Config(), -2, nil)
		in.Close()
		var ae *intelpt.ArgError
		if !errors.As(err, &ae) || ae.Field != "PTInput.Stats workers" || ae.Value != -2 {
			t.Errorf("%s: workers -2: %v (%T), want an *intelpt.ArgError", path, err, err)
		}
		in, _ = OpenPT(path, true)
		if items, err := in.Stats(context.Background(), in.Config(), 0, nil); err != nil || len(items) == 0 {
			t.Errorf("%s: workers 0: %v, %d streams", path, err, len(items))
		}
		in.Close()
	}
}
