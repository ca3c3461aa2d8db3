package usb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// HIDItemType is the bType of a short item.
type HIDItemType uint8

// Item types.
const (
	HIDMain     HIDItemType = 0
	HIDGlobal   HIDItemType = 1
	HIDLocal    HIDItemType = 2
	HIDReserved HIDItemType = 3
	HIDLong     HIDItemType = 4 // long item (prefix 0xfe)
)

// HIDItem is one item of a HID report descriptor.
type HIDItem struct {
	Offset int         `json:"offset"` // byte offset of the prefix
	Type   HIDItemType `json:"type"`
	Tag    uint8       `json:"tag"`
	Size   int         `json:"size"` // data bytes
	Data   uint32      `json:"data"` // unsigned data (little-endian)
	Depth  int         `json:"depth"`
	// UsagePage is the usage page in effect (for Usage items).
	UsagePage uint16 `json:"usage_page,omitempty"`
	// Long holds a long item's data.
	Long []byte `json:"long,omitempty"`
}

// Signed returns the item data sign-extended from its size.
func (it HIDItem) Signed() int32 {
	switch it.Size {
	case 1:
		return int32(int8(it.Data))
	case 2:
		return int32(int16(it.Data))
	}
	return int32(it.Data)
}

var hidMainNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{0x8: "Input", 0x9: "Output", 0xb: "Feature", 0xa: "Collection", 0xc: "End Collection"}
})
var hidGlobalNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{0: "Usage Page", 1: "Logical Minimum", 2: "Logical Maximum", 3: "Physical Minimum",
		4: "Physical Maximum", 5: "Unit Exponent", 6: "Unit", 7: "Report Size", 8: "Report ID", 9: "Report Count", 0xa: "Push", 0xb: "Pop"}
})
var hidLocalNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{0: "Usage", 1: "Usage Minimum", 2: "Usage Maximum", 3: "Designator Index",
		4: "Designator Minimum", 5: "Designator Maximum", 7: "String Index", 8: "String Minimum", 9: "String Maximum", 0xa: "Delimiter"}
})

// Name returns the item's name ("Usage Page", "Input", ...).
func (it HIDItem) Name() string {
	var n string
	switch it.Type {
	case HIDMain:
		n = hidMainNames()[it.Tag]
	case HIDGlobal:
		n = hidGlobalNames()[it.Tag]
	case HIDLocal:
		n = hidLocalNames()[it.Tag]
	case HIDLong:
		return "Long Item"
	}
	if n == "" {
		return fmt.Sprintf("Reserved (type %d tag 0x%x)", it.Type, it.Tag)
	}
	return n
}

// String renders the item the way HID descriptor tools do, e.g.
// "Usage Page (Generic Desktop)" or "Input (Data,Var,Abs)".
func (it HIDItem) String() string {
	n := it.Name()
	switch {
	case it.Type == HIDLong:
		return fmt.Sprintf("%s (tag 0x%02x, %d bytes)", n, it.Tag, len(it.Long))
	case it.Type == HIDMain && (it.Tag == 0x8 || it.Tag == 0x9 || it.Tag == 0xb):
		return n + " (" + mainFlags(it.Data, it.Tag == 0x8) + ")"
	case it.Type == HIDMain && it.Tag == 0xa:
		return n + " (" + collectionName(uint8(it.Data)) + ")"
	case it.Type == HIDMain && it.Tag == 0xc:
		return n
	case it.Type == HIDGlobal && it.Tag == 0:
		return n + " (" + UsagePageName(uint16(it.Data)) + ")"
	case it.Type == HIDGlobal && (it.Tag >= 1 && it.Tag <= 5):
		return n + " (" + strconv.Itoa(int(it.Signed())) + ")"
	case it.Type == HIDGlobal && (it.Tag == 0xa || it.Tag == 0xb):
		return n
	case it.Type == HIDGlobal && it.Tag == 6:
		return n + " (0x" + strconv.FormatUint(uint64(it.Data), 16) + ")"
	case it.Type == HIDLocal && it.Tag <= 2:
		page, id := it.UsagePage, uint16(it.Data)
		if it.Size == 4 {
			page = uint16(it.Data >> 16)
			return n + " (" + UsagePageName(page) + ": " + UsageName(page, id) + ")"
		}
		return n + " (" + UsageName(page, id) + ")"
	}
	if it.Size == 0 {
		return n
	}
	return n + " (" + strconv.FormatUint(uint64(it.Data), 10) + ")"
}

func collectionName(v uint8) string {
	switch v {
	case 0:
		return "Physical"
	case 1:
		return "Application"
	case 2:
		return "Logical"
	case 3:
		return "Report"
	case 4:
		return "Named Array"
	case 5:
		return "Usage Switch"
	case 6:
		return "Usage Modifier"
	}
	if v >= 0x80 {
		return "Vendor 0x" + strconv.FormatUint(uint64(v), 16)
	}
	return "Reserved 0x" + strconv.FormatUint(uint64(v), 16)
}

