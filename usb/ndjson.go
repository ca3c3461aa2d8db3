package usb

import (
	"encoding/json"

	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/usbmon"
)

// The NDJSON records of 'iotap usb read|pair|stats --json' (docs/ndjson.md
// is the reference; TestNDJSONDocs checks it lists exactly these fields).
// Every stream starts with an "input" record; times are ts_ns on the
// clock it names, durations *_ns; the endpoint is its address byte "ep"
// (bit 7 set for IN, as bEndpointAddress and tshark's
// usb.endpoint_address), the device its address "dev" on "bus".

// Record kinds of the USB streams.
const (
	KindEvent       = "usb_event"        // usb read: one usbmon event
	KindPair        = "usb_pair"         // usb pair: a completion with its submission
	KindUnmatched   = "usb_unmatched"    // usb pair --unmatched: a submission never completed
	KindPairSummary = "usb_pair_summary" // usb pair: the pairing counts, last
	KindDevice      = "usb_device"       // usb stats: one device
	KindEndpoint    = "usb_endpoint"     // usb stats: one endpoint
	KindStats       = "usb_summary"      // usb stats: the whole input, last
)

// Clock names the clock of the ts_ns fields of events read in format f:
// "realtime" (pcap, pcapng, binary: CLOCK_REALTIME), "usbmon_text" (the
// text API's microsecond stamp, which wraps every 4096 s).
func Clock(f usbmon.Format) string {
	switch f {
	case usbmon.Format1u, usbmon.Format1t:
		return "usbmon_text"
	case usbmon.FormatUnknown:
		return ""
	}
	return "realtime"
}

// AppendInput appends the "input" record that starts a USB stream: file
// ("-" for standard input) read in format f.
func AppendInput(b []byte, file string, f usbmon.Format) []byte {
	return ndjson.End(ndjson.Input(b, "usb", file, "usbmon "+f.String(), Clock(f)))
}

// EventEncoder appends the "usb_event" records of 'iotap usb read --json',
// the same fields as EventRecord, without allocating for events that have
// no decoded detail (the "decoded" object, descriptors and class data of
// the USB specification, is the one part written by encoding/json).
type EventEncoder struct {
	Identities *Identities // vidpid of the devices (nil: none)
	first      int64
	started    bool
	// The device of the previous record, looked up again only when the
	// address or the table changed (a map lookup per record otherwise).
	cIDs  *Identities
	cGen  uint64
	cBus  uint16
	cDev  uint8
	cInfo *DeviceInfo
	cOK   bool
	// The digits of the whole seconds of ts_ns and rel_ns, kept from one
	// record to the next.
	ts, rel ndjson.Seconds
}

// lookup is e.Identities.Lookup through the one-device cache.
func (e *EventEncoder) lookup(bus uint16, dev uint8) (*DeviceInfo, bool) {
	ids := e.Identities
	if ids == nil {
		return nil, false
	}
	if ids != e.cIDs || ids.gen != e.cGen || bus != e.cBus || dev != e.cDev {
		e.cInfo, e.cOK = ids.Lookup(bus, dev)
		e.cIDs, e.cGen, e.cBus, e.cDev = ids, ids.gen, bus, dev
	}
	return e.cInfo, e.cOK
}

// Append appends the record of ev, seq-th in the input, paired with p
// (when paired), decoded as d.
func (e *EventEncoder) Append(b []byte, seq uint64, ev *usbmon.Event, p Pair, paired bool, d Decoded) []byte {
	return e.append(b, seq, ev, &p, paired, &d)
}

