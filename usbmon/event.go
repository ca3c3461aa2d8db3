package usbmon

import "fmt"

// EventType is the kind of event: submission, callback (completion) or
// submission error. The values are the kernel's characters.
type EventType byte

// Event types.
const (
	Submission  EventType = 'S'
	Callback    EventType = 'C'
	SubmitError EventType = 'E'
)

func (t EventType) String() string {
	switch t {
	case Submission, Callback, SubmitError:
		return string(rune(t))
	}
	return fmt.Sprintf("EventType(%#x)", byte(t))
}

// TransferType is the transfer type of the endpoint. The values are the ones
// of the binary API (usbmon_packet.xfer_type) and of pcap link types 189/220.
type TransferType uint8

// Transfer types.
const (
	Isochronous TransferType = 0
	Interrupt   TransferType = 1
	Control     TransferType = 2
	Bulk        TransferType = 3
)

// Letter returns the letter the text API uses: Z, I, C or B.
func (t TransferType) Letter() byte {
	switch t {
	case Isochronous:
		return 'Z'
	case Interrupt:
		return 'I'
	case Control:
		return 'C'
	}
	return 'B'
}

func (t TransferType) String() string {
	switch t {
	case Isochronous:
		return "iso"
	case Interrupt:
		return "intr"
	case Control:
		return "ctrl"
	case Bulk:
		return "bulk"
	}
	return fmt.Sprintf("TransferType(%d)", uint8(t))
}

// Flag values of Event.SetupFlag and Event.DataFlag. They are the kernel's
// own bytes, kept as they are so that every format round-trips.
const (
	// SetupPresent (0) in SetupFlag: the 8-byte setup packet was captured
	// (text shows "s" followed by the five setup fields).
	SetupPresent byte = 0
	// SetupNone ('-') in SetupFlag: the event carries no setup packet (not a
	// control submission). Any other value (usually 'Z') means a setup packet
	// existed but was not captured; text shows "Z __ __ ____ ____ ____".
	SetupNone byte = '-'
	// DataPresent (0) in DataFlag: Data holds captured bytes (text shows
	// "="). Other values say why there are none: '<' IN submission,
	// '>' OUT callback, 'Z' no buffer, 'D' DMA/scatter-gather not addressable,
	// 'E' submission error, 'L' length was zero (text only).
	DataPresent byte = 0
)

// Fields tells which groups of fields of an Event are meaningful; the rest
// are zero because the source format does not carry them.
type Fields uint8

// Field groups.
const (
	// HasWallClock: Sec and Usec hold the wall clock (binary API, pcap).
	HasWallClock Fields = 1 << iota
	// HasTextStamp: TextStamp holds the text API's microsecond stamp.
	HasTextStamp
	// HasBus: Bus is known (absent from '1t' lines).
	HasBus
	// HasExtended: Interval, StartFrame, XferFlags and NDesc are known
	// (64-byte header, link type 220). The '1u' text carries Interval and
	// StartFrame only for interrupt/isochronous events; it sets HasTextExt.
	HasExtended
	// HasTextExt: Interval (and for isochronous StartFrame, ErrorCount,
	// NumDesc and up to 5 ISO descriptors) came from a '1u' line.
	HasTextExt
	// HasLengths: CapLen is known (binary sources).
	HasLengths
)

// ISODesc is one isochronous frame descriptor. For submissions Length is the
// requested length, for callbacks the actual length.
type ISODesc struct {
	Status int32
	Offset uint32
	Length uint32
}

