package usb

import (
	"errors"
	"fmt"

	"github.com/iotap/iotap/usbmon"
)

// Decoded is the protocol meaning of one event.
type Decoded struct {
	// Summary is a one-line description ("" when there is nothing to
	// decode, e.g. an interrupt transfer of an unknown device).
	Summary string `json:"summary,omitempty"`
	// Detail is the typed value: Setup, DeviceDescriptor,
	// ConfigDescriptor, StringDescriptor, BOSDescriptor, ReportDescriptor,
	// CBW, CSW, Inquiry, Capacity, Sense, LineCoding, ...
	Detail any `json:"detail,omitempty"`
	// Err is set when the payload did not decode completely (often
	// because the capture kept only part of it); Summary and Detail then
	// hold what was decoded.
	Err error `json:"-"`
}

type mscState struct {
	cdb   CDB
	valid bool
}

// Decoder decodes events in capture order. It remembers what it needs
// across events: the identities of devices (to pick class decoders) and the
// last mass storage command of each device (to decode its data stage).
type Decoder struct {
	ids *Identities
	msc map[devAddr]mscState
}

// NewDecoder returns a decoder that consults ids (may be nil) for
// interface classes.
func NewDecoder(ids *Identities) *Decoder {
	return &Decoder{ids: ids, msc: map[devAddr]mscState{}}
}

// Decode decodes ev. For a completion, p and paired are what a Pairer
// returned for it (the submission's setup packet says how to read a
// control response). Decode does not allocate for events it has nothing
// to say about.
func (d *Decoder) Decode(ev *usbmon.Event, p Pair, paired bool) Decoded {
	return d.decode(ev, &p, paired)
}

// decode is Decode with the pair by its address (Pipeline.each).
func (d *Decoder) decode(ev *usbmon.Event, p *Pair, paired bool) Decoded {
	switch ev.Transfer {
	case usbmon.Control:
		return d.control(ev, p, paired)
	case usbmon.Bulk:
		return d.bulk(ev)
	case usbmon.Interrupt:
		return d.interrupt(ev)
	}
	return Decoded{}
}

// quiet reports that decode has nothing to say about ev, cheaply: a bulk
// event without data, or whose data is neither a CBW nor a CSW while no
// mass storage command awaits its data stage (bulk). Most events of a
// capture are such bulk transfers; a false answer says nothing. The
// common case, checked here, is small enough to be inlined in the loops
// that ask for every event (Pipeline.writeLines): data of a length
// other than a CBW's or a CSW's, no command waiting.
func (d *Decoder) quiet(ev *usbmon.Event) bool {
	// n&^18 is 13 for the lengths 13 (CSWLen), 15, 29 and 31 (CBWLen).
	return ev.Transfer == usbmon.Bulk && len(ev.Data)&^18 != CSWLen && len(d.msc) == 0 || d.quietAll(ev)
}

// quietAll is quiet for every event.
func (d *Decoder) quietAll(ev *usbmon.Event) bool {
	return ev.Transfer == usbmon.Bulk && (!ev.HasData() || len(d.msc) == 0 && !IsCBW(ev.Data) && !IsCSW(ev.Data))
}

// interrupt decodes HID reports on the interrupt endpoints of interfaces
// whose report descriptor was captured.
func (d *Decoder) interrupt(ev *usbmon.Event) Decoded {
	if !ev.HasData() || ev.Status < 0 {
		return Decoded{}
	}
	kind := ""
	switch {
	case ev.In && ev.Type == usbmon.Callback:
		kind = "input"
	case !ev.In && ev.Type == usbmon.Submission:
		kind = "output"
	default:
		return Decoded{}
	}
	if _, class, ok := d.ids.InterfaceOf(ev.Bus, ev.Device, ev.EndpointAddress()); ok && class == ClassCDC && kind == "input" {
		return result(ParseCDCNotification(ev.Data))
	}
	rd, ok := d.ids.ReportDescriptorFor(ev.Bus, ev.Device, ev.EndpointAddress())
	if !ok {
		return Decoded{}
	}
	s, err := rd.DecodeReport(kind, ev.Data)
	return Decoded{Summary: "HID " + kind + ": " + s, Err: err}
}

