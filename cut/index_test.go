package cut

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// bigMMIO repeats the accesses of the e1000 log copies times, each copy
// shifted by 10 s: a log of copies*~0.5 MB spanning copies*10 s.
func bigMMIO(t testing.TB, copies int) []byte {
	data, err := os.ReadFile(mmioLog)
	if err != nil {
		t.Fatal(err)
	}
	var head, body []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") || strings.HasPrefix(l, "MARK ") || strings.HasPrefix(l, "MAP ") || strings.HasPrefix(l, "UNMAP ") {
			body = append(body, l)
		} else if l != "" {
			head = append(head, l)
		}
	}
	var b bytes.Buffer
	for _, l := range head {
		b.WriteString(l)
	}
	for c := 0; c < copies; c++ {
		for _, l := range body {
			f := strings.SplitN(l, " ", 4)
			i := 2
			if f[0] == "MARK" || f[0] == "MAP" || f[0] == "UNMAP" {
				i = 1
			}
			var sec, us int
			fmt.Sscanf(f[i], "%d.%d", &sec, &us)
			f[i] = fmt.Sprintf("%d.%06d", sec+10*c, us)
			if f[0] == "MARK" {
				f[len(f)-1] = strings.TrimSuffix(f[len(f)-1], "\n") + fmt.Sprintf(" #%d\n", c)
			}
			b.WriteString(strings.Join(f, " "))
		}
	}
	return b.Bytes()
}

func TestIndexSeeksAndMatchesFullRead(t *testing.T) {
	data := bigMMIO(t, 40) // ~20 MB, 400 s
	in := Input{Name: "big.log", ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
	ix, err := BuildIndex(context.Background(), in, 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := ix.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	ix2, err := UnmarshalIndex(enc)
	if err != nil {
		t.Fatal(err)
	}
	enc2, _ := ix2.MarshalBinary()
	if !bytes.Equal(enc, enc2) {
		t.Fatal("index does not round-trip")
	}
	t.Logf("%d bytes, %d checkpoints, %d metas, %d markers, index %d bytes", len(data), len(ix.Checkpoints), len(ix.Metas), len(ix.Markers), len(enc))
	// Per-source counts add up to what gawk would count (R+W+MARK lines).
	var total uint64
	for _, s := range ix2.Sources {
		total += s.Total
	}
	if want := uint64(bytes.Count(data, []byte("\nR ")) + bytes.Count(data, []byte("\nW ")) + bytes.Count(data, []byte("\nMARK "))); total != want {
		t.Errorf("sources count %d events, the log has %d", total, want)
	}
	rnd := rand.New(rand.NewSource(1))
	windows := [][2]string{
		{"100", "101"}, {"mark:vmlab: e1000 bound #17", "+5s"}, {"@300.5", "@302"}, {"", "3"}, {"395", ""}, {"1000", "1001"},
	}
	for i := 0; i < 20; i++ {
		a := rnd.Float64() * 420
		windows = append(windows, [2]string{fmt.Sprintf("%.6f", a), fmt.Sprintf("%.6f", a+rnd.Float64()*5+0.000001)})
	}
	for _, w := range windows {
		want, wres := doCut(t, in, w[0], w[1])
		cr := &countingReaderAt{r: bytes.NewReader(data)}
		got, gres := doCut(t, Input{Name: "big.log", ReaderAt: cr, Size: int64(len(data)), Index: ix2}, w[0], w[1])
		if !bytes.Equal(got, want) {
			t.Errorf("%s..%s: indexed cut differs (%d vs %d bytes)", w[0], w[1], len(got), len(want))
		}
		if !gres.Indexed || wres.Indexed {
			t.Errorf("%s..%s: indexed %v/%v", w[0], w[1], gres.Indexed, wres.Indexed)
		}
		// Read: the window's bytes plus at most two intervals, the head
		// check and the headers.
		limit := int64(len(want)) + 2*ix.Interval + headLen + 3*hashLen
		if n := cr.n.Load(); n > limit && w[0] != "" && w[1] != "" {
			t.Errorf("%s..%s: read %d bytes for a %d-byte cut (limit %d)", w[0], w[1], n, len(want), limit)
		}
	}
}

func TestIndexStale(t *testing.T) {
	data := bigMMIO(t, 8)
	in := Input{Name: "big.log", ReaderAt: bytes.NewReader(data), Size: int64(len(data)), ModTime: 100}
	ix, err := BuildIndex(context.Background(), in, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := doCut(t, in, "40", "41")
	for _, tc := range []struct {
		name   string
		modify func([]byte) []byte
		mtime  int64
		warn   string
	}{
		{"mtime", func(b []byte) []byte { return b }, 200, "modified"},
		{"size", func(b []byte) []byte { return append(b, "R 4 99.000000 1 0xfebc0008 0x0 0x0 0\n"...) }, 100, "indexes"},
		{"head", func(b []byte) []byte { b[bytes.Index(b, []byte("ata_piix"))+7] = 'y'; return b }, 100, "first bytes"},
		{"checkpoint", func(b []byte) []byte {
			// A byte of the data at the start checkpoint of the window.
			start, _ := ix.span(timerange.Window{From: ix.First + 40e9, HasFrom: true})
			b[start.Off+10] ^= 1
			return b
		}, 100, "changed where the index points"},
	} {
		mod := tc.modify(bytes.Clone(data))
		var warns []string
		spec, _ := timerange.ParseSpec("40", "41")
		var out bytes.Buffer
		res, err := Cut(context.Background(), Input{Name: "big.log", ReaderAt: bytes.NewReader(mod), Size: int64(len(mod)), ModTime: tc.mtime, Index: ix}, &out, Options{Window: spec, Warn: func(m string) { warns = append(warns, m) }})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Indexed || len(warns) != 1 || !strings.Contains(warns[0], tc.warn) {
			t.Errorf("%s: indexed %v, warnings %q", tc.name, res.Indexed, warns)
		}
		if tc.name == "mtime" && !bytes.Equal(out.Bytes(), want) {
			t.Errorf("%s: cut without the index differs", tc.name)
		}
	}
}

func TestReadIndexRejects(t *testing.T) {
	data := bigMMIO(t, 2)
	ix, err := BuildIndex(context.Background(), Input{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := ix.MarshalBinary()
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "magic"},
		{"truncated", enc[:len(enc)-9], "checksum"},
		{"flipped", func() []byte { b := bytes.Clone(enc); b[40] ^= 0x10; return b }(), "checksum"},
		{"version", func() []byte {
			b := bytes.Clone(enc[:len(enc)-4])
			b[8] = 9
			return append(b, le32(crc(b))...)
		}(), "version 9"},
	} {
		if _, err := UnmarshalIndex(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// FuzzReadIndex: any bytes decode to an error or to an index that
// re-encodes to the same bytes; never a panic or a huge allocation.
func FuzzReadIndex(f *testing.F) {
	data, err := os.ReadFile(eventsCap)
	if err != nil {
		f.Fatal(err)
	}
	ix, err := BuildIndex(context.Background(), Input{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}, 128)
	if err != nil {
		f.Fatal(err)
	}
	enc, _ := ix.MarshalBinary()
	f.Add(enc)
	f.Add(enc[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := UnmarshalIndex(b)
		if err != nil {
			return
		}
		enc, err := ix.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded index does not encode: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("round trip differs")
		}
		// Using it for a window never panics.
		ix.span(timerange.Window{From: 5, To: 10, HasFrom: true, HasTo: true})
		ix.Marker("x")
	})
}
