package usb

import (
	"strings"

	"github.com/iotap/iotap/filter"
	"github.com/iotap/iotap/usbmon"
)

// FilterFields returns the fields a display filter (package filter) can
// name on usbmon events. They are tshark's usb.* fields, with the same
// names, values and presence: usb.endpoint_address (0x81 for EP 1 IN),
// usb.device_address, usb.bus_id, usb.transfer_type (0 iso, 1 intr, 2
// ctrl, 3 bulk), usb.urb_type ('S', 'C', 'E'), usb.urb_status, usb.urb_len,
// usb.data_len, usb.bmRequestType, and usb.setup.bRequest and wLength of
// standard requests, and so on (tshark splits wValue and wIndex by request
// and gives class requests to class dissectors: iotap's usb.setup.request,
// value, index and length are the raw setup fields of every control
// submission);
// short aliases (usb.ep, usb.dev, usb.bus, usb.type, usb.status, usb.len,
// usb.dir) name the same fields. usb.vid and usb.pid, iotap's own, are
// the vendor and product ids ids has learned for the event's device
// (absent until its device descriptor has been seen); ids may be nil.
func FilterFields(ids *Identities) *filter.Table[usbmon.Event] {
	u := func(v uint64) (filter.Int, bool) { return filter.Uint(v), true }
	always := func(get func(ev *usbmon.Event) uint64) func(*usbmon.Event) (filter.Int, bool) {
		return func(ev *usbmon.Event) (filter.Int, bool) { return u(get(ev)) }
	}
	when := func(flag usbmon.Fields, get func(ev *usbmon.Event) uint64) func(*usbmon.Event) (filter.Int, bool) {
		return func(ev *usbmon.Event) (filter.Int, bool) {
			return filter.Uint(get(ev)), ev.Fields&flag != 0
		}
	}
	setup := func(get func(s *[8]byte) uint64) func(*usbmon.Event) (filter.Int, bool) {
		return func(ev *usbmon.Event) (filter.Int, bool) {
			return filter.Uint(get(&ev.Setup)), ev.HasSetup() && ev.Transfer == usbmon.Control
		}
	}
	// tshark's usb.setup.* fields exist for standard requests whose
	// recipient is the device or an endpoint; requests to an interface go
	// to the interface class's dissector (usbhid.setup.*, ...).
	standard := func(get func(s *[8]byte) uint64) func(*usbmon.Event) (filter.Int, bool) {
		return func(ev *usbmon.Event) (filter.Int, bool) {
			rt := ev.Setup[0]
			std := rt&0x60 == 0 && (rt&0x1f == 0 || rt&0x1f == 2)
			return filter.Uint(get(&ev.Setup)), ev.HasSetup() && ev.Transfer == usbmon.Control && std
		}
	}
	le16 := func(s *[8]byte, i int) uint64 { return uint64(s[i]) | uint64(s[i+1])<<8 }
	ident := func(get func(d *DeviceInfo) uint64) func(*usbmon.Event) (filter.Int, bool) {
		return func(ev *usbmon.Event) (filter.Int, bool) {
			d, ok := ids.Lookup(ev.Bus, ev.Device)
			if !ok || !d.HasID {
				return filter.Int{}, false
			}
			return filter.Uint(get(d)), true
		}
	}
	t := filter.NewTable(
		filter.Field[usbmon.Event]{Name: "usb.urb_id", Doc: "URB id (kernel pointer) from submission to callback",
			Num: always(func(ev *usbmon.Event) uint64 { return ev.ID })},
		filter.Field[usbmon.Event]{Name: "usb.urb_type", Doc: "event type: 'S' submission, 'C' callback, 'E' submission error",
			Num:   always(func(ev *usbmon.Event) uint64 { return uint64(ev.Type) }),
			Names: urbTypeName, NameList: []string{"S", "C", "E"}},
		filter.Field[usbmon.Event]{Name: "usb.transfer_type", Doc: "0 isochronous, 1 interrupt, 2 control, 3 bulk",
			Num:   always(func(ev *usbmon.Event) uint64 { return uint64(ev.Transfer) }),
			Names: transferTypeName, NameList: []string{"iso", "intr", "ctrl", "bulk"}},
		filter.Field[usbmon.Event]{Name: "usb.endpoint_address", Doc: "endpoint number, plus 0x80 for IN",
			Num: always(func(ev *usbmon.Event) uint64 { return uint64(ev.EndpointAddress()) })},
		filter.Field[usbmon.Event]{Name: "usb.endpoint_address.number", Doc: "endpoint number 0-15",
			Num: always(func(ev *usbmon.Event) uint64 { return uint64(ev.Endpoint) })},
		filter.Field[usbmon.Event]{Name: "usb.endpoint_address.direction", Doc: "1 IN (device to host), 0 OUT",
			Num: always(func(ev *usbmon.Event) uint64 {
				if ev.In {
					return 1
				}
				return 0
			}),
			Names: directionName, NameList: []string{"in", "out"}},
		filter.Field[usbmon.Event]{Name: "usb.device_address", Doc: "device address on its bus",
			Num: always(func(ev *usbmon.Event) uint64 { return uint64(ev.Device) })},
		filter.Field[usbmon.Event]{Name: "usb.bus_id", Doc: "bus number (absent from '1t' text)",
			Num: when(usbmon.HasBus, func(ev *usbmon.Event) uint64 { return uint64(ev.Bus) })},
		filter.Field[usbmon.Event]{Name: "usb.urb_status", Doc: "URB status, a negative errno (-115 EINPROGRESS on submissions)",
			Num: func(ev *usbmon.Event) (filter.Int, bool) { return filter.Signed(int64(ev.Status)), true },
			Names: func(s string) (filter.Int, bool) {
				st, ok := ParseStatus(s)
				return filter.Signed(int64(st)), ok
			}, NameList: []string{"OK", "stall", "EPIPE", "ENOENT", "ESHUTDOWN", "EPROTO", "..."}},
		filter.Field[usbmon.Event]{Name: "usb.urb_len", Doc: "URB length: requested on submissions, actual on callbacks",
			Num: always(func(ev *usbmon.Event) uint64 { return uint64(ev.Length) })},
		filter.Field[usbmon.Event]{Name: "usb.data_len", Doc: "bytes captured after the header (binary, pcap and pcapng inputs)",
			Num: when(usbmon.HasLengths, func(ev *usbmon.Event) uint64 { return uint64(ev.CapLen) })},
		filter.Field[usbmon.Event]{Name: "usb.setup_flag", Doc: "0 when a setup packet was captured",
			Num: always(func(ev *usbmon.Event) uint64 { return uint64(ev.SetupFlag) })},
		filter.Field[usbmon.Event]{Name: "usb.data_flag", Doc: "0 when data was captured ('<', '>', '=' otherwise)",
			Num: always(func(ev *usbmon.Event) uint64 { return uint64(ev.DataFlag) })},
		filter.Field[usbmon.Event]{Name: "usb.bmRequestType", Doc: "bmRequestType of control submissions",
			Num: setup(func(s *[8]byte) uint64 { return uint64(s[0]) })},
		filter.Field[usbmon.Event]{Name: "usb.setup.bRequest", Doc: "bRequest of standard requests to a device or endpoint (as tshark: class dissectors take the others)",
			Num: standard(func(s *[8]byte) uint64 { return uint64(s[1]) })},
		filter.Field[usbmon.Event]{Name: "usb.setup.wLength", Doc: "wLength of standard requests to a device or endpoint",
			Num: standard(func(s *[8]byte) uint64 { return le16(s, 6) })},
		filter.Field[usbmon.Event]{Name: "usb.setup.request", Doc: "iotap: bRequest of every control submission",
			Num: setup(func(s *[8]byte) uint64 { return uint64(s[1]) })},
		filter.Field[usbmon.Event]{Name: "usb.setup.value", Doc: "iotap: wValue of every control submission",
			Num: setup(func(s *[8]byte) uint64 { return le16(s, 2) })},
		filter.Field[usbmon.Event]{Name: "usb.setup.index", Doc: "iotap: wIndex of every control submission",
			Num: setup(func(s *[8]byte) uint64 { return le16(s, 4) })},
		filter.Field[usbmon.Event]{Name: "usb.setup.length", Doc: "iotap: wLength of every control submission",
			Num: setup(func(s *[8]byte) uint64 { return le16(s, 6) })},
		filter.Field[usbmon.Event]{Name: "usb.urb_ts_sec", Doc: "wall-clock seconds (binary, pcap, pcapng)",
			Num: func(ev *usbmon.Event) (filter.Int, bool) {
				return filter.Signed(ev.Sec), ev.Fields&usbmon.HasWallClock != 0
			}},
		filter.Field[usbmon.Event]{Name: "usb.urb_ts_usec",
			Num: func(ev *usbmon.Event) (filter.Int, bool) {
				return filter.Signed(int64(ev.Usec)), ev.Fields&usbmon.HasWallClock != 0
			}},
		filter.Field[usbmon.Event]{Name: "usb.interval", Doc: "interval of interrupt and isochronous URBs (64-byte headers)",
			Num: func(ev *usbmon.Event) (filter.Int, bool) {
				return filter.Signed(int64(ev.Interval)), ev.Fields&usbmon.HasExtended != 0
			}},
		filter.Field[usbmon.Event]{Name: "usb.start_frame",
			Num: func(ev *usbmon.Event) (filter.Int, bool) {
				return filter.Signed(int64(ev.StartFrame)), ev.Fields&usbmon.HasExtended != 0
			}},
		filter.Field[usbmon.Event]{Name: "usb.copy_of_transfer_flags",
			Num: when(usbmon.HasExtended, func(ev *usbmon.Event) uint64 { return uint64(ev.XferFlags) })},
		filter.Field[usbmon.Event]{Name: "usb.iso.numdesc",
			Num: when(usbmon.HasExtended, func(ev *usbmon.Event) uint64 { return uint64(ev.NDesc) })},
		filter.Field[usbmon.Event]{Name: "usb.vid", Doc: "iotap: vendor id of the device, once its descriptor has been seen",
			Num: ident(func(d *DeviceInfo) uint64 { return uint64(d.Vendor) })},
		filter.Field[usbmon.Event]{Name: "usb.pid", Doc: "iotap: product id of the device, once its descriptor has been seen",
			Num: ident(func(d *DeviceInfo) uint64 { return uint64(d.Product) })},
	)
	for alias, name := range map[string]string{
		"usb.ep": "usb.endpoint_address", "usb.dev": "usb.device_address", "usb.bus": "usb.bus_id",
		"usb.type": "usb.transfer_type", "usb.status": "usb.urb_status", "usb.len": "usb.urb_len",
		"usb.dir": "usb.endpoint_address.direction",
	} {
		t.Alias(alias, name)
	}
	return t
}

