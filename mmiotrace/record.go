package mmiotrace

import (
	"bytes"
	"strconv"
)

// Kind is the type of a log line.
type Kind uint8

// Record kinds, one per keyword of the log format (version 20070824), plus
// Comment and Other for lines that are not records but are kept verbatim.
const (
	KindInvalid Kind = iota
	KindRead         // R
	KindWrite        // W
	KindMap          // MAP
	KindUnmap        // UNMAP
	KindMark         // MARK
	KindVersion      // VERSION
	KindLSPCI        // LSPCI
	KindPCIDev       // PCIDEV
	KindUnknown      // UNKNOWN (an instruction mmiotrace could not decode)
	KindComment      // a line starting with '#'
	KindOther        // any other line, kept verbatim
	numKinds
)

var kindNames = [numKinds]string{"invalid", "R", "W", "MAP", "UNMAP", "MARK", "VERSION", "LSPCI", "PCIDEV", "UNKNOWN", "comment", "other"}

// String returns the keyword of the kind ("R", "MAP", …).
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses a keyword as printed by String (case-insensitive).
func ParseKind(s string) (Kind, bool) {
	for k := KindRead; k < numKinds; k++ {
		if equalFold(s, kindNames[k]) {
			return k, true
		}
	}
	return KindInvalid, false
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// IsAccess reports whether the kind is a device access (R, W or UNKNOWN).
func (k Kind) IsAccess() bool { return k == KindRead || k == KindWrite || k == KindUnknown }

// IsStructural reports whether records of the kind are needed to interpret
// accesses (VERSION, PCIDEV, LSPCI, MAP, UNMAP, comments): filters keep them.
func (k Kind) IsStructural() bool {
	switch k {
	case KindVersion, KindPCIDev, KindLSPCI, KindMap, KindUnmap, KindComment:
		return true
	}
	return false
}

// Timestamp is a log timestamp: nanoseconds plus the number of fractional
// digits it was printed with (6 for the kernel's "%u.%06lu").
type Timestamp struct {
	NS     uint64 // nanoseconds since the trace clock's epoch
	Digits uint8  // fractional digits as printed, 0..9; 0 means no '.'
}

// Seconds returns the timestamp in seconds.
func (t Timestamp) Seconds() float64 { return float64(t.NS) / 1e9 }

// AppendTo appends the timestamp in its printed form.
func (t Timestamp) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(b, t.NS/1e9, 10)
	if t.Digits == 0 {
		return b
	}
	d := int(t.Digits)
	if d > 9 {
		d = 9
	}
	frac := (t.NS % 1e9) / pow10[9-d]
	b = append(b, '.')
	var tmp [9]byte
	for i := d - 1; i >= 0; i-- {
		tmp[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, tmp[:d]...)
}

// String returns the timestamp in its printed form.
func (t Timestamp) String() string { return string(t.AppendTo(nil)) }

var pow10 = [10]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

// PCIDev is the content of a PCIDEV record: one line of
// /proc/bus/pci/devices as the kernel printed it when trace_pipe was opened.
type PCIDev struct {
	Bus    uint8
	DevFn  uint8 // device<<3 | function
	Vendor uint16
	Device uint16
	IRQ    uint64
	// Base holds the 7 resource start addresses (6 BARs and the ROM)
	// with the low 4 flag bits ORed in, as printed (bit 0 set: I/O space).
	Base [7]uint64
	// Size holds the 7 resource lengths (0: resource absent).
	Size [7]uint64
	// Driver is the bound driver's name, empty when none. Like all byte
	// slices of a Record read by a Reader it is only valid until the next
	// ReadInto.
	Driver []byte
	// NoTrailingSpace is set for a driverless line that lacks the space
	// the kernel prints after the last size (e.g. stripped by an editor).
	NoTrailingSpace bool
}

// Addr returns the device's PCI address (domain 0: PCIDEV lines carry
// no domain).
func (p *PCIDev) Addr() PCIAddr {
	return PCIAddr{Bus: p.Bus, Dev: p.DevFn >> 3, Fn: p.DevFn & 7}
}

// BARStart returns the start address of resource i without its flag bits.
func (p *PCIDev) BARStart(i int) uint64 { return p.Base[i] &^ 0xf }

// BARIsIO reports whether resource i is in I/O port space.
func (p *PCIDev) BARIsIO(i int) bool { return p.Base[i]&1 != 0 }

// Record is one line of an mmiotrace log. See the package documentation
// for which fields each Kind uses. Records filled by Reader.ReadInto
// reference the reader's buffer in Text, Line and PCI.Driver.
type Record struct {
	Kind   Kind
	Width  uint8 // access width in bytes (R, W)
	Time   Timestamp
	MapID  int32
	Phys   uint64 // physical address (R, W, MAP, UNKNOWN)
	Value  uint64 // value read or written (R, W)
	Virt   uint64 // kernel virtual address (MAP)
	Len    uint64 // mapping length (MAP)
	PC     uint64 // program counter, 0 when not recorded
	PID    int32  // always 0 in kernel logs
	Opcode [3]byte
	// Text is the marker text (MARK), version string (VERSION), lspci line
	// (LSPCI) or the whole line (Comment, Other), without the newline.
	Text []byte
	PCI  PCIDev
	// Line is the input line the record was read from, without its
	// newline (set by Reader; ignored by Writer).
	Line []byte
}

// Reset clears r, keeping nothing.
func (r *Record) Reset() { *r = Record{} }

// Clone returns a deep copy of r whose slices do not alias the reader.
func (r *Record) Clone() *Record {
	c := *r
	c.Text = bytes.Clone(r.Text)
	c.Line = bytes.Clone(r.Line)
	c.PCI.Driver = bytes.Clone(r.PCI.Driver)
	return &c
}

var lostPrefix = []byte("Lost ")

// Lost returns N for the kernel's "Lost N events." marker and ok=false for
// any other record.
func (r *Record) Lost() (n uint64, ok bool) {
	// "Lost events." has both the prefix and the suffix, overlapping.
	if r.Kind != KindMark || len(r.Text) < len(lostPrefix)+len(" events.") ||
		!bytes.HasPrefix(r.Text, lostPrefix) || !bytes.HasSuffix(r.Text, []byte(" events.")) {
		return 0, false
	}
	num := r.Text[len(lostPrefix) : len(r.Text)-len(" events.")]
	v, err := strconv.ParseUint(string(num), 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// String formats the record as a log line without the newline.
func (r *Record) String() string {
	b := AppendRecord(nil, r)
	return string(b[:len(b)-1])
}
