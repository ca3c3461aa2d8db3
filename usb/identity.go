package usb

import (
	"fmt"
	"github.com/iotap/iotap/usbmon"
)

// DeviceInfo is what is known about the device at a bus address.
type DeviceInfo struct {
	Bus     uint16 `json:"bus"`
	Device  uint8  `json:"device"`
	HasID   bool   `json:"-"` // Vendor and Product are known
	Vendor  uint16 `json:"vendor"`
	Product uint16 `json:"product"`
	Class   uint8  `json:"class"`
	// Manufacturer, ProductName and Serial are the device's strings, as far
	// as they were captured (usbmon text keeps 32 data bytes: long strings
	// are cut).
	Manufacturer string `json:"manufacturer,omitempty"`
	ProductName  string `json:"product_name,omitempty"`
	Serial       string `json:"serial,omitempty"`
	// Interfaces maps interface number to interface class (first
	// alternate setting), learned from the configuration descriptor.
	Interfaces map[uint8]uint8 `json:"interfaces,omitempty"`
	// Endpoints maps endpoint address to interface number, from the
	// configuration descriptor.
	Endpoints map[uint8]uint8 `json:"-"`
	// Reports holds the HID report descriptor of each interface whose
	// GET_DESCRIPTOR(REPORT) was captured whole: interrupt transfers of
	// that interface are then decoded field by field.
	Reports map[uint8]*ReportDescriptor `json:"-"`
	// Source is "capture" or "sysfs".
	Source string `json:"source"`

	stringIdx [3]uint8 // iManufacturer, iProduct, iSerialNumber
	strings   map[uint8]string
}

// InterfaceClass returns the class of interface n, 0 when unknown.
func (d *DeviceInfo) InterfaceClass(n uint8) uint8 {
	if c, ok := d.Interfaces[n]; ok {
		return c
	}
	if d.Class != 0 && d.Class != ClassMisc && d.Class != ClassPerInterface {
		return d.Class
	}
	return 0
}

// HasInterfaceClass reports whether any interface has class c.
func (d *DeviceInfo) HasInterfaceClass(c uint8) bool {
	if d.Class == c {
		return true
	}
	for _, x := range d.Interfaces {
		if x == c {
			return true
		}
	}
	return false
}

type devAddr struct {
	bus uint16
	dev uint8
}

// Identities learns device identities from the enumeration traffic of a
// capture (device, configuration and string descriptors read with
// GET_DESCRIPTOR, per bus and address) and from sysfs for devices that
// enumerated before the capture started. A SET_ADDRESS moves what was
// learned at address 0 to the new address and forgets what was known
// about the previous device at that address.
type Identities struct {
	devs map[devAddr]*DeviceInfo
	// injected holds the setup packets of synthesized submissions (the
	// descriptors injected at capture start) until their completion.
	injected map[uint64]Setup
	// gen counts the changes of devs' keys (a device added, moved or
	// removed; its fields may change in place): lookups cached by
	// (bus, device) are valid while it stays the same.
	gen uint64
}

// NewIdentities returns an empty table.
func NewIdentities() *Identities { return &Identities{devs: map[devAddr]*DeviceInfo{}} }

// Lookup returns what is known about bus:dev.
func (ids *Identities) Lookup(bus uint16, dev uint8) (*DeviceInfo, bool) {
	if ids == nil {
		return nil, false
	}
	d, ok := ids.devs[devAddr{bus, dev}]
	return d, ok
}

// Names returns the identity of bus:dev as the stats records and tables
// name it: "vvvv:pppp" when the device descriptor was seen, and the
// manufacturer and product strings ("" for what is not known).
func (ids *Identities) Names(bus uint16, dev uint8) (vidpid, manufacturer, product string) {
	info, ok := ids.Lookup(bus, dev)
	if !ok {
		return "", "", ""
	}
	if info.HasID {
		vidpid = fmt.Sprintf("%04x:%04x", info.Vendor, info.Product)
	}
	return vidpid, info.Manufacturer, info.ProductName
}

