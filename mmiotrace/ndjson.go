package mmiotrace

import (
	"encoding/binary"
	"math/bits"
	"strconv"

	"github.com/iotap/iotap/internal/ndjson"
)

// The NDJSON records of 'iotap mmio read --json' (docs/ndjson.md is the
// reference; TestNDJSONDocs checks it lists exactly these fields). Times
// are ts_ns on the tracefs trace clock ("trace"); addresses, values and
// PCs are "0x..." strings; lengths are numbers; a PC the kernel did not
// record (0) is null.

// Record kinds of 'iotap mmio read --json', one per record Kind.
const (
	NDJSONAccess  = "mmio_access"  // R and W: one device access
	NDJSONUnknown = "mmio_unknown" // UNKNOWN: an instruction mmiotrace could not decode
	NDJSONMap     = "mmio_map"     // MAP: ioremap of a range
	NDJSONUnmap   = "mmio_unmap"   // UNMAP: iounmap
	NDJSONMark    = "mmio_mark"    // MARK: a marker (user's or the kernel's "Lost N events.")
	NDJSONVersion = "mmio_version" // VERSION: the log format's version
	NDJSONPCIDev  = "mmio_pcidev"  // PCIDEV: a PCI device at trace start
	NDJSONLSPCI   = "mmio_lspci"   // LSPCI: a line of lspci output
	NDJSONComment = "mmio_comment" // a line starting with '#'
	NDJSONOther   = "mmio_other"   // any other line, kept verbatim
)

// Clock is the clock of the timestamps of mmiotrace logs, as the "input"
// record of an NDJSON stream names it: the tracefs trace clock.
const Clock = "trace"

// AppendNDJSONInput appends the "input" record that starts an MMIO
// stream: file ("-" for standard input) in format ("" : "mmiotrace log").
func AppendNDJSONInput(b []byte, file, format string) []byte {
	if format == "" {
		format = "mmiotrace log"
	}
	return ndjson.End(ndjson.Input(b, "mmio", file, format, Clock))
}

// NDJSONEncoder appends the records of 'iotap mmio read --json'. Its
// Append is an AppendFunc (ConvertLog may call it from several goroutines:
// Func must be safe for that) and allocates nothing.
type NDJSONEncoder struct {
	// Func names the kernel function of a PC ("" when unknown: null);
	// nil leaves the "func" field out.
	Func func(pc uint64) string
}

// Append appends the NDJSON record of r.
func (e *NDJSONEncoder) Append(b []byte, r *Record) ([]byte, error) {
	switch r.Kind {
	case KindRead, KindWrite:
		return e.appendAccess(b, r), nil
	case KindUnknown:
		b = ndjson.Begin(b, NDJSONUnknown)
		b = ndjson.Uint(b, "ts_ns", r.Time.NS)
		b = ndjson.Int(b, "map_id", int64(r.MapID))
		b = ndjson.HexUint(b, "phys", r.Phys)
		b = ndjson.Hex(b, "opcode", r.Opcode[:])
		b = e.pc(b, r.PC)
	case KindMap:
		b = ndjson.Begin(b, NDJSONMap)
		b = ndjson.Uint(b, "ts_ns", r.Time.NS)
		b = ndjson.Int(b, "map_id", int64(r.MapID))
		b = ndjson.HexUint(b, "phys", r.Phys)
		b = ndjson.HexUint(b, "virt", r.Virt)
		b = ndjson.Uint(b, "length", r.Len)
		b = e.pc(b, r.PC)
	case KindUnmap:
		b = ndjson.Begin(b, NDJSONUnmap)
		b = ndjson.Uint(b, "ts_ns", r.Time.NS)
		b = ndjson.Int(b, "map_id", int64(r.MapID))
		b = e.pc(b, r.PC)
	case KindMark:
		b = ndjson.Begin(b, NDJSONMark)
		b = ndjson.Uint(b, "ts_ns", r.Time.NS)
		b = ndjson.Bytes(b, "text", r.Text)
		if n, ok := r.Lost(); ok {
			b = ndjson.Uint(b, "lost", n)
		}
	case KindPCIDev:
		p := &r.PCI
		b = ndjson.Begin(b, NDJSONPCIDev)
		b = append(ndjson.Key(b, "pci"), '"')
		b = appendPCIAddr(b, p.Addr())
		b = append(b, '"')
		b = append(ndjson.Key(b, "pci_id"), '"')
		b = appendHex4(b, p.Vendor)
		b = append(b, ':')
		b = appendHex4(b, p.Device)
		b = append(b, '"')
		b = ndjson.Uint(b, "irq", p.IRQ)
		b = ndjson.OpenArray(b, "bars")
		for i := range p.Base {
			if p.Base[i] == 0 && p.Size[i] == 0 {
				continue // absent
			}
			b = ndjson.OpenElem(b)
			b = ndjson.Int(b, "index", int64(i))
			b = ndjson.HexUint(b, "start", p.BARStart(i))
			b = ndjson.Uint(b, "size", p.Size[i])
			b = ndjson.Bool(b, "io", p.BARIsIO(i))
			b = ndjson.Uint(b, "flags", p.Base[i]&0xf)
			b = ndjson.Close(b)
		}
		b = ndjson.CloseArray(b)
		if len(p.Driver) > 0 {
			b = ndjson.Bytes(b, "driver", p.Driver)
		} else {
			b = ndjson.Null(b, "driver")
		}
	default:
		kind := NDJSONOther
		switch r.Kind {
		case KindVersion:
			kind = NDJSONVersion
		case KindLSPCI:
			kind = NDJSONLSPCI
		case KindComment:
			kind = NDJSONComment
		}
		b = ndjson.Begin(b, kind)
		b = ndjson.Bytes(b, "text", r.Text)
	}
	return ndjson.End(b), nil
}

