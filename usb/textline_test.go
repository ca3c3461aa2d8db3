package usb

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// checkLine appends the line of an event with lw and with
// appendEventText, the reference (whose fields are checked against the
// kernel's text, strconv and time.Duration: TestAppendAddressKernel,
// TestAppendSecondsMicrosMatchesStrconv, TestAppendMicrosMatchesDuration),
// after the same prefix, and fails on the first difference.
func checkLine(t testing.TB, lw *lineWriter, seq uint64, relUS int64, ev *usbmon.Event, latency int64, paired bool, d *Decoded) {
	t.Helper()
	pre := []byte("prev line\n")
	var got string
	if d.Summary == "" { // as Pipeline.writeLines chooses
		got = string(lw.append(pre[:len(pre):len(pre)], seq, relUS, ev, latency, paired))
	} else {
		got = string(appendEventText(pre[:len(pre):len(pre)], seq, relUS, ev, latency, paired, d))
	}
	want := string(appendEventText(pre, seq, relUS, ev, latency, paired, d))
	if got != want {
		t.Fatalf("seq %d rel %d µs lat %d (paired %v) summary %q, event %+v:\n got %q\nwant %q", seq, relUS, latency, paired, d.Summary, ev, got, want)
	}
}

// TestLineWriterMatchesText compares the lines of 'iotap usb read'
// (lineWriter, Pipeline.WriteText) with appendEventText's for every event
// of the repository's captures (pcapng, usbmon text '1u' and '1t',
// binary) and the shared KM003C capture, and for random events: every
// transfer type and direction, S/C/E and other type bytes, status 0 and
// not, with and without bus (few addresses, and any), setup and data (0 to 40 bytes), latencies
// around 0, 1 ms and 1 s, times around whole seconds, negative and beyond
// 10^6 s, event numbers counting up across 9…9 (a digit more) and
// jumping (a filter), a decoding with and without an error.
func TestLineWriterMatchesText(t *testing.T) {
	files, _ := filepath.Glob("../testdata/usbmon/*")
	more, _ := filepath.Glob("testdata/*.pcapng")
	files = append(files, more...)
	files = append(files, "../testdata/capture/usb.pcapng", filepath.Join(sharedUSB, "km003c-adc-1000hz.pcapng"), filepath.Join(sharedUSB, "km003c-pd-capture.pcapng"))
	read := 0
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		pl, err := OpenPipeline(f, path, -1, false, ReadOptions{Selection: AnySelection(), KeepGoing: true})
		if err != nil {
			f.Close()
			continue // README.md
		}
		dec := NewDecoder(pl.Identities)
		var lw lineWriter
		n := 0
		err = pl.each(context.Background(), nil, func(seq uint64, ev *usbmon.Event, p *Pair, paired bool) error {
			var d Decoded
			if !dec.quiet(ev) {
				d = dec.decode(ev, p, paired)
			}
			checkLine(t, &lw, seq, Elapsed(pl.First, Micros(ev), ev), ev, p.Latency, paired, &d)
			n++
			return nil
		})
		f.Close()
		if err != nil && n == 0 {
			t.Fatalf("%s: %v", path, err)
		}
		t.Logf("%s: %d lines", path, n)
		read += n
	}
	if read < 1000 {
		t.Fatalf("only %d lines compared", read)
	}

	rng := rand.New(rand.NewSource(7))
	var lw lineWriter
	seq := uint64(1)
	for i := 0; i < 100000; i++ {
		ev, relUS, latency, paired, d := randomLine(rng)
		switch rng.Intn(50) {
		case 0:
			seq = uint64(rng.Int63n(1e17)) // a jump, also beyond the fast path
		case 1:
			seq = uint64(math.Pow10(rng.Intn(16))) - uint64(rng.Intn(3)) // just below a digit more
		case 2:
			seq += uint64(rng.Intn(100)) // filtered
		}
		checkLine(t, &lw, seq, relUS, ev, latency, paired, d)
		seq++
	}
}

