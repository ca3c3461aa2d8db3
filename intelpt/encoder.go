package intelpt

import (
	"encoding/binary"
	"fmt"
)

// Append encodes p and appends it to dst. Fields are taken as documented on
// Packet; Size is ignored (the encoder picks the size). It returns an error
// for values that do not fit the packet format.
func Append(dst []byte, p *Packet) ([]byte, error) {
	bad := func(why string) ([]byte, error) {
		return dst, fmt.Errorf("intelpt: cannot encode %v: %s", p.Kind, why)
	}
	flag := func(f Flags, bit byte) byte {
		if p.Flags&f != 0 {
			return bit
		}
		return 0
	}
	switch p.Kind {
	case KindPad:
		return append(dst, opcPad), nil
	case KindPSB:
		for i := 0; i < psbSize/2; i++ {
			dst = append(dst, opcExt, extPSB)
		}
		return dst, nil
	case KindPSBEnd:
		return append(dst, opcExt, extPSBE), nil
	case KindOVF:
		return append(dst, opcExt, extOVF), nil
	case KindTraceStop:
		return append(dst, opcExt, extStop), nil
	case KindTNT8:
		if p.Bits < 1 || p.Bits > 6 || p.Payload>>p.Bits != 0 {
			return bad("tnt.8 holds 1 to 6 bits")
		}
		return append(dst, byte((p.Payload|1<<p.Bits)<<1)), nil
	case KindTNT64:
		if p.Bits < 1 || p.Bits > 47 || p.Payload>>p.Bits != 0 {
			return bad("tnt.64 holds 1 to 47 bits")
		}
		v := p.Payload | 1<<p.Bits
		dst = append(dst, opcExt, extTNT64)
		return appendLE(dst, v, 6), nil
	case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
		if p.IPC > 7 || ipcSize[p.IPC] < 0 {
			return bad("reserved ip compression")
		}
		sz := int(ipcSize[p.IPC])
		if sz < 8 && p.Payload>>(8*sz) != 0 {
			return bad("ip does not fit the compression")
		}
		op := map[Kind]byte{KindTIP: 0x0d, KindTIPPGE: 0x11, KindTIPPGD: 0x01, KindFUP: 0x1d}[p.Kind]
		dst = append(dst, byte(p.IPC)<<5|op)
		return appendLE(dst, p.Payload, sz), nil
	case KindPIP:
		if p.Payload&0x1f != 0 || p.Payload>>52 != 0 {
			return bad("cr3 must be 32-byte aligned and below 2^52")
		}
		v := p.Payload >> 5 << 1
		if p.Flags&FlagNR != 0 {
			v |= 1
		}
		dst = append(dst, opcExt, extPIP)
		return appendLE(dst, v, 6), nil
	case KindModeExec:
		return append(dst, opcMode, flag(FlagCSL, 1)|flag(FlagCSD, 2)|flag(FlagIF, 4)), nil
	case KindModeTSX:
		return append(dst, opcMode, 0x20|flag(FlagInTX, 1)|flag(FlagAbort, 2)), nil
	case KindCBR:
		if p.Payload > 0xff {
			return bad("ratio is 8 bits")
		}
		return append(dst, opcExt, extCBR, byte(p.Payload), 0), nil
	case KindTSC:
		if p.Payload>>56 != 0 {
			return bad("tsc is 56 bits")
		}
		dst = append(dst, opcTSC)
		return appendLE(dst, p.Payload, 7), nil
	case KindMTC:
		if p.Payload > 0xff {
			return bad("ctc is 8 bits")
		}
		return append(dst, opcMTC, byte(p.Payload)), nil
	case KindTMA:
		if p.Payload > 0xffff || p.Aux > 0x1ff {
			return bad("ctc is 16 bits, fc 9 bits")
		}
		return append(dst, opcExt, extTMA, byte(p.Payload), byte(p.Payload>>8), 0, byte(p.Aux), byte(p.Aux>>8)), nil
	case KindCYC:
		v := p.Payload
		if v>>61 != 0 {
			return bad("cyc holds at most 61 bits")
		}
		b := byte(v&0x1f)<<3 | 3
		v >>= 5
		if v == 0 {
			return append(dst, b), nil
		}
		dst = append(dst, b|4)
		for {
			x := byte(v&0x7f) << 1
			v >>= 7
			if v == 0 {
				return append(dst, x), nil
			}
			dst = append(dst, x|1)
		}
	case KindVMCS:
		if p.Payload&0xfff != 0 || p.Payload>>52 != 0 {
			return bad("vmcs base must be 4 KiB aligned and below 2^52")
		}
		dst = append(dst, opcExt, extVMCS)
		return appendLE(dst, p.Payload>>12, 5), nil
	case KindMNT:
		dst = append(dst, opcExt, extExt2, ext2MNT)
		return appendLE(dst, p.Payload, 8), nil
	case KindPTW:
		var sz int
		switch p.Bits {
		case 0:
			sz = 4
			if p.Payload>>32 != 0 {
				return bad("payload class 0 holds 32 bits")
			}
		case 1:
			sz = 8
		default:
			return bad("payload class must be 0 or 1")
		}
		dst = append(dst, opcExt, 0x12|p.Bits<<5|flag(FlagIP, 0x80))
		return appendLE(dst, p.Payload, sz), nil
	case KindExStop:
		return append(dst, opcExt, extExSt|flag(FlagIP, 0x80)), nil
	case KindMWait:
		if p.Payload>>32 != 0 {
			return bad("hints are 32 bits")
		}
		dst = append(dst, opcExt, extMWait)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(p.Payload))
		return binary.LittleEndian.AppendUint32(dst, p.Aux), nil
	case KindPwrE:
		if p.Type > 0xf || p.Sub > 0xf {
			return bad("states are 4 bits")
		}
		return append(dst, opcExt, extPwrE, flag(FlagHW, 0x8), p.Sub|p.Type<<4), nil
	case KindPwrX:
		if p.Type > 0xf || p.Sub > 0xf {
			return bad("states are 4 bits")
		}
		return append(dst, opcExt, extPwrX, p.Sub|p.Type<<4,
			flag(FlagInterrupt, 0x1)|flag(FlagStore, 0x4)|flag(FlagAutonomous, 0x8), 0, 0, 0), nil
	case KindCFE:
		if p.Type > 0x1f || p.Aux > 0xff {
			return bad("type is 5 bits, vector 8 bits")
		}
		return append(dst, opcExt, extCFE, p.Type|flag(FlagIP, 0x80), byte(p.Aux)), nil
	case KindEVD:
		if p.Type > 0x1f {
			return bad("type is 5 bits")
		}
		dst = append(dst, opcExt, extEVD, p.Type)
		return appendLE(dst, p.Payload, 8), nil
	case KindBBP:
		if p.Type > 0x1f {
			return bad("type is 5 bits")
		}
		return append(dst, opcExt, extBBP, p.Type|flag(FlagBlock4, 0x80)), nil
	case KindBIP:
		if p.Type > 0x1f || (p.Bits != 4 && p.Bits != 8) || (p.Bits == 4 && p.Payload>>32 != 0) {
			return bad("id is 5 bits, payload 4 or 8 bytes")
		}
		dst = append(dst, p.Type<<3|4)
		return appendLE(dst, p.Payload, int(p.Bits)), nil
	case KindBEP:
		return append(dst, opcExt, extBEP|flag(FlagIP, 0x80)), nil
	case KindTrig:
		if p.Aux > 0xffff {
			return bad("instruction count is 16 bits")
		}
		dst = append(dst, opcTrig, flag(FlagIP, 0x80)|flag(FlagICNTValid, 0x40)|flag(FlagMult, 0x20), p.Type)
		if p.Flags&FlagICNTValid != 0 {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(p.Aux))
		}
		return dst, nil
	}
	return bad("unknown kind")
}

func appendLE(dst []byte, v uint64, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// Encoder appends encoded packets to an internal buffer.
type Encoder struct {
	buf []byte
	err error
}

// Encode appends p. After the first error Encode does nothing and Err
// returns that error.
func (e *Encoder) Encode(p Packet) {
	if e.err != nil {
		return
	}
	e.buf, e.err = Append(e.buf, &p)
}

// Bytes returns the encoded stream (valid until the next Encode).
func (e *Encoder) Bytes() []byte { return e.buf }

// Err returns the first encoding error.
func (e *Encoder) Err() error { return e.err }

// Reset empties the buffer and clears the error, keeping the capacity.
func (e *Encoder) Reset() { e.buf, e.err = e.buf[:0], nil }