// ParseFilter compiles a display-filter expression over FilterFields(ids)
// into a Filter.
func ParseFilter(expr string, ids *Identities) (Filter, error) {
	p, err := filter.ParseCompile(expr, FilterFields(ids))
	if err != nil {
		return nil, err
	}
	return Filter(p), nil
}

func urbTypeName(s string) (filter.Int, bool) {
	switch strings.ToUpper(s) {
	case "S", "SUBMIT":
		return filter.Uint('S'), true
	case "C", "COMPLETE", "CALLBACK":
		return filter.Uint('C'), true
	case "E", "ERROR":
		return filter.Uint('E'), true
	}
	return filter.Int{}, false
}

func transferTypeName(s string) (filter.Int, bool) {
	t, err := ParseTransferType(s)
	return filter.Uint(uint64(t)), err == nil
}

func directionName(s string) (filter.Int, bool) {
	switch strings.ToLower(s) {
	case "in":
		return filter.Uint(1), true
	case "out":
		return filter.Uint(0), true
	}
	return filter.Int{}, false
}

// ParseLearningFilter compiles the display-filter expression expr
// (ParseFilter) for a capture read from its start, in order: the device
// identities it names are learnt from the enumeration in the capture
// (Learning). An empty expr is nil: every event.
func ParseLearningFilter(expr string) (Filter, error) {
	if expr == "" {
		return nil, nil
	}
	ids := NewIdentities()
	f, err := ParseFilter(expr, ids)
	if err != nil {
		return nil, err
	}
	return Learning(f, ids), nil
}
