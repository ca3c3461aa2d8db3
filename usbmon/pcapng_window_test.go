package usbmon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"testing"
)

// smallReads returns at most 61 bytes a Read: the reader's buffer then
// rarely holds the next block whole, and it takes the checked path.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 61)]) }

// readAllEvents reads r to its end and returns every event as text (its
// fields, data and flags) and the error that ended it.
func readAllEvents(src io.Reader) ([]string, string) {
	r, _, err := NewReader(src)
	if err != nil {
		return nil, "open: " + err.Error()
	}
	var out []string
	var ev Event
	for {
		if err := r.ReadInto(&ev); err != nil {
			if err == io.EOF {
				return out, ""
			}
			return out, err.Error()
		}
		out = append(out, fmt.Sprintf("%d %c %d %v %d %d %d %d %d %d %d %x %x %v %v %d %d %d %v",
			ev.ID, ev.Type, ev.Transfer, ev.In, ev.Endpoint, ev.Device, ev.Bus, ev.Sec, ev.Usec, ev.Status,
			ev.Length, ev.Setup, ev.Data, ev.Synthesized, ev.ISO, ev.NDesc, ev.Interval, ev.XferFlags, ev.Fields))
	}
}

// TestPcapngWindowMatchesChecked: the pcapng reader's fast path (blocks
// taken whole from the buffered window, the little-endian header decoded
// in one piece) reads the same events and stops with the same error as
// its checked path, which a reader fed 61 bytes at a time takes for
// most blocks; over files of 1,500 events of random sizes (blocks
// across the 64 KiB buffer's end), both byte orders' headers, and the
// same files with bytes overwritten or cut short.
func TestPcapngWindowMatchesChecked(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, lt := range []int{LinkTypeUSBLinux, LinkTypeUSBLinuxMmapped} {
		var buf bytes.Buffer
		w, err := NewPcapngWriter(&buf, lt)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1500; i++ {
			ev := Event{ID: rng.Uint64(), Type: EventType("SCE"[rng.Intn(3)]), Transfer: TransferType(rng.Intn(4)), In: rng.Intn(2) == 0,
				Endpoint: uint8(rng.Intn(16)), Device: uint8(rng.Intn(128)), Bus: uint16(rng.Intn(8)),
				Sec: int64(1700000000 + i), Usec: int32(rng.Intn(1000000)), Status: int32(-rng.Intn(120)),
				Fields: HasWallClock | HasBus | HasLengths, SetupFlag: SetupNone}
			if ev.Transfer == Control && ev.Type == Submission {
				ev.SetupFlag = SetupPresent
				rng.Read(ev.Setup[:])
			}
			if n := rng.Intn(600); n > 0 && rng.Intn(3) > 0 {
				ev.Data = make([]byte, n)
				rng.Read(ev.Data)
				ev.DataFlag = DataPresent
			}
			ev.Length = uint32(len(ev.Data))
			ev.CapLen = ev.Length
			if err := w.Write(&ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		file := buf.Bytes()
		if len(file) < 3<<16 {
			t.Fatalf("file of %d bytes: too small to cross buffers", len(file))
		}
		check := func(name string, b []byte) {
			t.Helper()
			fast, fastErr := readAllEvents(bytes.NewReader(b))
			slow, slowErr := readAllEvents(smallReads{bytes.NewReader(b)})
			if fastErr != slowErr || len(fast) != len(slow) {
				t.Fatalf("%s: %d events, error %q; 61 bytes at a time %d events, error %q", name, len(fast), fastErr, len(slow), slowErr)
			}
			for i := range fast {
				if fast[i] != slow[i] {
					t.Fatalf("%s: event %d differs:\n%s\n%s", name, i+1, fast[i], slow[i])
				}
			}
		}
		check(fmt.Sprintf("lt %d", lt), file)
		all, _ := readAllEvents(bytes.NewReader(file))
		if len(all) != 1500 {
			t.Fatalf("lt %d: %d events, want 1500", lt, len(all))
		}
		for k := 0; k < 20; k++ {
			b := bytes.Clone(file)
			switch k % 3 {
			case 0: // a block length or its trailing copy overwritten
				binary.LittleEndian.PutUint32(b[28+4*rng.Intn((len(b)-32)/4):], uint32(rng.Intn(1<<12)))
			case 1:
				b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
			case 2:
				b = b[:rng.Intn(len(b))]
			}
			check(fmt.Sprintf("lt %d variant %d", lt, k), b)
		}
	}
}
