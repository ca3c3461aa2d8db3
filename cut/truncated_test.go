package cut

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// A capture killed inside a pcapng block (or a pcap record): the cut
// holds the packets before it, the half block is counted as one lost
// event when the window reaches it, and the index and the indexed cut
// take the same view. Oracle: tshark, which reads the complete packets of
// the truncated file and prints them before it reports the cut-short one.
func TestCutTruncated(t *testing.T) {
	data := bigPcapng(t, 3) // three copies 20 s apart, an ISB after each
	le := binary.LittleEndian
	// drop the last ISB (36 bytes), then cut the last packet block in half
	data = data[:len(data)-36]
	var lastOff int
	for off := 0; off+12 <= len(data); off += int(le.Uint32(data[off+4:])) {
		lastOff = off
	}
	half := (len(data) - lastOff) / 2
	for _, c := range []struct {
		name string
		data []byte
		at   int64
	}{
		{"mid-block", data[:lastOff+half], int64(lastOff)},
		{"mid-header", data[:lastOff+7], int64(lastOff)},
	} {
		t.Run(c.name, func(t *testing.T) {
			size := int64(len(c.data))
			in := Input{Name: "killed.pcapng", ReaderAt: bytes.NewReader(c.data), Size: size}
			ix, err := BuildIndex(t.Context(), in, 64<<10)
			if err != nil {
				t.Fatalf("index of a truncated capture: %v", err)
			}
			whole := append([]byte(nil), c.data[:c.at]...)
			for _, w := range []struct {
				from, to string
				lost     uint64
			}{
				{"", "", 1},     // to the end: the half block is lost
				{"30", "", 1},   // the last copy
				{"", "30", 0},   // the first two copies: the end is outside
				{"100", "", 0},  // after the end: an empty file, nothing lost in it
				{"45", "46", 0}, // a window before the last record
			} {
				got, res := doCut(t, in, w.from, w.to)
				// the same window of the file without the half block: the
				// same bytes, and its drops (ISBs) plus the half block
				clean, cres := doCut(t, Input{Name: "clean.pcapng", ReaderAt: bytes.NewReader(whole), Size: int64(len(whole))}, w.from, w.to)
				if res.Lost != cres.Lost+w.lost || !bytes.Equal(got, clean) {
					t.Errorf("%s..%s: lost %d, want %d+%d; %d bytes, want %d", w.from, w.to, res.Lost, cres.Lost, w.lost, len(got), len(clean))
				}
				if res.TruncatedAt != c.at || res.Truncated != size-c.at {
					if w.to == "" {
						t.Errorf("%s..%s: truncated %d bytes at %d, want %d at %d", w.from, w.to, res.Truncated, res.TruncatedAt, size-c.at, c.at)
					}
				}
				if w.from == "" && w.to == "" && !bytes.Equal(got, whole) {
					t.Errorf("whole cut: %d bytes, want the %d before the half block", len(got), len(whole))
				}
				if w.from == "" && w.to == "" && res.Lost != 11 { // two ISBs' 10 drops and the half block
					t.Errorf("whole cut: lost %d, want 11", res.Lost)
				}
				ixGot, ixRes := doCut(t, Input{Name: in.Name, ReaderAt: bytes.NewReader(c.data), Size: size, Index: ix}, w.from, w.to)
				if !bytes.Equal(ixGot, got) || !ixRes.Indexed || ixRes.Lost != res.Lost {
					t.Errorf("%s..%s: indexed cut differs (%d vs %d bytes, lost %d vs %d, indexed %v)", w.from, w.to, len(ixGot), len(got), ixRes.Lost, res.Lost, ixRes.Indexed)
				}
			}
			if _, err := exec.LookPath("tshark"); err != nil {
				t.Skip("tshark not installed")
			}
			p := writeTemp(t, "killed.pcapng", c.data)
			want, _ := exec.Command("tshark", "-r", p, "-Y", "frame.time_relative >= 30", "-T", "fields", "-e", "frame.time_epoch", "-e", "usb.urb_id").Output()
			got, _ := doCut(t, in, "30", "")
			q := writeTemp(t, "cut.pcapng", got)
			have := run(t, "tshark", "-r", q, "-T", "fields", "-e", "frame.time_epoch", "-e", "usb.urb_id")
			if have != string(want) || have == "" {
				t.Errorf("cut 30..: %d packets, tshark reads %d of the truncated file", strings.Count(have, "\n"), strings.Count(string(want), "\n"))
			}
		})
	}
	// The error itself says what it is.
	in := Input{Name: "x.pcapng", ReaderAt: bytes.NewReader(data[:lastOff+7]), Size: int64(lastOff + 7)}
	sc := newScanner(FormatPcapng)
	sc.reset(bytes.NewReader(data[:lastOff+7]), 0, NoTime)
	var u unit
	var err error
	for err == nil {
		_, err = sc.next(&u)
	}
	if !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrFormat) {
		t.Errorf("%s: %v is not ErrTruncated", in.Name, err)
	}
}