// Devices returns every known device.
func (ids *Identities) Devices() []*DeviceInfo {
	var out []*DeviceInfo
	for _, d := range ids.devs {
		out = append(out, d)
	}
	return out
}

// Set records d (from sysfs or the caller) at d.Bus:d.Device.
func (ids *Identities) Set(d DeviceInfo) {
	c := d
	ids.devs[devAddr{d.Bus, d.Device}] = &c
	ids.gen++
}

// maxDevices bounds the devices an Identities table learns from a capture
// (a real system has at most 127 per bus; a corrupt capture could claim
// millions).
const maxDevices = 1 << 12

func (ids *Identities) get(bus uint16, dev uint8) *DeviceInfo {
	k := devAddr{bus, dev}
	d := ids.devs[k]
	if d == nil && len(ids.devs) >= maxDevices {
		return &DeviceInfo{Bus: bus, Device: dev} // learned, then forgotten
	}
	if d == nil {
		d = &DeviceInfo{Bus: bus, Device: dev, Source: "capture"}
		ids.devs[k] = d
		ids.gen++
	}
	return d
}

// maxInjected bounds the synthesized submissions waiting for their
// completion (injection writes each completion right after its
// submission; a corrupt capture could hold millions of submissions).
const maxInjected = 1 << 12

// Learn learns from every event of a stream, given what a Pairer returned
// for it: from paired control completions (Observe), and from the
// descriptors injected at capture start (usbmon.Event.Synthesized), which a
// Pairer never pairs because they are not traffic. Those are paired here,
// by URB id, only to learn the identities, interfaces and HID report
// descriptors they carry, so that a capture started after enumeration
// decodes its class traffic. What they teach is marked Source "sysfs".
func (ids *Identities) Learn(ev *usbmon.Event, p Pair, paired bool) {
	if !ev.Synthesized {
		if paired {
			ids.Observe(p, ev)
		}
		return
	}
	if ev.Transfer != usbmon.Control {
		return
	}
	switch ev.Type {
	case usbmon.Submission:
		if !ev.HasSetup() {
			return
		}
		if ids.injected == nil {
			ids.injected = map[uint64]Setup{}
		}
		if len(ids.injected) >= maxInjected {
			return
		}
		s, _ := ParseSetup(ev.Setup[:])
		ids.injected[ev.ID] = s
	case usbmon.Callback:
		s, ok := ids.injected[ev.ID]
		if !ok {
			return
		}
		delete(ids.injected, ev.ID)
		ids.Observe(Pair{Key: KeyOf(ev), Submit: Submission{Setup: s, HasSetup: true}, Status: ev.Status, Length: ev.Length}, ev)
		if d, ok := ids.Lookup(ev.Bus, ev.Device); ok {
			d.Source = "sysfs"
		}
	}
}

// Observe learns from a completed control transfer: p is the completion
// paired with its submission, ev the completion event (its data).
func (ids *Identities) Observe(p Pair, ev *usbmon.Event) {
	if !p.Submit.HasSetup || ev.Status != 0 || ev.Transfer != usbmon.Control {
		return
	}
	s := p.Submit.Setup
	if s.Kind() != KindStandard {
		return
	}
	switch s.Request {
	case ReqSetAddress:
		if s.Recipient() != RecipientDevice || s.Value == 0 || s.Value > 127 {
			return
		}
		from := devAddr{ev.Bus, ev.Device}
		to := devAddr{ev.Bus, uint8(s.Value)}
		delete(ids.devs, to)
		ids.gen++
		if d := ids.devs[from]; d != nil {
			delete(ids.devs, from)
			d.Device = to.dev
			ids.devs[to] = d
		}
	case ReqGetDescriptor:
		if !s.In() || !ev.HasData() {
			return
		}
		switch s.Recipient() {
		case RecipientDevice:
			ids.learnDescriptor(ev.Bus, ev.Device, s, ev.Data)
		case RecipientInterface:
			if s.DescriptorType() != DescReport || len(ev.Data) < int(ev.Length) {
				return // partial report descriptors would misplace fields
			}
			rd, err := ParseReportDescriptor(ev.Data)
			if err != nil || len(rd.Fields) == 0 {
				return
			}
			d := ids.get(ev.Bus, ev.Device)
			if d.Reports == nil {
				d.Reports = map[uint8]*ReportDescriptor{}
			}
			d.Reports[uint8(s.Index)] = &rd
		}
	}
}