// append is Append with the pair and the decoding by their addresses
// (Pipeline.WriteNDJSON).
func (e *EventEncoder) append(b []byte, seq uint64, ev *usbmon.Event, p *Pair, paired bool, d *Decoded) []byte {
	t := Micros(ev)
	if !e.started {
		e.first, e.started = t, true
	}
	// The members up to "length" are written with their keys as constants,
	// the bytes ndjson.Uint, Str and the others write (the golden tests of
	// cmd/iotap; TestEventEncoderRoundTrip and FuzzEventEncoder parse them
	// back with encoding/json).
	b = append(b, `{"kind":"usb_event","seq":`...)
	b = ndjson.AppendUint(b, seq)
	b = append(b, `,"ts_ns":`...)
	b = e.ts.AppendInt1000(b, t)
	b = append(b, `,"rel_ns":`...)
	b = e.rel.AppendInt1000(b, elapsed(e.first, t, ev.Fields&usbmon.HasWallClock == 0))
	b = append(b, `,"urb_id":"0x`...)
	b = ndjson.AppendHexUint64(b, ev.ID)
	b = append(b, `","urb_type":"`...)
	b = append(b, byte(ev.Type))
	b = append(b, `","transfer":`...)
	switch ev.Transfer { // the names TransferType.String gives, quoted
	case usbmon.Control:
		b = append(b, `"ctrl"`...)
	case usbmon.Bulk:
		b = append(b, `"bulk"`...)
	case usbmon.Interrupt:
		b = append(b, `"intr"`...)
	case usbmon.Isochronous:
		b = append(b, `"iso"`...)
	default:
		b = ndjson.AppendString(b, ev.Transfer.String())
	}
	b = append(b, `,"bus":`...)
	b = ndjson.AppendUint(b, uint64(ev.Bus))
	b = append(b, `,"dev":`...)
	b = ndjson.AppendUint(b, uint64(ev.Device))
	b = append(b, `,"ep":`...)
	b = ndjson.AppendUint(b, uint64(ev.EndpointAddress()))
	if ev.Type != usbmon.Submission {
		b = append(b, `,"status":`...)
		b = ndjson.AppendInt(b, int64(ev.Status))
		if ev.Status == 0 {
			b = append(b, `,"status_name":"OK"`...)
		} else {
			b = append(b, `,"status_name":`...)
			b = ndjson.AppendString(b, StatusName(ev.Status))
		}
	}
	b = append(b, `,"length":`...)
	b = ndjson.AppendUint(b, uint64(ev.Length))
	var req Setup
	var hasReq bool
	if ev.HasSetup() && ev.Type == usbmon.Submission {
		b = ndjson.Hex(b, "setup", ev.Setup[:])
		if s, err := ParseSetup(ev.Setup[:]); err == nil {
			req, hasReq = s, true
		}
	}
	// The three members below with their keys as constants too (a member
	// precedes them: ndjson.Key would write the same comma).
	if ev.HasData() {
		b = append(b, `,"data":"`...)
		b = ndjson.AppendHex(b, ev.Data)
		b = append(b, '"')
	}
	if ev.Type != usbmon.Submission {
		if paired {
			b = append(b, `,"latency_ns":`...)
			b = ndjson.AppendInt1000(b, p.Latency)
			b = append(b, `,"submit_seq":`...)
			b = ndjson.AppendUint(b, p.Submit.Seq+1)
		} else {
			b = ndjson.Null(b, "latency_ns")
			b = ndjson.Null(b, "submit_seq")
		}
	}
	if paired && p.Submit.HasSetup {
		req, hasReq = p.Submit.Setup, true
	}
	if hasReq {
		b = ndjson.Str(b, "request", req.Name(ClassHint(e.Identities, ev.Bus, ev.Device, req)))
	}
	if d.Summary != "" {
		b = ndjson.Str(b, "summary", d.Summary)
	}
	if d.Detail != nil {
		if j, err := json.Marshal(d.Detail); err == nil {
			b = ndjson.Raw(b, "decoded", j)
		}
	}
	if d.Err != nil {
		b = ndjson.Str(b, "decode_error", d.Err.Error())
	}
	if info, ok := e.lookup(ev.Bus, ev.Device); ok && info.HasID {
		b = appendVIDPID(b, info.Vendor, info.Product)
	}
	if ev.Synthesized {
		b = ndjson.Bool(b, "synthesized", true)
	}
	return ndjson.End(b)
}

func appendVIDPID(b []byte, v, p uint16) []byte {
	const hx = "0123456789abcdef"
	// A member always precedes it: the comma ndjson.Key would write.
	return append(b, ',', '"', 'v', 'i', 'd', 'p', 'i', 'd', '"', ':', '"', hx[v>>12], hx[v>>8&15], hx[v>>4&15], hx[v&15], ':', hx[p>>12], hx[p>>8&15], hx[p>>4&15], hx[p&15], '"')
}
