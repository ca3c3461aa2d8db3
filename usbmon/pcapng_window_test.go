package usbmon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// smallReads returns at most 61 bytes a Read: the reader's buffer then
// rarely holds the next block whole, and it takes the checked path.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 61)]) }

// readAllEvents reads r to its end and returns every event as text (its
// fields, data and flags) and the error that ended it.
func readAllEvents(src io.Reader) ([]string, string) {
	return readAllWrapped(src, nil)
}

// readAllWrapped is readAllEvents through wrap(reader) (nil: none); it
// also gives the link type after each event and the drop count at the
// end.
func readAllWrapped(src io.Reader, wrap func(Reader) Reader) ([]string, string) {
	r, _, err := NewReader(src)
	if err != nil {
		return nil, "open: " + err.Error()
	}
	if wrap != nil {
		r = wrap(r)
	}
	lt := func() int {
		if l, ok := r.(LinkTyper); ok {
			return l.LinkType()
		}
		return -1
	}
	var out []string
	var ev Event
	for {
		if err := r.ReadInto(&ev); err != nil {
			if d, ok := r.(interface{ Dropped() uint64 }); ok {
				out = append(out, fmt.Sprintf("dropped %d", d.Dropped()))
			}
			if err == io.EOF {
				return out, ""
			}
			return out, err.Error()
		}
		out = append(out, fmt.Sprintf("lt %d %d %c %d %v %d %d %d %d %d %d %d %x %x %v %v %d %d %d %v",
			lt(), ev.ID, ev.Type, ev.Transfer, ev.In, ev.Endpoint, ev.Device, ev.Bus, ev.Sec, ev.Usec, ev.Status,
			ev.Length, ev.Setup, ev.Data, ev.Synthesized, ev.ISO, ev.NDesc, ev.Interval, ev.XferFlags, ev.Fields))
	}
}

// TestPcapngWindowMatchesChecked: the pcapng reader's fast paths (blocks
// taken whole from the buffered window, the little-endian header decoded
// in one piece, ReadInto's fast path) read the same events and stops with the same error as
// its checked path, which a reader fed 61 bytes at a time takes for
// most blocks; over files of 1,500 events of random sizes (blocks
// across the 64 KiB buffer's end), both byte orders' headers, and the
// same files with bytes overwritten or cut short. Some events carry the
// synthesized comment or ISO descriptors. Since the fast path takes only what
// is whole in the window, the 61-byte reads check it too.
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
			// Some events carry the synthesized comment, and with the
			// 64-byte header some isochronous ones ISO descriptors:
			// both leave the fast paths' simplest case.
			ev.Synthesized = rng.Intn(8) == 0
			if lt == LinkTypeUSBLinuxMmapped && ev.Transfer == Isochronous && rng.Intn(2) == 0 {
				ev.Fields |= HasExtended
				ev.ISO = make([]ISODesc, 1+rng.Intn(4))
				for j := range ev.ISO {
					ev.ISO[j] = ISODesc{Status: int32(-rng.Intn(3)), Offset: uint32(j * 8), Length: uint32(rng.Intn(8))}
				}
				ev.NDesc, ev.NumDesc = uint32(len(ev.ISO)), int32(len(ev.ISO))
			}
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
		if len(all) != 1501 { // and the drop count
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

// TestPrefetchMatchesReader: Prefetch gives the events of the reader it
// wraps, in order, with their link type, the drop count and the error
// that ends the input, over the km003c capture and the generated files
// of TestPcapngWindowMatchesChecked, whole and damaged.
func TestPrefetchMatchesReader(t *testing.T) {
	var files [][]byte
	if b, err := os.ReadFile(filepath.Join("..", "..", "shared", "testdata", "usb", "km003c-adc-1000hz.pcapng")); err == nil {
		files = append(files, b)
	} else {
		t.Logf("km003c capture not read (%v): generated files only", err)
	}
	rng := rand.New(rand.NewSource(3))
	for _, lt := range []int{LinkTypeUSBLinux, LinkTypeUSBLinuxMmapped} {
		var buf bytes.Buffer
		w, _ := NewPcapngWriter(&buf, lt)
		for i := 0; i < 3000; i++ {
			ev := Event{ID: uint64(i), Type: Callback, Transfer: Bulk, Bus: 1, Device: 2, Sec: int64(i), Fields: HasWallClock | HasBus | HasLengths, SetupFlag: SetupNone}
			// payloads up to 3 MiB now and then: a batch's arena
			// overflows
			n := rng.Intn(700)
			if i%1499 == 1 {
				n = 1 << 20
			}
			ev.Data = make([]byte, n)
			rng.Read(ev.Data)
			ev.Length, ev.CapLen = uint32(n), uint32(n)
			w.Write(&ev)
		}
		w.Flush()
		files = append(files, buf.Bytes())
	}
	pref := func(r Reader) Reader {
		if !CanPrefetch(r) {
			t.Fatalf("%T: CanPrefetch false", r)
		}
		return Prefetch(r)
	}
	for fi, file := range files {
		for k := 0; k < 6; k++ {
			b := file
			if k > 0 {
				b = bytes.Clone(file)
				if k%2 == 0 {
					b[rng.Intn(len(b))] ^= 0x5a
				} else {
					b = b[:rng.Intn(len(b))]
				}
			}
			want, wantErr := readAllWrapped(bytes.NewReader(b), nil)
			got, gotErr := readAllWrapped(bytes.NewReader(b), pref)
			if gotErr != wantErr || len(got) != len(want) {
				t.Fatalf("file %d variant %d: prefetched %d events, error %q; reader %d, %q", fi, k, len(got), gotErr, len(want), wantErr)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("file %d variant %d: event %d differs:\n%.300s\n%.300s", fi, k, i+1, got[i], want[i])
				}
			}
		}
	}
}

// TestPrefetchClose: a reader closed before the end stops its goroutine.
func TestPrefetchClose(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewPcapngWriter(&buf, LinkTypeUSBLinux)
	for i := 0; i < 5000; i++ {
		w.Write(&Event{ID: uint64(i), Type: Submission, Transfer: Bulk, Fields: HasWallClock | HasBus | HasLengths, SetupFlag: SetupNone})
	}
	w.Flush()
	before := runtime.NumGoroutine()
	r, _, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	p := Prefetch(r)
	var ev Event
	for i := 0; i < 10; i++ {
		if err := p.ReadInto(&ev); err != nil || ev.ID != uint64(i) {
			t.Fatalf("event %d: id %d, %v", i, ev.ID, err)
		}
	}
	p.Close()
	if err := p.ReadInto(&ev); err == nil {
		t.Fatal("ReadInto after Close: no error")
	}
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i == 500 {
			t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
