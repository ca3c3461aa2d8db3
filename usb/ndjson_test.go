package usb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// checkEventLine parses line with encoding/json and compares it with the
// record NewEventRecord builds for the same event: every value reads back
// as the Go form has it, and a completion says latency_ns (null when not
// paired).
func checkEventLine(t *testing.T, line []byte, seq uint64, relNs int64, ev *usbmon.Event, p Pair, paired bool, d Decoded, ids *Identities) {
	t.Helper()
	if len(line) == 0 || line[len(line)-1] != '\n' || bytes.IndexByte(line, '\n') != len(line)-1 {
		t.Fatalf("not one line: %q", line)
	}
	var got EventRecord
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	want := NewEventRecord(seq, relNs, ev, p, paired, d, ids)
	// decoded: compare as JSON values
	norm := func(v any) any {
		if v == nil {
			return nil
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back any
		json.Unmarshal(j, &back)
		return back
	}
	got.Decoded, want.Decoded = norm(got.Decoded), norm(want.Decoded)
	// strings read back as encoding/json writes them (invalid UTF-8)
	for _, s := range []*string{&want.Summary, &want.DecodeErr, &want.Request} {
		j, _ := json.Marshal(*s)
		json.Unmarshal(j, s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("line %s\nreads back as %+v\nwant          %+v", line, got, want)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(line, &m)
	if ev.Type != usbmon.Submission {
		if l, ok := m["latency_ns"]; !ok || (!paired && string(l) != "null") {
			t.Fatalf("completion without latency_ns (or not null when unpaired): %s", line)
		}
	} else if _, ok := m["latency_ns"]; ok {
		t.Fatalf("submission with latency_ns: %s", line)
	}
}

// TestEventEncoderRoundTrip: every usb_event of the bundled captures
// parses and reads back as NewEventRecord's values.
func TestEventEncoderRoundTrip(t *testing.T) {
	for _, f := range []string{"lab-0u.txt", "lab-capture.0u", "lab-capture.pcapng", "lab-usbmon0.bin", "lab-hidbus-t.txt"} {
		t.Run(f, func(t *testing.T) {
			fh, err := os.Open("../testdata/usbmon/" + f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			rd, _, err := usbmon.NewReader(fh)
			if err != nil {
				t.Fatal(err)
			}
			pl := NewPipeline(rd, nil, nil)
			dec := NewDecoder(pl.Identities)
			enc := EventEncoder{Identities: pl.Identities}
			var b []byte
			n := 0
			err = pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p Pair, paired bool) error {
				d := dec.Decode(ev, p, paired)
				b = enc.Append(b[:0], seq, ev, p, paired, d)
				checkEventLine(t, b, seq, elapsed(pl.First, Micros(ev), ev.Fields&usbmon.HasWallClock == 0)*1000, ev, p, paired, d, pl.Identities)
				n++
				return nil
			})
			if err != nil && !errors.Is(err, usbmon.ErrTruncated) {
				t.Fatal(err)
			}
			if n < 50 {
				t.Fatalf("%d events", n)
			}
		})
	}
}

// FuzzEventEncoder: events of arbitrary fields and payloads, decoded by
// the Decoder, encode to one line that encoding/json parses back to the
// record's values.
func FuzzEventEncoder(f *testing.F) {
	f.Add(uint64(0xffff8d7e73bfa900), byte('S'), byte(2), true, uint16(3), uint8(6), uint8(0), int32(-115), uint32(18), []byte{0x80, 6, 0, 1, 0, 0, 18, 0}, []byte{})
	f.Add(uint64(1), byte('C'), byte(2), true, uint16(3), uint8(6), uint8(0), int32(0), uint32(18), []byte{}, []byte("\x12\x01\x10\x02\xef\x02\x01\x20\xc9\x5f\x63\x00\x00\x01\x01\x04\x03\x01"))
	f.Add(uint64(2), byte('C'), byte(3), false, uint16(1), uint8(2), uint8(2), int32(-32), uint32(31), []byte{}, []byte("USBC\r\x00\x00\x00\x00\x40\x00\x00\x80\x00\x0a\x28"))
	f.Add(uint64(3), byte('E'), byte(1), true, uint16(0), uint8(127), uint8(15), int32(-19), uint32(0), []byte{}, []byte{0xff, 0xfe, '"', '\\'})
	f.Fuzz(func(t *testing.T, id uint64, typ, xfer byte, in bool, bus uint16, dev, ep uint8, status int32, length uint32, setup, data []byte) {
		types := []usbmon.EventType{usbmon.Submission, usbmon.Callback, usbmon.SubmitError}
		ev := usbmon.Event{ID: id, Type: types[int(typ)%3], Transfer: usbmon.TransferType(xfer % 4), In: in, Bus: bus,
			Device: dev & 127, Endpoint: ep & 15, Status: status, Length: length, Fields: usbmon.HasWallClock, Sec: int64(id >> 40), Usec: int32(id % 1000000)}
		if len(setup) >= 8 {
			ev.SetupFlag = usbmon.SetupPresent
			copy(ev.Setup[:], setup)
		}
		if len(data) > 0 {
			ev.DataFlag, ev.Data = usbmon.DataPresent, data
		}
		ids := NewIdentities()
		pr := NewPairer()
		dec := NewDecoder(ids)
		enc := EventEncoder{Identities: ids}
		// a submission first, so that a completion pairs
		sub := ev
		sub.Type, sub.Data, sub.DataFlag = usbmon.Submission, nil, 0
		sub.Usec = 0
		var b []byte
		for i, e := range []*usbmon.Event{&sub, &ev} {
			p, ok := pr.Add(e)
			if ok {
				ids.Observe(p, e)
			}
			d := dec.Decode(e, p, ok)
			b = enc.Append(b[:0], uint64(i+1), e, p, ok, d)
			checkEventLine(t, b, uint64(i+1), (Micros(e)-Micros(&sub))*1000, e, p, ok, d, ids)
		}
	})
}

// TestEventEncoderNoAllocs: an event without decoded detail costs no
// allocation.
func TestEventEncoderNoAllocs(t *testing.T) {
	ids := NewIdentities()
	enc := EventEncoder{Identities: ids}
	ev := usbmon.Event{ID: 0xffff8d7e812076c0, Type: usbmon.Callback, Transfer: usbmon.Bulk, In: true, Bus: 3, Device: 5, Endpoint: 2,
		Length: 18, DataFlag: usbmon.DataPresent, Data: []byte("\x01\x2e\x0e\x00\x0a\x00\x04\x00\x1b\x2a\x00\x00\x00\x00\xb0\xff\x00\x00"),
		Fields: usbmon.HasWallClock, Sec: 1750417434, Usec: 72856}
	p := Pair{Key: KeyOf(&ev), Latency: 14943, Submit: Submission{Seq: 97, Length: 1028}}
	b := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(1000, func() {
		b = enc.Append(b[:0], 101, &ev, p, true, Decoded{})
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
	if !strings.Contains(string(b), `"ep":130,`) || !strings.Contains(string(b), `"latency_ns":14943000,"submit_seq":98`) {
		t.Errorf("record %s", b)
	}
}

func BenchmarkEventEncoder(b *testing.B) {
	enc := EventEncoder{Identities: NewIdentities()}
	ev := usbmon.Event{ID: 0xffff8d7e812076c0, Type: usbmon.Callback, Transfer: usbmon.Bulk, In: true, Bus: 3, Device: 5, Endpoint: 2,
		Length: 18, DataFlag: usbmon.DataPresent, Data: make([]byte, 18), Fields: usbmon.HasWallClock, Sec: 1750417434, Usec: 72856}
	p := Pair{Key: KeyOf(&ev), Latency: 14943, Submit: Submission{Seq: 97, Length: 1028}}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = enc.Append(buf[:0], uint64(i), &ev, p, true, Decoded{})
	}
	io.Discard.Write(buf)
}

// TestEventEncoderSeesNewIdentities: the encoder's cache of the previous
// record's device never hides a change of the table: a device learned,
// changed in place or replaced after records of its address were written
// shows in the next record's vidpid, as Identities.Lookup gives it.
func TestEventEncoderSeesNewIdentities(t *testing.T) {
	ids := NewIdentities()
	enc := EventEncoder{Identities: ids}
	ev := &usbmon.Event{Type: usbmon.Submission, Transfer: usbmon.Bulk, Bus: 1, Device: 5, Endpoint: 1, Fields: usbmon.HasWallClock}
	vidpid := func() string {
		line := enc.Append(nil, 1, ev, Pair{}, false, Decoded{})
		var m struct {
			VIDPID string `json:"vidpid"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return m.VIDPID
	}
	if got := vidpid(); got != "" {
		t.Fatalf("unknown device: vidpid %q", got)
	}
	ids.Set(DeviceInfo{Bus: 1, Device: 5, HasID: true, Vendor: 0x1234, Product: 0x5678})
	if got := vidpid(); got != "1234:5678" {
		t.Fatalf("after Set: vidpid %q, want 1234:5678", got)
	}
	info, _ := ids.Lookup(1, 5)
	info.Vendor = 0xabcd
	if got := vidpid(); got != "abcd:5678" {
		t.Fatalf("after a change in place: vidpid %q, want abcd:5678", got)
	}
	ids.Set(DeviceInfo{Bus: 1, Device: 5})
	if got := vidpid(); got != "" {
		t.Fatalf("after the device was replaced: vidpid %q, want none", got)
	}
	ev.Device = 6
	ids.Set(DeviceInfo{Bus: 1, Device: 6, HasID: true, Vendor: 1, Product: 2})
	if got := vidpid(); got != "0001:0002" {
		t.Fatalf("other device: vidpid %q, want 0001:0002", got)
	}
}