func (d *Decoder) hint(bus uint16, dev uint8, s Setup) uint8 {
	info, ok := d.ids.Lookup(bus, dev)
	if !ok {
		return 0
	}
	if s.Recipient() == RecipientInterface {
		return info.InterfaceClass(uint8(s.Index))
	}
	if s.Recipient() == RecipientDevice || s.Recipient() == RecipientOther {
		return info.Class
	}
	return 0
}

func (d *Decoder) control(ev *usbmon.Event, p *Pair, paired bool) Decoded {
	switch ev.Type {
	case usbmon.Submission:
		if !ev.HasSetup() {
			return Decoded{}
		}
		s, _ := ParseSetup(ev.Setup[:])
		out := Decoded{Summary: s.Describe(d.hint(ev.Bus, ev.Device, s)), Detail: s}
		if !s.In() && ev.HasData() {
			if x, ok := d.outData(ev, s); ok {
				out.Summary += ": " + x.Summary
				out.Detail, out.Err = x.Detail, x.Err
			}
		}
		return out
	case usbmon.Callback:
		if !paired || !p.Submit.HasSetup {
			return Decoded{}
		}
		s := p.Submit.Setup
		if !s.In() || !ev.HasData() || ev.Status < 0 && ev.Status != -121 {
			return Decoded{}
		}
		return d.inData(ev, s)
	}
	return Decoded{}
}

// outData decodes the data stage of an OUT control request.
func (d *Decoder) outData(ev *usbmon.Event, s Setup) (Decoded, bool) {
	if s.Kind() != KindClass {
		return Decoded{}, false
	}
	switch s.requestClass(d.hint(ev.Bus, ev.Device, s)) {
	case ClassCDC:
		if s.Request == CDCSetLineCoding {
			l, err := ParseLineCoding(ev.Data)
			return Decoded{Summary: l.String(), Detail: l, Err: err}, true
		}
	case ClassHID:
		if s.Request != HIDSetReport {
			break
		}
		info, ok := d.ids.Lookup(ev.Bus, ev.Device)
		if !ok || info.Reports == nil || info.Reports[uint8(s.Index)] == nil {
			break
		}
		kind := hidReportType(uint8(s.Value >> 8))
		r, err := info.Reports[uint8(s.Index)].DecodeReport(kind, ev.Data)
		return Decoded{Summary: r, Err: err}, true
	}
	return Decoded{}, false
}

func result[T fmt.Stringer](v T, err error) Decoded {
	return Decoded{Summary: v.String(), Detail: v, Err: err}
}

// inData decodes the data stage of an IN control request.
func (d *Decoder) inData(ev *usbmon.Event, s Setup) Decoded {
	data := ev.Data
	if s.Kind() == KindClass {
		switch s.requestClass(d.hint(ev.Bus, ev.Device, s)) {
		case ClassHub:
			switch {
			case s.Request == ReqGetDescriptor:
				return result(ParseHubDescriptor(data))
			case s.Request == ReqGetStatus && s.Recipient() == RecipientOther:
				return result(ParsePortStatus(data))
			}
		case ClassCDC:
			if s.Request == CDCGetLineCoding {
				return result(ParseLineCoding(data))
			}
		case ClassMassStorage:
			if s.Request == MSCGetMaxLUN && len(data) >= 1 {
				return Decoded{Summary: fmt.Sprintf("max_lun=%d", data[0]), Detail: data[0]}
			}
		}
		return Decoded{}
	}
	if s.Kind() != KindStandard {
		return Decoded{}
	}
	switch s.Request {
	case ReqGetDescriptor:
		out := decodeDescriptor(s, data)
		if out.Err != nil && errors.Is(out.Err, ErrShort) {
			switch {
			case len(data) < int(ev.Length):
				out.Err = fmt.Errorf("capture kept %d of %d bytes: %w", len(data), ev.Length, out.Err)
			case len(data) >= int(s.Length):
				// The host asked for no more (the 8-byte device
				// descriptor read of an enumeration): not an error.
				out.Err = nil
			}
		}
		return out
	case ReqGetConfiguration:
		if len(data) >= 1 {
			return Decoded{Summary: fmt.Sprintf("config=%d", data[0]), Detail: data[0]}
		}
	case ReqGetInterface:
		if len(data) >= 1 {
			return Decoded{Summary: fmt.Sprintf("alt=%d", data[0]), Detail: data[0]}
		}
	case ReqGetStatus:
		if len(data) >= 2 {
			return Decoded{Summary: fmt.Sprintf("status=0x%04x", le16(data)), Detail: le16(data)}
		}
	}
	return Decoded{}
}

