package usb

import (
	"errors"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// checkErr fails unless err is nil or a *FormatError within the input.
func checkErr(t *testing.T, err error, n int) {
	t.Helper()
	if err == nil {
		return
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *FormatError", err)
	}
	if fe.Offset < 0 || fe.Offset > n {
		t.Fatalf("error offset %d outside input of %d bytes: %v", fe.Offset, n, err)
	}
	if !errors.Is(err, ErrShort) && !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v wraps neither ErrShort nor ErrInvalid", err)
	}
}

func FuzzSetup(f *testing.F) {
	f.Add([]byte{0x80, 6, 0, 1, 0, 0, 18, 0}, uint8(0))
	f.Add([]byte{0x21, 0x20, 0, 0, 0, 0, 7, 0}, uint8(ClassCDC))
	f.Fuzz(func(t *testing.T, b []byte, hint uint8) {
		s, err := ParseSetup(b)
		checkErr(t, err, len(b))
		if err != nil {
			return
		}
		if w := s.Bytes(); string(w[:]) != string(b[:8]) {
			t.Fatalf("round trip %x -> %x", b[:8], w)
		}
		if s.Describe(hint) == "" {
			t.Fatal("empty description")
		}
	})
}

func FuzzDeviceDescriptor(f *testing.F) {
	f.Add(mustHex(f, km003cDevice))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDeviceDescriptor(b)
		checkErr(t, err, len(b))
		if d.Len > len(b) || d.Len > 18 {
			t.Fatalf("Len %d of %d bytes", d.Len, len(b))
		}
		_ = d.String()
		q, err := ParseDeviceQualifier(b)
		checkErr(t, err, len(b))
		_ = q.String()
	})
}

func FuzzConfiguration(f *testing.F) {
	f.Add(mustHex(f, km003cConfig))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfiguration(b)
		checkErr(t, err, len(b))
		if c.Len > len(b) || (c.Len > int(c.TotalLength) && c.Len > 9) {
			t.Fatalf("Len %d, input %d, wTotalLength %d", c.Len, len(b), c.TotalLength)
		}
		_ = c.String()
		_ = c.Tree()
	})
}

func FuzzSmallDescriptors(f *testing.F) {
	f.Add(mustHex(f, "0705810240000007"))
	f.Add(mustHex(f, "0904000002ff000002"))
	f.Add(mustHex(f, "080b010202020000"))
	f.Add(mustHex(f, "06300f000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEndpointDescriptor(b)
		checkErr(t, err, len(b))
		_ = e.String()
		i, err := ParseInterfaceDescriptor(b)
		checkErr(t, err, len(b))
		_ = i.String()
		a, err := ParseInterfaceAssociation(b)
		checkErr(t, err, len(b))
		_ = a.String()
		s, err := ParseSSEndpointCompanion(b)
		checkErr(t, err, len(b))
		_ = s.String()
	})
}

func FuzzStringDescriptor(f *testing.F) {
	f.Add(mustHex(f, "16034300680061007200670065007200"), false)
	f.Add(mustHex(f, "04030904"), true)
	f.Fuzz(func(t *testing.T, b []byte, langs bool) {
		s, err := ParseStringDescriptor(b, langs)
		checkErr(t, err, len(b))
		_ = s.String()
	})
}

func FuzzBOS(f *testing.F) {
	f.Add(mustHex(f, "050f160002"+"07100202000000"+"0a1003000e00010aff07"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseBOS(b)
		checkErr(t, err, len(b))
		if d.Len > len(b) {
			t.Fatalf("Len %d of %d", d.Len, len(b))
		}
		_ = d.String()
	})
}

func FuzzClassDescriptors(f *testing.F) {
	f.Add(mustHex(f, "092111010001221800"))
	f.Add(mustHex(f, "0a2908090032640000ff"))
	f.Add(mustHex(f, "0c2a0409000a00000a000000"))
	f.Add(mustHex(f, "052406000102"))
	f.Add(mustHex(f, "0d240f04000000000006000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHIDDescriptor(b)
		checkErr(t, err, len(b))
		_ = h.String()
		hub, err := ParseHubDescriptor(b)
		checkErr(t, err, len(b))
		_ = hub.String()
		c, err := ParseCDCFunctional(b)
		checkErr(t, err, len(b))
		if err == nil {
			_ = c.String()
		}
		ps, err := ParsePortStatus(b)
		checkErr(t, err, len(b))
		_ = ps.String()
		l, err := ParseLineCoding(b)
		checkErr(t, err, len(b))
		_ = l.String()
		n, err := ParseCDCNotification(b)
		checkErr(t, err, len(b))
		_ = n.String()
	})
}

func FuzzReportDescriptor(f *testing.F) {
	f.Add(mustHex(f, bootKeyboard))
	f.Add(mustHex(f, "fe0210aabb0501a4b4"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := ParseReportDescriptor(b)
		checkErr(t, err, len(b))
		last := -1
		for _, it := range rd.Items {
			if it.Offset <= last || it.Offset >= len(b) {
				t.Fatalf("item offset %d after %d in %d bytes", it.Offset, last, len(b))
			}
			last = it.Offset
		}
		_ = rd.String()
		_ = rd.Summary()
		// The descriptor's own bytes as reports of every kind.
		for _, kind := range []string{"input", "output", "feature"} {
			_, err := rd.DecodeReport(kind, b)
			checkErr(t, err, len(b))
		}
	})
}