func mainFlags(v uint32, input bool) string {
	pick := func(bit uint, off, on string) string {
		if v&(1<<bit) != 0 {
			return on
		}
		return off
	}
	f := []string{pick(0, "Data", "Const"), pick(1, "Array", "Var"), pick(2, "Abs", "Rel")}
	for _, x := range []struct {
		bit uint
		on  string
	}{{3, "Wrap"}, {4, "NonLinear"}, {5, "NoPreferred"}, {6, "Null"}, {8, "Buffered"}} {
		if v&(1<<x.bit) != 0 {
			f = append(f, x.on)
		}
	}
	if !input && v&(1<<7) != 0 {
		f = append(f, "Volatile")
	}
	return strings.Join(f, ",")
}

// HIDReport is the size of one report (kind and report ID) declared by a
// report descriptor.
type HIDReport struct {
	Kind string `json:"kind"` // "input", "output", "feature"
	ID   uint8  `json:"id"`   // 0 when the descriptor uses no report IDs
	Bits int    `json:"bits"` // payload bits, not counting the ID byte
}

// Bytes returns the report length on the wire including the ID byte.
func (r HIDReport) Bytes() int {
	n := (r.Bits + 7) / 8
	if r.ID != 0 {
		n++
	}
	return n
}

// HIDField is one Input, Output or Feature main item with the global and
// local state it was declared with: Count values of Size bits each,
// starting BitOffset bits into the report (after the report ID byte).
type HIDField struct {
	Kind       string `json:"kind"` // "input", "output", "feature"
	ReportID   uint8  `json:"report_id"`
	BitOffset  int    `json:"bit_offset"`
	Size       int    `json:"size"`
	Count      int    `json:"count"`
	Flags      uint32 `json:"flags"`
	LogicalMin int32  `json:"logical_min"`
	LogicalMax int32  `json:"logical_max"`
	// Usages are extended usages (page<<16 | id), one per value for
	// variable fields; UsageMin/UsageMax give a range instead.
	Usages   []uint32 `json:"usages,omitempty"`
	UsageMin uint32   `json:"usage_min,omitempty"`
	UsageMax uint32   `json:"usage_max,omitempty"`
}

// Constant reports a padding field (flag bit 0).
func (f HIDField) Constant() bool { return f.Flags&1 != 0 }

// Variable reports a field with one value per usage (flag bit 1); array
// fields hold usage indices instead.
func (f HIDField) Variable() bool { return f.Flags&2 != 0 }

// usage returns the extended usage of value i of a variable field, or of
// array index v.
func (f HIDField) usage(i int) (uint32, bool) {
	switch {
	case i < len(f.Usages):
		return f.Usages[i], true
	case f.UsageMin|f.UsageMax != 0:
		u := uint64(f.UsageMin) + uint64(i)
		if u <= uint64(f.UsageMax) {
			return uint32(u), true
		}
	case len(f.Usages) > 0 && f.Variable():
		return f.Usages[len(f.Usages)-1], true
	}
	return 0, false
}

// ReportDescriptor is a parsed HID report descriptor.
type ReportDescriptor struct {
	Items   []HIDItem   `json:"items"`
	Reports []HIDReport `json:"reports"`
	Fields  []HIDField  `json:"fields"`
}

// maxHIDUsages bounds the usages remembered for one main item.
const maxHIDUsages = 1024

var hidKinds = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{0x8: "input", 0x9: "output", 0xb: "feature"}
})

// maxHIDStack bounds Push nesting; real descriptors use one or two levels.
const maxHIDStack = 64