// DecodeDescriptor decodes the response to GET_DESCRIPTOR request s.
func DecodeDescriptor(s Setup, data []byte) Decoded { return decodeDescriptor(s, data) }

func decodeDescriptor(s Setup, data []byte) Decoded {
	switch s.DescriptorType() {
	case DescDevice:
		return result(ParseDeviceDescriptor(data))
	case DescConfiguration, DescOtherSpeedConfiguration:
		return result(ParseConfiguration(data))
	case DescString:
		return result(ParseStringDescriptor(data, s.DescriptorIndex() == 0))
	case DescBOS:
		return result(ParseBOS(data))
	case DescDeviceQualifier:
		return result(ParseDeviceQualifier(data))
	case DescInterface:
		return result(ParseInterfaceDescriptor(data))
	case DescEndpoint:
		return result(ParseEndpointDescriptor(data))
	case DescHID:
		return result(ParseHIDDescriptor(data))
	case DescReport:
		rd, err := ParseReportDescriptor(data)
		return Decoded{Summary: rd.Summary(), Detail: rd, Err: err}
	case DescHub, DescSSHub:
		return result(ParseHubDescriptor(data))
	}
	return Decoded{}
}

// bulk decodes the Bulk-Only Transport: CBW on OUT submissions, CSW on IN
// completions, and the data stage of INQUIRY, READ CAPACITY and REQUEST
// SENSE on the IN completion that follows its CBW.
func (d *Decoder) bulk(ev *usbmon.Event) Decoded {
	if !ev.HasData() {
		return Decoded{}
	}
	k := devAddr{ev.Bus, ev.Device}
	switch {
	case !ev.In && ev.Type == usbmon.Submission && IsCBW(ev.Data):
		c, err := ParseCBW(ev.Data)
		if _, known := d.msc[k]; err == nil && (known || len(d.msc) < maxDevices) {
			cdb, _ := ParseCDB(c.Command())
			cdb.Raw = nil
			d.msc[k] = mscState{cdb: cdb, valid: true}
		}
		return result(c, err)
	case ev.In && ev.Type == usbmon.Callback && IsCSW(ev.Data):
		delete(d.msc, k)
		return result(ParseCSW(ev.Data))
	case ev.In && ev.Type == usbmon.Callback:
		st, ok := d.msc[k]
		if !ok || !st.valid || ev.Status < 0 {
			return Decoded{}
		}
		st.valid = false // one data stage per command
		d.msc[k] = st
		switch st.cdb.Opcode {
		case SCSIInquiry:
			if !st.cdb.EVPD {
				return result(ParseInquiry(ev.Data))
			}
		case SCSIReadCapacity10:
			return result(ParseCapacity10(ev.Data))
		case SCSIServiceActionIn16:
			if st.cdb.ServiceAction == 0x10 {
				return result(ParseCapacity16(ev.Data))
			}
		case SCSIRequestSense:
			return result(ParseSense(ev.Data))
		case SCSIModeSense6, SCSIModeSense10:
			return result(ParseModeHeader(ev.Data, st.cdb.Opcode == SCSIModeSense10))
		}
	}
	return Decoded{}
}
