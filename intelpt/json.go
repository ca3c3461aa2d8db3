package intelpt

import "github.com/iotap/iotap/internal/ndjson"

// Record kinds of 'iotap pt dump --json' (docs/ndjson.md).
const (
	NDJSONPacket      = "pt_packet"       // one packet
	NDJSONDecodeError = "pt_decode_error" // a packet that did not decode (decoding resumes at the next PSB)
)

// PacketJSON is what Packet.AppendNDJSON writes besides the packet itself.
type PacketJSON struct {
	// Stream and CPU name the stream of a perf.data input ("cpu N" or
	// "tid N", and its CPU, -1 for null); Stream "" leaves both out (a
	// raw trace: the stream's "input" record names the file).
	Stream string
	CPU    int32
	// Last is the last IP (reset at each PSB): IP packets carry it as
	// "ip" (null when nil, unknown or suppressed).
	Last *LastIP
	// Timed marks a timing packet (MTC, TMA, CYC...) other than TSC:
	// "est_tsc" is EstTSC when HaveTSC, else null.
	Timed, HaveTSC bool
	EstTSC         uint64
}

// appendStream appends "stream" and "cpu" when s names a stream.
func appendStream(b []byte, stream string, cpu int32) []byte {
	if stream == "" {
		return b
	}
	b = ndjson.Str(b, "stream", stream)
	if cpu < 0 {
		return ndjson.Null(b, "cpu")
	}
	return ndjson.Int(b, "cpu", int64(cpu))
}

// AppendDecodeErrorNDJSON appends the pt_decode_error record of a packet
// at off that did not decode: why (DecodeErrorKind's words) and the
// stream (as in PacketJSON).
func AppendDecodeErrorNDJSON(b []byte, stream string, cpu int32, off int64, why string) []byte {
	b = ndjson.Begin(b, NDJSONDecodeError)
	b = appendStream(b, stream, cpu)
	b = ndjson.Int(b, "offset", off)
	b = ndjson.Str(b, "error", why)
	return ndjson.End(b)
}

// AppendNDJSON appends p's pt_packet record (one NDJSON line): the stream
// (x.Stream), the packet's offset in it, its name as ptdump prints it
// ("packet": "tnt.8", "tip.pge", ...), its size in bytes and the fields
// of its kind (docs/ndjson.md). Addresses and payloads are "0x..." hex
// strings; flags are booleans, always present on the kinds that have them.
func (p *Packet) AppendNDJSON(b []byte, off int64, x *PacketJSON) []byte {
	b = ndjson.Begin(b, NDJSONPacket)
	b = appendStream(b, x.Stream, x.CPU)
	b = ndjson.Int(b, "offset", off)
	b = ndjson.Str(b, "packet", p.Kind.String())
	b = ndjson.Uint(b, "size", uint64(p.Size))
	flag := func(b []byte, name string, f Flags) []byte { return ndjson.Bool(b, name, p.Flags&f != 0) }
	switch p.Kind {
	case KindTNT8, KindTNT64:
		b = append(ndjson.Key(b, "tnt"), '"')
		for i := int(p.Bits) - 1; i >= 0; i-- {
			if p.Payload>>uint(i)&1 != 0 {
				b = append(b, 'T')
			} else {
				b = append(b, 'N')
			}
		}
		b = append(b, '"')
	case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
		b = ndjson.Uint(b, "ipc", uint64(p.IPC))
		if p.IPC != IPCSuppressed {
			b = ndjson.HexUint(b, "payload", p.Payload)
		} else {
			b = ndjson.Null(b, "payload")
		}
		if l := x.Last; l != nil && l.Have && !l.Suppressed {
			b = ndjson.HexUint(b, "ip", l.IP)
		} else {
			b = ndjson.Null(b, "ip")
		}
	case KindPIP:
		b = ndjson.HexUint(b, "cr3", p.Payload)
		b = flag(b, "nr", FlagNR)
	case KindModeExec:
		b = ndjson.Str(b, "mode", execMode(p.Flags))
		b = flag(b, "if", FlagIF)
	case KindModeTSX:
		b = flag(b, "intx", FlagInTX)
		b = flag(b, "abort", FlagAbort)
	case KindCBR:
		b = ndjson.Uint(b, "ratio", p.Payload)
	case KindTSC:
		b = ndjson.Uint(b, "tsc", p.Payload)
	case KindMTC:
		b = ndjson.Uint(b, "ctc", p.Payload)
	case KindTMA:
		b = ndjson.Uint(b, "ctc", p.Payload)
		b = ndjson.Uint(b, "fc", uint64(p.Aux))
	case KindCYC:
		b = ndjson.Uint(b, "cycles", p.Payload)
	case KindVMCS:
		b = ndjson.HexUint(b, "vmcs", p.Payload)
	case KindMNT:
		b = ndjson.HexUint(b, "payload", p.Payload)
	case KindPTW:
		b = ndjson.Uint(b, "plc", uint64(p.Bits))
		b = ndjson.HexUint(b, "payload", p.Payload)
		b = flag(b, "ip_bit", FlagIP)
	case KindExStop, KindBEP:
		b = flag(b, "ip_bit", FlagIP)
	case KindMWait:
		b = ndjson.HexUint(b, "hints", p.Payload)
		b = ndjson.HexUint(b, "ext", uint64(p.Aux))
	case KindPwrE:
		b = ndjson.Uint(b, "state", uint64(p.Type))
		b = ndjson.Uint(b, "sub_state", uint64(p.Sub))
		b = flag(b, "hw", FlagHW)
	case KindPwrX:
		b = ndjson.Uint(b, "last", uint64(p.Type))
		b = ndjson.Uint(b, "deepest", uint64(p.Sub))
		b = flag(b, "interrupt", FlagInterrupt)
		b = flag(b, "store", FlagStore)
		b = flag(b, "autonomous", FlagAutonomous)
	case KindCFE:
		b = ndjson.Uint(b, "cfe_type", uint64(p.Type))
		b = ndjson.Str(b, "name", CFETypeName(p.Type))
		b = ndjson.Uint(b, "vector", uint64(p.Aux))
		b = flag(b, "ip_bit", FlagIP)
	case KindEVD:
		b = ndjson.Uint(b, "evd_type", uint64(p.Type))
		b = ndjson.Str(b, "name", EVDTypeName(p.Type))
		b = ndjson.HexUint(b, "payload", p.Payload)
	case KindTrig:
		b = ndjson.HexUint(b, "trbv", uint64(p.Type))
		if p.Flags&FlagICNTValid != 0 {
			b = ndjson.Uint(b, "icnt", uint64(p.Aux))
		} else {
			b = ndjson.Null(b, "icnt")
		}
		b = flag(b, "ip_bit", FlagIP)
		b = flag(b, "mult", FlagMult)
	case KindBBP:
		b = ndjson.Uint(b, "bbp_type", uint64(p.Type))
		if p.Flags&FlagBlock4 != 0 {
			b = ndjson.Uint(b, "item_size", 4)
		} else {
			b = ndjson.Uint(b, "item_size", 8)
		}
	case KindBIP:
		b = ndjson.Uint(b, "id", uint64(p.Type))
		b = ndjson.HexUint(b, "payload", p.Payload)
	}
	if x.Timed && p.Kind != KindTSC {
		if x.HaveTSC {
			b = ndjson.Uint(b, "est_tsc", x.EstTSC)
		} else {
			b = ndjson.Null(b, "est_tsc")
		}
	}
	return ndjson.End(b)
}