// randomLine returns the fields of a random line, most of them on the
// fast path.
func randomLine(rng *rand.Rand) (*usbmon.Event, int64, int64, bool, *Decoded) {
	ev := &usbmon.Event{
		ID: rng.Uint64(), Type: usbmon.EventType("SCCEx"[rng.Intn(5)]), Transfer: usbmon.TransferType(rng.Intn(5)),
		In: rng.Intn(2) == 0, Bus: uint16(rng.Intn(3)), Device: uint8(rng.Intn(3)), Endpoint: uint8(rng.Intn(3)),
		Length: uint32(rng.Intn(5000)), SetupFlag: usbmon.SetupNone, DataFlag: 'x', Fields: usbmon.HasBus,
	}
	// Few addresses, as in a capture (lineWriter keeps the last ones),
	// and now and then any.
	switch rng.Intn(20) {
	case 0:
		ev.Bus, ev.Device, ev.Endpoint, ev.Length = uint16(rng.Intn(65536)), uint8(rng.Intn(256)), uint8(rng.Intn(256)), rng.Uint32()
	case 4:
		ev.Bus, ev.Device, ev.Endpoint = uint16(rng.Intn(20000)), uint8(rng.Intn(256)), uint8(rng.Intn(128))
	case 5:
		ev.Bus += 256 * uint16(rng.Intn(3)) // the same low byte
	case 1:
		ev.Fields = 0 // '1t' text: no bus
	case 2:
		ev.Status = int32(rng.Intn(200)) - 150
	case 3:
		ev.Status = rng.Int31() - rng.Int31()
	}
	if rng.Intn(4) == 0 {
		ev.SetupFlag = byte("\x00\x00-Z"[rng.Intn(4)])
		rng.Read(ev.Setup[:])
	}
	if rng.Intn(2) == 0 {
		ev.DataFlag = byte("\x00\x00\x00<"[rng.Intn(4)])
		ev.Data = make([]byte, rng.Intn(41))
		rng.Read(ev.Data)
	}
	var relUS int64
	switch rng.Intn(6) {
	case 0:
		relUS = int64(rng.Intn(10)) * 1e6 // whole seconds
	case 1:
		relUS = int64(rng.Intn(1e6))*1e6 - int64(rng.Intn(3)) // just below
	case 2:
		relUS = rng.Int63n(2e13) - 1e13 // negative, beyond 10^6 s
	default:
		relUS = rng.Int63n(1e9)
	}
	var latency int64
	switch rng.Intn(5) {
	case 0:
		latency = int64(rng.Intn(2001)) - 1000
	case 1:
		latency = 1e6 + int64(rng.Intn(5)) - 2
	case 2:
		latency = rng.Int63() - rng.Int63()
	default:
		latency = int64(rng.Intn(1e6))
	}
	d := &Decoded{}
	switch rng.Intn(10) {
	case 0:
		d.Summary = "GET_DESCRIPTOR DEVICE index=0"
	case 1:
		d.Summary, d.Err = "CBW tag=1", ErrShort
	}
	return ev, relUS, latency, rng.Intn(3) > 0, d
}

// FuzzLineWriter compares consecutive lines of lineWriter (event
// numbers seq to seq+3) with appendEventText's for arbitrary fields.
func FuzzLineWriter(f *testing.F) {
	f.Add(uint64(1), int64(0), int64(186), byte('C'), byte(2), byte(0x80), uint16(3), uint8(6), uint32(18), int32(0), []byte{0x12, 0x01})
	f.Add(uint64(99999), int64(7281381), int64(42356), byte('C'), byte(3), byte(0x81), uint16(3), uint8(6), uint32(788), int32(0), make([]byte, 33))
	f.Add(uint64(9), int64(-1), int64(0), byte('S'), byte(2), byte(0x40), uint16(65535), uint8(255), uint32(1<<31), int32(-32), []byte{})
	f.Fuzz(func(t *testing.T, seq uint64, relUS, latency int64, typ, xfer, flags byte, bus uint16, dev uint8, length uint32, status int32, data []byte) {
		ev := &usbmon.Event{Type: usbmon.EventType(typ), Transfer: usbmon.TransferType(xfer & 7), In: flags&0x80 != 0,
			Bus: bus, Device: dev, Endpoint: flags & 0x1f, Status: status, Length: length,
			SetupFlag: usbmon.SetupNone, DataFlag: 'x', Data: data, Fields: usbmon.Fields(flags>>5&1) * usbmon.HasBus}
		if flags&0x40 != 0 {
			ev.SetupFlag = usbmon.SetupPresent
			copy(ev.Setup[:], data)
		}
		if flags&0x20 != 0 {
			ev.DataFlag = usbmon.DataPresent
		}
		var lw lineWriter
		for i := uint64(0); i < 2; i++ {
			checkLine(t, &lw, seq+i, relUS, ev, latency, flags&1 != 0, &Decoded{})
		}
		// The same address with another length (the line writer
		// keeps the bytes up to the length by address and length),
		// then an endpoint number of three digits.
		ev.Length ^= 1
		checkLine(t, &lw, seq+2, relUS, ev, latency, flags&1 != 0, &Decoded{})
		ev.Endpoint |= 0x60
		checkLine(t, &lw, seq+3, relUS, ev, latency, flags&1 != 0, &Decoded{})
	})
}