// Event is one usbmon event: a URB submission, its callback or a
// submission error. It holds the union of what the text and binary APIs
// carry; Fields says which parts the source provided.
//
// Ownership: when an Event is filled by Reader.ReadInto, Data and ISO alias
// the reader's internal buffers and are valid only until the next ReadInto
// on that reader. Clone makes an independent copy.
type Event struct {
	// ID identifies the URB from submission to callback (a kernel pointer:
	// ids are reused once the URB is freed).
	ID uint64
	// Type is S, C or E.
	Type EventType
	// Transfer is the endpoint's transfer type.
	Transfer TransferType
	// In is the direction: true for device-to-host.
	In bool
	// Bus is the bus number (0 in '1t' text, see HasBus).
	Bus uint16
	// Device is the device address.
	Device uint8
	// Endpoint is the endpoint number, 0..15, without the direction bit.
	Endpoint uint8
	// Status is the URB status (-EINPROGRESS = -115 on submissions) or, for
	// E events, the submission error.
	Status int32

	// SetupFlag and Setup: see SetupPresent / SetupNone.
	SetupFlag byte
	Setup     [8]byte

	// Interval of interrupt and isochronous URBs.
	Interval int32
	// StartFrame of isochronous URBs.
	StartFrame int32
	// ErrorCount and NumDesc (urb->number_of_packets) of isochronous URBs.
	ErrorCount int32
	NumDesc    int32
	// ISO holds the isochronous descriptors the source delivered (up to 128
	// from the binary API, up to 5 from text). See the ownership note.
	ISO []ISODesc
	// NDesc is the number of ISO descriptors in the binary record
	// (usbmon_packet.ndesc).
	NDesc uint32

	// Length is the URB length: requested on submissions, actual on
	// callbacks (for isochronous callbacks the text API shows the buffer
	// length). It can exceed len(Data).
	Length uint32
	// CapLen is the binary header's len_cap: bytes delivered after the
	// header, ISO descriptors (16 bytes each) included.
	CapLen uint32
	// DataFlag says whether Data is present: see DataPresent.
	DataFlag byte
	// Data is the captured payload (at most 32 bytes from text). See the
	// ownership note.
	Data []byte
	// XferFlags is a copy of urb->transfer_flags.
	XferFlags uint32

	// Sec and Usec are the wall clock of the binary API (HasWallClock).
	Sec  int64
	Usec int32
	// TextStamp is the text API's timestamp in microseconds of the
	// monotonic clock, modulo 4096 s (it wraps; HasTextStamp).
	TextStamp uint32

	// Fields says which fields the source provided.
	Fields Fields
	// Synthesized marks an event iotap made rather than captured: the
	// GET_DESCRIPTOR transfers written at capture start from sysfs (see
	// usb.DescriptorEvents). In pcapng it is the packet comment
	// SynthesizedComment; analyses (pairing, statistics, latency) skip it.
	Synthesized bool
	// Format is the format the event was read from.
	Format Format
}

// EndpointAddress returns the endpoint address as USB writes it: number
// plus 0x80 for IN.
func (e *Event) EndpointAddress() uint8 {
	if e.In {
		return e.Endpoint | 0x80
	}
	return e.Endpoint
}

// HasSetup reports whether Setup holds a captured setup packet.
func (e *Event) HasSetup() bool { return e.SetupFlag == SetupPresent }

// HasData reports whether Data holds captured bytes.
func (e *Event) HasData() bool { return e.DataFlag == DataPresent && len(e.Data) > 0 }

// Clone returns a copy of e that shares no memory with any reader.
func (e *Event) Clone() *Event {
	c := *e
	if e.Data != nil {
		c.Data = append([]byte(nil), e.Data...)
	}
	if e.ISO != nil {
		c.ISO = append([]ISODesc(nil), e.ISO...)
	}
	return &c
}

// reset clears e but keeps the capacity of its slices.
func (e *Event) reset() {
	d, iso := e.Data[:0], e.ISO[:0]
	*e = Event{}
	e.Data, e.ISO = d, iso
}

// SynthesizedComment starts the pcapng packet comment of a synthesized
// event (Event.Synthesized); readers recognise the prefix.
const SynthesizedComment = "iotap: synthesized at capture start from sysfs descriptors, not captured traffic"