func FuzzMassStorage(f *testing.F) {
	f.Add(mustHex(f, "55534243ad0000000080000080010a28200000002000004000000000000000"))
	f.Add(mustHex(f, "55534253ad0000000002000001"))
	f.Add(mustHex(f, "28000000000800000100"))
	f.Add(mustHex(f, "700006000000000a00000000280000000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCBW(b)
		checkErr(t, err, len(b))
		if err == nil {
			_ = c.String()
			if int(c.CBLength) != len(c.Command()) {
				t.Fatalf("command length %d, bCBWCBLength %d", len(c.Command()), c.CBLength)
			}
		}
		s, err := ParseCSW(b)
		checkErr(t, err, len(b))
		_ = s.String()
		cdb, err := ParseCDB(b)
		checkErr(t, err, len(b))
		_ = cdb.String()
		q, err := ParseInquiry(b)
		checkErr(t, err, len(b))
		_ = q.String()
		c10, err := ParseCapacity10(b)
		checkErr(t, err, len(b))
		_ = c10.String()
		c16, err := ParseCapacity16(b)
		checkErr(t, err, len(b))
		_ = c16.String()
		sn, err := ParseSense(b)
		checkErr(t, err, len(b))
		_ = sn.String()
		for _, ten := range []bool{false, true} {
			m, err := ParseModeHeader(b, ten)
			checkErr(t, err, len(b))
			_ = m.String()
		}
	})
}

// FuzzDecoder feeds a control request and its response, then a bulk
// submission and completion, through the stateful decoder; an event
// Decoder.quiet passes over must decode to nothing (a CBW's data stage
// included).
func FuzzDecoder(f *testing.F) {
	f.Add(mustHex(f, "8006000200008200"), mustHex(f, km003cConfig))
	f.Add(mustHex(f, "8106002200004000"), mustHex(f, bootKeyboard))
	f.Add(mustHex(f, "a106002900000f00"), mustHex(f, "0a2908090032640000ff"))
	f.Fuzz(func(t *testing.T, setup, data []byte) {
		if len(setup) < 8 {
			return
		}
		ids := NewIdentities()
		d := NewDecoder(ids)
		p := NewPairer()
		var s [8]byte
		copy(s[:], setup)
		in := s[0]&0x80 != 0
		evs := []*usbmon.Event{
			{ID: 1, Type: usbmon.Submission, Transfer: usbmon.Control, Device: 2, In: in, Setup: s, Data: data, Length: uint32(len(data))},
			{ID: 1, Type: usbmon.Callback, Transfer: usbmon.Control, Device: 2, In: in, Data: data, Length: uint32(len(data)), SetupFlag: usbmon.SetupNone},
			{ID: 2, Type: usbmon.Submission, Transfer: usbmon.Bulk, Device: 2, Endpoint: 1, Data: data, Length: uint32(len(data)), SetupFlag: usbmon.SetupNone},
			{ID: 3, Type: usbmon.Callback, Transfer: usbmon.Bulk, Device: 2, Endpoint: 2, In: true, Data: data, Length: uint32(len(data)), SetupFlag: usbmon.SetupNone},
		}
		for _, e := range evs {
			pr, ok := p.Add(e)
			ids.Learn(e, pr, ok)
			quiet := d.quiet(e)
			if dd := d.Decode(e, pr, ok); quiet && (dd.Summary != "" || dd.Detail != nil || dd.Err != nil) {
				t.Fatalf("quiet, but decoded %q (%v) from %+v", dd.Summary, dd.Err, e)
			}
		}
		// The same transfers injected at capture start: learned, never paired.
		for _, e := range evs {
			c := *e
			c.Synthesized, c.ID = true, c.ID|1<<63
			pr, ok := p.Add(&c)
			if ok {
				t.Fatalf("synthesized event paired: %+v", pr)
			}
			ids.Learn(&c, pr, ok)
			_ = d.Decode(&c, pr, ok)
		}
	})
}

// FuzzPairer checks the pairing counts on arbitrary event sequences: every
// submission is paired, superseded, in flight or not tracked, every
// completion is paired or an orphan, and latencies are never negative.
func FuzzPairer(f *testing.F) {
	f.Add([]byte{'S', 1, 2, 0, 'C', 1, 2, 5, 'S', 1, 2, 9, 'S', 1, 2, 10, 'C', 1, 2, 12, 'E', 3, 2, 13, 'C', 7, 7, 20})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := &Pairer{MaxPending: 8}
		st := NewStats()
		st.MaxEndpoints = 4
		var subs, calls uint64
		var now int64
		for i := 0; i+4 <= len(b); i += 4 {
			typ := usbmon.EventType("SCE"[int(b[i])%3])
			now += int64(b[i+3])
			e := &usbmon.Event{ID: uint64(b[i+1] % 16), Type: typ, Device: b[i+2] % 4, Endpoint: b[i+2] >> 6, In: b[i+1]&0x80 != 0,
				Transfer: usbmon.TransferType(b[i+1] >> 5 & 3), Status: -int32(b[i+3] % 4), Sec: now / 1000000, Usec: int32(now % 1000000),
				Fields: usbmon.HasWallClock}
			switch typ {
			case usbmon.Submission:
				subs++
			case usbmon.Callback:
				calls++
			}
			pr, ok := p.Add(e)
			if ok && pr.Latency < 0 {
				t.Fatalf("negative latency %d", pr.Latency)
			}
			st.Add(e)
		}
		c := p.Counts()
		if c.Pairs+c.InFlight+c.Superseded+c.Overflow != subs {
			t.Fatalf("submissions %d, counts %+v", subs, c)
		}
		if c.Pairs+c.Orphans != calls {
			t.Fatalf("completions %d, counts %+v", calls, c)
		}
		if len(st.Endpoints()) > 4 {
			t.Fatalf("%d endpoints tracked", len(st.Endpoints()))
		}
	})
}