// TestWriteTextMatchesEach compares 'iotap usb read' and 'usb read
// --json' (WriteText and WriteNDJSON, their own loop) with the lines and
// records of the public API over Pipeline.Each (Decoder, AppendEventText,
// AppendHexDump; AppendInput, EventEncoder.Append), on the repository's
// captures and the shared KM003C one: all events, with -x, with filters
// (an endpoint, a status, -Y, a time window) and with -c, so that the
// loop hands on, numbers and stops at the same events.
func TestWriteTextMatchesEach(t *testing.T) {
	files := []string{"../testdata/usbmon/lab-capture.pcapng", "../testdata/usbmon/lab-0u.txt", "../testdata/usbmon/lab-hidbus-t.txt",
		"testdata/lab-decode.pcapng", filepath.Join(sharedUSB, "km003c-adc-1000hz.pcapng")}
	type variant struct {
		name  string
		json  bool
		hex   bool
		opt   func(*ReadOptions)
		lines int // at least
	}
	variants := []variant{
		{"all", false, false, func(*ReadOptions) {}, 90},
		{"hex", false, true, func(*ReadOptions) {}, 90},
		{"ep1", false, false, func(o *ReadOptions) { o.Selection.Endpoint = 1 }, 1},
		{"stall", false, false, func(o *ReadOptions) { o.Selection.Status = "stall" }, 0},
		{"filter", false, false, func(o *ReadOptions) { o.Selection.Expr = "usb.transfer_type == 2 || usb.urb_len > 8" }, 10},
		{"window", false, false, func(o *ReadOptions) { o.Selection.From, o.Selection.To = "0.5", "2" }, 0},
		{"count", false, true, func(o *ReadOptions) { o.Limit = 7 }, 7},
		{"json", true, false, func(*ReadOptions) {}, 90},
		{"json-filter", true, false, func(o *ReadOptions) { o.Selection.Expr = "usb.transfer_type == 2 || usb.urb_len > 8" }, 10},
		{"json-count", true, false, func(o *ReadOptions) { o.Limit = 7 }, 7},
	}
	for _, path := range files {
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		for _, v := range variants {
			open := func() (*Pipeline, func()) {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				opt := ReadOptions{Selection: AnySelection()}
				v.opt(&opt)
				pl, err := OpenPipeline(f, path, -1, false, opt)
				if err != nil {
					t.Fatalf("%s %s: %v", path, v.name, err)
				}
				return pl, func() { f.Close() }
			}
			pl, done := open()
			var got bytes.Buffer
			var gotErr error
			if v.json {
				gotErr = pl.WriteNDJSON(context.Background(), &got, path)
			} else {
				gotErr = pl.WriteText(context.Background(), &got, v.hex)
			}
			done()

			pl, done = open()
			dec := NewDecoder(pl.Identities)
			enc := EventEncoder{Identities: pl.Identities}
			var want []byte
			if v.json {
				want = AppendInput(want, path, pl.Reader.Format())
			}
			n := 0
			wantErr := pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p Pair, paired bool) error {
				if v.json {
					want = enc.Append(want, seq, ev, p, paired, dec.Decode(ev, p, paired))
					n++
					return nil
				}
				want = AppendEventText(want, seq, float64(Elapsed(pl.First, Micros(ev), ev))/1e6, ev, p, paired, dec.Decode(ev, p, paired))
				if v.hex && ev.HasData() {
					want = AppendHexDump(want, ev.Data)
				}
				n++
				return nil
			})
			done()
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%s %s: error %v, Each %v", path, v.name, gotErr, wantErr)
			}
			if got.String() != string(want) {
				t.Fatalf("%s %s: WriteText differs from Each:\n%s", path, v.name, firstDiff(got.String(), string(want)))
			}
			if n < v.lines {
				t.Fatalf("%s %s: %d lines, want at least %d", path, v.name, n, v.lines)
			}
		}
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}