// pc appends the "pc" member (null for 0: not recorded) and, with Func,
// "func".
func (e *NDJSONEncoder) pc(b []byte, pc uint64) []byte {
	if pc == 0 {
		b = append(b, `,"pc":null`...)
	} else {
		b = append(b, `,"pc":"0x`...)
		b = strconv.AppendUint(b, pc, 16)
		b = append(b, '"')
	}
	if e.Func != nil {
		var name string
		if pc != 0 {
			name = e.Func(pc)
		}
		b = ndjson.StrOrNull(b, "func", name)
	}
	return b
}

func appendHex4(b []byte, v uint16) []byte {
	return append(b, hexDigits[v>>12], hexDigits[v>>8&15], hexDigits[v>>4&15], hexDigits[v&15])
}

// appendPCIAddr appends a as PCIAddr.String writes it, without fmt.
func appendPCIAddr(b []byte, a PCIAddr) []byte {
	b = appendHex4(b, a.Domain)
	b = append(b, ':', hexDigits[a.Bus>>4], hexDigits[a.Bus&15], ':', hexDigits[a.Dev>>4&15], hexDigits[a.Dev&15], '.')
	return strconv.AppendUint(b, uint64(a.Fn), 16)
}

// The constant parts of an mmio_access record, as arrays: copied into
// the output by assignment (a few wide moves) rather than memmove calls.
var (
	accessR = [len(`{"kind":"mmio_access","access":"R","width":`)]byte([]byte(`{"kind":"mmio_access","access":"R","width":`))
	accessW = [len(`{"kind":"mmio_access","access":"W","width":`)]byte([]byte(`{"kind":"mmio_access","access":"W","width":`))
	tsKey   = [len(`,"ts_ns":`)]byte([]byte(`,"ts_ns":`))
	mapKey  = [len(`,"map_id":`)]byte([]byte(`,"map_id":`))
	physKey = [len(`,"phys":"0x`)]byte([]byte(`,"phys":"0x`))
	valKey  = [len(`","value":"0x`)]byte([]byte(`","value":"0x`))
	pcKey   = [len(`","pc":"0x`)]byte([]byte(`","pc":"0x`))
	pcNull  = [len(`","pc":null`)]byte([]byte(`","pc":null`))
)

// accessMax bounds the bytes of an mmio_access record without "func":
// the constants, 20 digits of ts_ns, 11 of map_id, 3x16 hex digits, 3 of
// width.
const accessMax = len(accessR) + len(tsKey) + len(mapKey) + len(physKey) + len(valKey) + len(pcKey) + 20 + 11 + 48 + 3 + 4

