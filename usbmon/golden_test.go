package usbmon

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden tests over the kernel's own output recorded in the lab
// (testdata/usbmon at the module root, see its README.md).

func labFile(name string) string { return filepath.Join("..", "testdata", "usbmon", name) }

// TestGoldenTextRoundTrip: every line the kernel printed comes back byte
// for byte after parsing and writing.
func TestGoldenTextRoundTrip(t *testing.T) {
	for _, c := range []struct {
		file string
		f    Format
	}{{"lab-0u.txt", Format1u}, {"lab-hidbus-t.txt", Format1t}, {"lab-capture.0u", Format1u}} {
		in, err := os.ReadFile(labFile(c.file))
		if err != nil {
			t.Fatal(err)
		}
		r, f, err := NewReader(bytes.NewReader(in))
		if err != nil || f != c.f {
			t.Fatalf("%s: format %v, %v", c.file, f, err)
		}
		var out bytes.Buffer
		w := NewTextWriter(&out, f)
		var ev Event
		n := 0
		for {
			err := r.ReadInto(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			w.Write(&ev)
			n++
		}
		w.Flush()
		if !bytes.Equal(out.Bytes(), in) {
			a, b := strings.Split(string(in), "\n"), strings.Split(out.String(), "\n")
			for i := range a {
				if i >= len(b) || a[i] != b[i] {
					t.Fatalf("%s line %d:\nkernel %q\n  ours %q", c.file, i+1, a[i], b[min(i, len(b)-1)])
				}
			}
		}
		if n < 50 {
			t.Fatalf("%s: only %d events", c.file, n)
		}
		t.Logf("%s: %d lines identical", c.file, n)
	}
}

func linesOf(t *testing.T, evs []*Event, f Format) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = stripStamp(strings.TrimSuffix(string(AppendText(nil, ev, f, nil)), "\n"))
	}
	return out
}

func readEvents(t *testing.T, r Reader) []*Event {
	var evs []*Event
	for {
		ev, err := r.Read()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// TestGoldenBinaryAgreesWithText: the kernel's binary stream (read(2),
// 48-byte headers) and its 0u text of the same moment show the same events.
// Compared as '1t' lines, since 48-byte headers have no interval.
func TestGoldenBinaryAgreesWithText(t *testing.T) {
	fh, err := os.Open(labFile("lab-usbmon0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	br, _ := NewBinaryReader(fh, HeaderLen48, binary.LittleEndian)
	bin := readEvents(t, br)
	tf, _ := os.Open(labFile("lab-0u.txt"))
	defer tf.Close()
	tr, _, err := NewReader(tf)
	if err != nil {
		t.Fatal(err)
	}
	txt := readEvents(t, tr)
	a, b := linesOf(t, txt, Format1t), linesOf(t, bin, Format1t)
	un, outside, gaps, first, last := subsequence(a, b)
	t.Logf("%d text events, %d binary; unmatched %d (+%d outside), gaps %d, binary %d..%d", len(a), len(b), un, outside, gaps, first+1, last+1)
	if un != 0 || gaps != 0 || outside > 5 || len(a) < 100 {
		t.Fatalf("binary and text disagree")
	}
	// The binary stream has the whole 16 KiB of each bulk read: the disk's
	// sectors as the lab wrote them.
	found := false
	for _, ev := range bin {
		if ev.Transfer == Bulk && ev.In && ev.Type == Callback && len(ev.Data) == 16384 {
			found = bytes.HasPrefix(ev.Data, []byte("vmlab d"))
			break
		}
	}
	if !found {
		t.Fatal("no 16 KiB bulk-in callback with the disk pattern")
	}
}

// TestGoldenLabCapture: iotap's own mmap capture and the kernel's 0u text
// recorded at the same time (TestLabCapture) agree line for line in '1u'.
func TestGoldenLabCapture(t *testing.T) {
	bin := readAll(t, labFile("lab-capture.pcapng"))
	tf, _ := os.Open(labFile("lab-capture.0u"))
	defer tf.Close()
	tr, _, err := NewReader(tf)
	if err != nil {
		t.Fatal(err)
	}
	txt := readEvents(t, tr)
	a, b := linesOf(t, txt, Format1u), linesOf(t, bin, Format1u)
	// The readers were stopped one after the other: the tails may differ
	// by the events of that moment.
	if d := len(a) - len(b); d > 5 || d < -5 || len(a) < 100 {
		t.Fatalf("%d text events, %d binary", len(a), len(b))
	}
	for i := range a[:min(len(a), len(b))] {
		if a[i] != b[i] {
			t.Fatalf("event %d:\n text %q\n  bin %q", i+1, a[i], b[i])
		}
	}
}