// ParseReportDescriptor parses a HID report descriptor into items (with
// collection depth) and computes the size of every report. Malformed input
// (a truncated item, End Collection without Collection, Pop without Push,
// unterminated collections) gives the items parsed so far and an error with
// the byte offset.
func ParseReportDescriptor(b []byte) (ReportDescriptor, error) {
	const what = "hid report descriptor"
	var rd ReportDescriptor
	type globals struct {
		page           uint16
		size, count    uint32
		id             uint8
		logMin, logMax int32
	}
	var g globals
	var usages []uint32
	var umin, umax uint32
	var stack []globals
	depth := 0
	bits := map[[2]uint8]int{} // (main tag, report id) -> bits
	var order [][2]uint8
	off := 0
	for off < len(b) {
		p := b[off]
		if p == 0xfe { // long item
			if off+3 > len(b) {
				return rd, shortErr(what, len(b), off+3, len(b))
			}
			n := int(b[off+1])
			if off+3+n > len(b) {
				return rd, shortErr(what, len(b), off+3+n, len(b))
			}
			rd.Items = append(rd.Items, HIDItem{Offset: off, Type: HIDLong, Tag: b[off+2], Size: n, Depth: depth, Long: b[off+3 : off+3+n]})
			off += 3 + n
			continue
		}
		size := int(p & 3)
		if size == 3 {
			size = 4
		}
		if off+1+size > len(b) {
			return rd, shortErr(what, len(b), off+1+size, len(b))
		}
		var data uint32
		for i := 0; i < size; i++ {
			data |= uint32(b[off+1+i]) << (8 * i)
		}
		it := HIDItem{Offset: off, Type: HIDItemType((p >> 2) & 3), Tag: p >> 4, Size: size, Data: data, UsagePage: g.page}
		extended := data
		if size < 4 {
			extended = uint32(g.page)<<16 | data
		}
		switch it.Type {
		case HIDMain:
			switch it.Tag {
			case 0xa:
				it.Depth = depth
				depth++
			case 0xc:
				if depth == 0 {
					return rd, invalidErr(what, off, "End Collection without Collection")
				}
				depth--
				it.Depth = depth
			case 0x8, 0x9, 0xb:
				it.Depth = depth
				k := [2]uint8{it.Tag, g.id}
				if _, ok := bits[k]; !ok {
					order = append(order, k)
				}
				if g.size > 1<<16 || g.count > 1<<16 {
					return rd, invalidErr(what, off, "report size %d x count %d too large", g.size, g.count)
				}
				rd.Fields = append(rd.Fields, HIDField{Kind: hidKinds()[it.Tag], ReportID: g.id, BitOffset: bits[k],
					Size: int(g.size), Count: int(g.count), Flags: data, LogicalMin: g.logMin, LogicalMax: g.logMax,
					Usages: usages, UsageMin: umin, UsageMax: umax})
				bits[k] += int(g.size * g.count)
			default:
				it.Depth = depth
			}
			usages, umin, umax = nil, 0, 0 // locals end with every main item
		case HIDGlobal:
			it.Depth = depth
			switch it.Tag {
			case 0:
				g.page = uint16(data)
				it.UsagePage = g.page
			case 1:
				g.logMin = it.Signed()
			case 2:
				g.logMax = it.Signed()
			case 7:
				g.size = data
			case 8:
				if data == 0 || data > 255 {
					return rd, invalidErr(what, off, "report ID %d", data)
				}
				g.id = uint8(data)
			case 9:
				g.count = data
			case 0xa:
				if len(stack) >= maxHIDStack {
					return rd, invalidErr(what, off, "push nesting deeper than %d", maxHIDStack)
				}
				stack = append(stack, g)
			case 0xb:
				if len(stack) == 0 {
					return rd, invalidErr(what, off, "Pop without Push")
				}
				g = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case HIDLocal:
			it.Depth = depth
			switch it.Tag {
			case 0:
				if len(usages) < maxHIDUsages {
					usages = append(usages, extended)
				}
			case 1:
				umin = extended
			case 2:
				umax = extended
			}
		default:
			it.Depth = depth
		}
		rd.Items = append(rd.Items, it)
		off += 1 + size
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i][0] != order[j][0] {
			return order[i][0] < order[j][0]
		}
		return order[i][1] < order[j][1]
	})
	for _, k := range order {
		rd.Reports = append(rd.Reports, HIDReport{Kind: hidKinds()[k[0]], ID: k[1], Bits: bits[k]})
	}
	if depth != 0 {
		return rd, invalidErr(what, len(b), "%d collections not closed", depth)
	}
	return rd, nil
}

// String renders the descriptor as an indented item list followed by the
// report sizes.
func (rd ReportDescriptor) String() string {
	var s strings.Builder
	for _, it := range rd.Items {
		s.WriteString(strings.Repeat("  ", it.Depth))
		s.WriteString(it.String())
		s.WriteByte('\n')
	}
	for _, r := range rd.Reports {
		fmt.Fprintf(&s, "report %s id=%d: %d bits (%d bytes)\n", r.Kind, r.ID, r.Bits, r.Bytes())
	}
	return s.String()
}

// Summary is a one-line description: top-level application collections
// and report sizes.
func (rd ReportDescriptor) Summary() string {
	var apps []string
	var usage *HIDItem
	for i := range rd.Items {
		it := &rd.Items[i]
		if it.Type == HIDLocal && it.Tag == 0 {
			usage = it
		}
		if it.Type == HIDMain && it.Tag == 0xa && it.Depth == 0 && usage != nil {
			page, id := usage.UsagePage, uint16(usage.Data)
			if usage.Size == 4 {
				page = uint16(usage.Data >> 16)
			}
			apps = append(apps, UsageName(page, id))
		}
		if it.Type == HIDMain {
			usage = nil
		}
	}
	s := fmt.Sprintf("REPORT items=%d", len(rd.Items))
	if len(apps) > 0 {
		s += " apps=" + strings.Join(apps, ",")
	}
	for _, r := range rd.Reports {
		s += fmt.Sprintf(" %s", r.Kind)
		if r.ID != 0 {
			s += fmt.Sprintf("#%d", r.ID)
		}
		s += fmt.Sprintf("=%dB", r.Bytes())
	}
	return s
}