// appendAccess appends the mmio_access record of an R or W record: the
// hot path of 'mmio read --json', written by index into room made once
// (TestNDJSONAccess checks its bytes against the generic ndjson calls).
func (e *NDJSONEncoder) appendAccess(b []byte, r *Record) []byte {
	if cap(b)-len(b) < accessMax {
		b = append(b, make([]byte, accessMax)...)[:len(b)]
	}
	n := len(b)
	d := b[n : n+accessMax]
	if r.Kind == KindRead {
		*(*[len(accessR)]byte)(d) = accessR
	} else {
		*(*[len(accessW)]byte)(d) = accessW
	}
	i := len(accessR)
	i += putDec(d[i:], uint64(r.Width))
	*(*[len(tsKey)]byte)(d[i:]) = tsKey
	i += len(tsKey)
	i += putNS(d[i:], r.Time.NS)
	*(*[len(mapKey)]byte)(d[i:]) = mapKey
	i += len(mapKey)
	id := int64(r.MapID)
	if id < 0 {
		d[i] = '-'
		i++
		id = -id
	}
	i += putDec(d[i:], uint64(id))
	*(*[len(physKey)]byte)(d[i:]) = physKey
	i += len(physKey)
	i += putHex(d[i:], r.Phys)
	*(*[len(valKey)]byte)(d[i:]) = valKey
	i += len(valKey)
	i += putHex(d[i:], r.Value)
	if r.PC == 0 {
		*(*[len(pcNull)]byte)(d[i:]) = pcNull
		i += len(pcNull)
	} else {
		*(*[len(pcKey)]byte)(d[i:]) = pcKey
		i += len(pcKey)
		i += putHex(d[i:], r.PC)
		d[i] = '"'
		i++
	}
	b = b[:n+i]
	if e.Func != nil {
		var name string
		if r.PC != 0 {
			name = e.Func(r.PC)
		}
		b = ndjson.StrOrNull(b, "func", name)
	}
	return append(b, '}', '\n')
}

// putHex writes v in lower-case hex without leading zeros at d[0:] and
// returns the digits written. It stores 16 bytes (d must have room for
// them): the digits, then bytes the caller's next writes overwrite.
func putHex(d []byte, v uint64) int {
	n := (bits.Len64(v|1) + 3) >> 2
	v <<= 64 - 4*uint(n) // the first digit in the top nibble
	binary.BigEndian.PutUint64(d[0:8], hex8(uint32(v>>32)))
	binary.BigEndian.PutUint64(d[8:16], hex8(uint32(v)))
	return n
}

// hex8 returns the 8 hex digits of x as the bytes of a big-endian word.
func hex8(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	v = (v | v<<8) & 0x00ff00ff00ff00ff
	v = (v | v<<4) & 0x0f0f0f0f0f0f0f0f // one nibble per byte, most significant first
	letters := ((v + 0x0606060606060606) >> 4) & 0x0101010101010101
	return v + 0x3030303030303030 + letters*('a'-'0'-10)
}

const digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// putDec writes v in decimal at d[0:] and returns the digits written.
func putDec(d []byte, v uint64) int {
	n := ndjson.DecLen(v)
	j := n
	_ = d[n-1]
	for v >= 100 {
		q := v / 100
		k := (v - q*100) * 2
		j -= 2
		d[j], d[j+1] = digits2[k], digits2[k+1]
		v = q
	}
	if v >= 10 {
		d[0], d[1] = digits2[v*2], digits2[v*2+1]
	} else {
		d[0] = byte('0' + v)
	}
	return n
}

// putNS writes the nanoseconds ns in decimal at d[0:] and returns the
// digits written: the seconds, then the nine digits below them eight at
// a time (d must have room for 20 digits and 8 more bytes).
func putNS(d []byte, ns uint64) int {
	sec, frac := ns/1e9, ns%1e9
	if sec == 0 {
		return putDec(d, frac)
	}
	i := putDec(d, sec)
	d[i] = byte('0' + frac/1e8)
	binary.LittleEndian.PutUint64(d[i+1:], ndjson.Digits8(uint32(frac%1e8)))
	return i + 9
}