// InterfaceOf returns the interface number and class that endpoint address
// ep of bus:dev belongs to, from the captured configuration descriptor.
func (ids *Identities) InterfaceOf(bus uint16, dev, ep uint8) (num, class uint8, ok bool) {
	d, found := ids.Lookup(bus, dev)
	if !found {
		return 0, 0, false
	}
	num, ok = d.Endpoints[ep]
	if !ok {
		return 0, 0, false
	}
	return num, d.Interfaces[num], true
}

// ReportDescriptorFor returns the HID report descriptor that applies to
// endpoint address ep of bus:dev, if it was captured.
func (ids *Identities) ReportDescriptorFor(bus uint16, dev, ep uint8) (*ReportDescriptor, bool) {
	d, ok := ids.Lookup(bus, dev)
	if !ok || d.Reports == nil {
		return nil, false
	}
	iface, ok := d.Endpoints[ep]
	if !ok {
		return nil, false
	}
	rd, ok := d.Reports[iface]
	return rd, ok
}

func (ids *Identities) learnDescriptor(bus uint16, dev uint8, s Setup, data []byte) {
	switch s.DescriptorType() {
	case DescDevice:
		dd, err := ParseDeviceDescriptor(data)
		if dd.Len < 12 && err != nil {
			if dd.Len >= 8 {
				ids.get(bus, dev).Class = dd.Class
			}
			return
		}
		d := ids.get(bus, dev)
		if d.HasID && (d.Vendor != dd.Vendor || d.Product != dd.Product) {
			// Another device answers at this address: start over.
			*d = DeviceInfo{Bus: bus, Device: dev, Source: "capture"}
		}
		d.Source = "capture"
		d.HasID, d.Vendor, d.Product, d.Class = true, dd.Vendor, dd.Product, dd.Class
		if dd.Len >= 18 {
			d.stringIdx = [3]uint8{dd.ManufacturerIndex, dd.ProductIndex, dd.SerialIndex}
			d.resolveStrings()
		}
	case DescConfiguration:
		c, _ := ParseConfiguration(data)
		if len(c.Interfaces) == 0 {
			return
		}
		d := ids.get(bus, dev)
		if d.Interfaces == nil {
			d.Interfaces = map[uint8]uint8{}
			d.Endpoints = map[uint8]uint8{}
		}
		for _, i := range c.Interfaces {
			if i.AltSetting == 0 {
				d.Interfaces[i.Number] = i.Class
			}
			for _, e := range i.Endpoints {
				d.Endpoints[e.Address] = i.Number
			}
		}
	case DescString:
		if s.DescriptorIndex() == 0 {
			return
		}
		str, err := ParseStringDescriptor(data, false)
		if err != nil && str.Text == "" {
			return
		}
		d := ids.get(bus, dev)
		if d.strings == nil {
			d.strings = map[uint8]string{}
		}
		d.strings[s.DescriptorIndex()] = str.Text
		d.resolveStrings()
	}
}

func (d *DeviceInfo) resolveStrings() {
	get := func(i uint8, dst *string) {
		if i != 0 {
			if s, ok := d.strings[i]; ok {
				*dst = s
			}
		}
	}
	get(d.stringIdx[0], &d.Manufacturer)
	get(d.stringIdx[1], &d.ProductName)
	get(d.stringIdx[2], &d.Serial)
}