// A capture killed inside its first blocks (no timed record before the
// half block) is cut, not refused as an empty window, and its half block
// is one lost event: a pcapng cut inside its section header and inside
// its first packet, and a mmiotrace log cut inside its last line (the
// window covering it), whose record mmiotrace.Reader also says is lost.
func TestCutTruncatedEarly(t *testing.T) {
	pcapng, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log = log[:len(log)-1]                           // its last line without its newline
	cutLog := log[:bytes.LastIndexByte(log, '\n')+7] // "MARK 1" of its last line
	for _, c := range []struct {
		name string
		data []byte
		at   int64
	}{
		{"pcapng-20", pcapng[:20], 0},
		{"pcapng-100", pcapng[:100], int64(binary.LittleEndian.Uint32(pcapng[4:]))}, // inside the block after the SHB
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Name: c.name, ReaderAt: bytes.NewReader(c.data), Size: int64(len(c.data))}
			_, res := doCut(t, in, "0", "100")
			if res.Lost != 1 || res.TruncatedAt != c.at || res.Truncated != int64(len(c.data))-c.at {
				t.Errorf("lost %d, truncated %d bytes at %d; want 1 lost, %d bytes at %d", res.Lost, res.Truncated, res.TruncatedAt, int64(len(c.data))-c.at, c.at)
			}
			// The half block is not written: the loss line says so,
			// and not "kept in OUT".
			want := fmt.Sprintf("[the input ends inside a record (offset %d), not written: 1 event lost]", c.at)
			if got := fmt.Sprint(res.LostInWindow()); got != want || res.LossHint("OUT") != "use --allow-loss to accept" {
				t.Errorf("loss %s (%s), want %s (use --allow-loss to accept)", got, res.LossHint("OUT"), want)
			}
		})
	}
	// The log's half line stays in place, for its reader to say, and
	// counts as one lost event.
	in := Input{Name: "cut.log", ReaderAt: bytes.NewReader(cutLog), Size: int64(len(cutLog))}
	out, res := doCut(t, in, "0", "100")
	if res.Lost != 1 || !bytes.HasSuffix(out, []byte("\nMARK 1")) {
		t.Errorf("cut log: lost %d, ends %q; want 1 lost, the half line kept", res.Lost, out[max(0, len(out)-20):])
	}
	want := "[the input ends inside its last line, written in place without its time: 1 event lost]"
	if got := fmt.Sprint(res.LostInWindow()); got != want || res.LossHint("OUT") != "kept in OUT; use --allow-loss to accept" {
		t.Errorf("cut log: loss %s (%s), want %s (kept in OUT; ...)", got, res.LossHint("OUT"), want)
	}
	r := mmiotrace.NewReader(bytes.NewReader(cutLog))
	if _, err := mmiotrace.CountKinds(r); err != nil || !r.Truncated() {
		t.Errorf("mmiotrace.Reader: truncated %v, err %v; want a cut log", r.Truncated(), err)
	}
}

// 'iotap index' of a capture killed mid-write: the index is written, and
// WriteIndexFile says where the input ends inside a record with a
// *TruncatedError (errors.Is ErrTruncated); a whole input has none.
func TestWriteIndexFileTruncated(t *testing.T) {
	pcapng, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	second := int64(binary.LittleEndian.Uint32(pcapng[4:])) // the block after the SHB
	for _, c := range []struct {
		name string
		data []byte
		at   int64 // -1: whole
	}{
		{"whole.pcapng", pcapng, -1},
		{"cut-20.pcapng", pcapng[:20], 0},
		{"cut-100.pcapng", pcapng[:second+32], second},
		{"whole.log", log, -1},
		{"cut.log", log[:len(log)-5], int64(bytes.LastIndexByte(log[:len(log)-1], '\n') + 1)},
	} {
		path := writeTemp(t, c.name, c.data)
		summary, err := WriteIndexFile(t.Context(), path, 1<<16, nil, nil)
		var te *TruncatedError
		switch {
		case c.at < 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.at >= 0 && (!errors.As(err, &te) || !errors.Is(err, ErrTruncated) || te.Offset != c.at || te.Path != path):
			t.Errorf("%s: error %v, want a TruncatedError at offset %d", c.name, err, c.at)
		}
		if summary == "" {
			t.Errorf("%s: no summary", c.name)
		}
		if _, err := os.Stat(path + IndexSuffix); err != nil {
			t.Errorf("%s: index not written: %v", c.name, err)
		}
	}
}

// TestTextEndsInsideLine: a usbmon text capture or a user_events NDJSON
// file that ends inside a line (no newline: a capture killed mid-write)
// is loss, as a mmiotrace log cut inside a line is: cut keeps the half
// line in place and counts it as one lost event, and says so; the index
// records where the trace ends inside a record. The whole files have no
// loss.
func TestTextEndsInsideLine(t *testing.T) {
	for _, p := range []string{"../testdata/usbmon/lab-0u.txt", "../testdata/capture/events.ndjson"} {
		whole, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		last := int64(bytes.LastIndexByte(whole[:len(whole)-1], '\n') + 1) // the last line's offset
		for _, n := range []int{0, 1, 9} {                                 // bytes cut off the end
			data := whole[:len(whole)-n]
			in := Input{Name: p, ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
			out, res := doCut(t, in, "0", "100000")
			ix, err := BuildIndex(context.Background(), in, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				if res.Lost != 0 || res.LostInWindow() != nil || ix.TruncatedAt() != -1 || !bytes.Equal(out, data) {
					t.Errorf("%s whole: lost %d %q, index truncated at %d", p, res.Lost, res.LostInWindow(), ix.TruncatedAt())
				}
				continue
			}
			want := "[the input ends inside its last line, written in place without its time: 1 event lost]"
			if res.Lost != 1 || !res.HalfKept || fmt.Sprint(res.LostInWindow()) != want || !bytes.Equal(out, data) {
				t.Errorf("%s without its last %d bytes: lost %d, loss %q, cut equal to the input %v; want 1 lost, %s, the half line kept",
					p, n, res.Lost, res.LostInWindow(), bytes.Equal(out, data), want)
			}
			if ix.TruncatedAt() != last {
				t.Errorf("%s without its last %d bytes: index truncated at %d, want %d", p, n, ix.TruncatedAt(), last)
			}
		}
	}
}
