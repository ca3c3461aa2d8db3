package cut

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/timerange"
)

// writeIndexed writes data to path through an IndexWriter in random
// chunks. When the indexer has written its second partial index, kill
// is called (with the bytes written so far): what a capture killed then
// leaves is the file as it is and its index as it is.
func writeIndexed(t *testing.T, path string, f Format, data []byte, o IndexWriterOptions, kill func(written int)) {
	t.Helper()
	file, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	iw, err := NewIndexWriter(file, path, f, o)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewSource(int64(len(data))))
	killed := false
	for off := 0; off < len(data); {
		n := min(1+rnd.Intn(64<<10), len(data)-off)
		if _, err := iw.Write(data[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
		if !killed && off > len(data)/2 {
			// wait (without a deadline that matters) for the indexer's
			// second partial index
			caughtUp := func() bool {
				iw.mu.Lock()
				defer iw.mu.Unlock()
				return iw.partials >= 2 && iw.indexed+o.Every >= int64(off)
			}
			for i := 0; !caughtUp() && i < 60000; i++ {
				time.Sleep(time.Millisecond)
			}
			if iw.Partials() < 2 {
				t.Fatal("no partial index written")
			}
			kill(off)
			killed = true
		}
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIndexWriter writes an mmiotrace log, a pcapng and an events file
// through an IndexWriter as a capture does: the index it leaves when the
// writing ends is byte for byte BuildIndex's of the finished file; the
// index it had written when the writing was half done (a capture killed
// then: the file as it was, the last partial index) is used by cut, which
// writes for every window exactly what it writes without the index,
// reading little more than the window and the part written after the
// index; a copy changed inside the indexed part, or shorter than it, is
// refused with a warning.
func TestIndexWriter(t *testing.T) {
	pcap, err := os.ReadFile(pcapngCap)
	if err != nil {
		t.Fatal(err)
	}
	var ev strings.Builder
	for i := 0; i < 40000; i++ {
		fmt.Fprintf(&ev, `{"ts":%d,"cpu":%d,"pid":7,"name":"app_req","fields":{"id":%d}}`+"\n", 1_000_000_000+int64(i)*2_500_000, i%2, i)
		if i%5000 == 0 {
			fmt.Fprintf(&ev, `{"ts":%d,"cpu":0,"pid":7,"name":"iotap_marker","fields":{"mono":1,"text":"m%d"}}`+"\n", 1_000_000_000+int64(i)*2_500_000, i)
		}
	}
	for _, c := range []struct {
		name    string
		f       Format
		data    []byte
		o       IndexWriterOptions
		windows [][2]string
	}{
		{"mmio.log", FormatMMIO, bigMMIO(t, 8), IndexWriterOptions{Interval: 64 << 10, Every: 256 << 10},
			[][2]string{{"10", "12"}, {"30", "+2s"}, {"10.3", "10.6"}, {"60", "61"}, {"", "2"}, {"75", ""}, {"200", "201"}}},
		{"usb.pcapng", FormatPcapng, pcap, IndexWriterOptions{Interval: 4 << 10, Every: 16 << 10},
			[][2]string{{"0.5", "1"}, {"2", "+0.5s"}, {"", "0.2"}, {"3", ""}}},
		{"events.ndjson", FormatEvents, []byte(ev.String()), IndexWriterOptions{Interval: 64 << 10, Every: 512 << 10},
			[][2]string{{"10", "11"}, {"40", "+2s"}, {"70", "71"}, {"99", ""}, {"mark:m5000", "+1s"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.name)
			killed := filepath.Join(dir, "killed-"+c.name)
			writeIndexed(t, path, c.f, c.data, c.o, func(written int) {
				idx, err := os.ReadFile(path + IndexSuffix)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(killed, c.data[:written], 0o600)
				os.WriteFile(killed+IndexSuffix, idx, 0o600)
			})
			// the complete index: BuildIndex's
			in, closer, err := OpenFile(path, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := BuildIndex(context.Background(), in, c.o.Interval)
			closer.Close()
			if err != nil {
				t.Fatal(err)
			}
			wb, _ := want.MarshalBinary()
			got, err := os.ReadFile(path + IndexSuffix)
			if err != nil || !bytes.Equal(got, wb) {
				t.Fatalf("the index written (%d bytes, %v) is not BuildIndex's (%d bytes)", len(got), err, len(wb))
			}
			// the killed capture's
			var warned []string
			warn := func(s string) { warned = append(warned, s) }
			in, closer, err = OpenFile(killed, true, warn)
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			ix := in.Index
			if ix == nil || !ix.Partial || ix.Size >= in.Size || ix.Size < in.Size/4 {
				t.Fatalf("killed capture of %d bytes: index %+v", in.Size, ix)
			}
			data := c.data[:in.Size]
			tail := in.Size - ix.Size
			for _, w := range c.windows {
				plain := in
				plain.Index = nil
				wantCut, wres, werr := tryCut(t, plain, w[0], w[1])
				cr := &countingReaderAt{r: bytes.NewReader(data)}
				withIx := in
				withIx.ReaderAt = cr
				gotCut, gres, gerr := tryCut(t, withIx, w[0], w[1])
				if fmt.Sprint(gerr) != fmt.Sprint(werr) || gres.Lost != wres.Lost || gres.Truncated != wres.Truncated {
					// the file ends inside a record: the same loss either way
					t.Errorf("%s..%s: error %v, lost %d, truncated %d with the partial index; %v, %d, %d without", w[0], w[1], gerr, gres.Lost, gres.Truncated, werr, wres.Lost, wres.Truncated)
				}
				if !bytes.Equal(gotCut, wantCut) || gres.Events != wres.Events {
					t.Errorf("%s..%s: the cut with the partial index differs (%d vs %d bytes)", w[0], w[1], len(gotCut), len(wantCut))
				}
				if !gres.Indexed {
					t.Errorf("%s..%s: the partial index was not used", w[0], w[1])
				}
				limit := int64(len(wantCut)) + 2*ix.Interval + tail + headLen + 3*hashLen + 64<<10
				if n := cr.n.Load(); n > limit && w[0] != "" && w[1] != "" && !strings.HasPrefix(w[0], "mark:") {
					t.Errorf("%s..%s: read %d bytes for a %d-byte cut (limit %d)", w[0], w[1], n, len(wantCut), limit)
				}
				t.Logf("%s..%s: %d events, %d of %d bytes read with the partial index of %d bytes (error: %v)", w[0], w[1], gres.Events, cr.n.Load(), len(data), ix.Size, gerr)
			}
			if len(warned) > 0 {
				t.Errorf("warnings: %q", warned)
			}
			// changed inside the indexed part, or shorter than it: refused
			changed := bytes.Clone(data)
			changed[ix.Size/2] ^= 1
			if ix.Size/2 >= headLen {
				changed[headLen/2] ^= 1 // in the first 64 KiB, which is always checked
			}
			shorter := data[:ix.Size-1]
			for _, bad := range [][]byte{changed, shorter} {
				warned = nil
				b := in
				b.ReaderAt, b.Size = bytes.NewReader(bad), int64(len(bad))
				plain := b
				plain.Index = nil
				w := c.windows[1]
				wantCut, _, _ := tryCut(t, plain, w[0], w[1])
				spec, _ := timerange.ParseSpec(w[0], w[1])
				var out bytes.Buffer
				res, err := Cut(context.Background(), b, &out, Options{Window: spec, Warn: warn})
				if err != nil && !strings.Contains(err.Error(), "cut short") {
					t.Fatal(err)
				}
				var ignored []string
				for _, m := range warned {
					if !strings.Contains(m, "ends inside a record") { // the killed capture's half record
						ignored = append(ignored, m)
					}
				}
				if res.Indexed || len(ignored) != 1 || !strings.Contains(ignored[0], "index ignored") || !bytes.Equal(out.Bytes(), wantCut) {
					t.Errorf("a changed or shorter input: indexed %v, warnings %q, same cut %v", res.Indexed, warned, bytes.Equal(out.Bytes(), wantCut))
				}
			}
		})
	}
}

func tryCut(t testing.TB, in Input, from, to string) ([]byte, *Result, error) {
	t.Helper()
	spec, err := timerange.ParseSpec(from, to)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Cut(context.Background(), in, &out, Options{Window: spec, Warn: func(m string) { t.Logf("warning: %s", m) }})
	return out.Bytes(), res, err
}
