package intelpt

import "strconv"

// AppendJSON appends p as one JSON object (no newline) with its offset,
// kind, size and the fields that apply to its kind. IP packets carry the
// reconstructed IP when last is non-nil and has one.
func (p *Packet) AppendJSON(b []byte, off int64, last *LastIP) []byte {
	b = append(b, `{"offset":`...)
	b = strconv.AppendInt(b, off, 10)
	b = append(b, `,"kind":"`...)
	b = append(b, p.Kind.String()...)
	b = append(b, `","size":`...)
	b = strconv.AppendUint(b, uint64(p.Size), 10)
	num := func(name string, v uint64) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = strconv.AppendUint(b, v, 10)
	}
	hex := func(name string, v uint64) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, `":"0x`...)
		b = strconv.AppendUint(b, v, 16)
		b = append(b, '"')
	}
	str := func(name, v string) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, `":"`...)
		b = append(b, v...)
		b = append(b, '"')
	}
	flag := func(name string, f Flags) {
		if p.Flags&f != 0 {
			b = append(b, ',', '"')
			b = append(b, name...)
			b = append(b, `":true`...)
		}
	}
	switch p.Kind {
	case KindTNT8, KindTNT64:
		t := make([]byte, 0, 48)
		for i := int(p.Bits) - 1; i >= 0; i-- {
			if p.Payload>>uint(i)&1 != 0 {
				t = append(t, 'T')
			} else {
				t = append(t, 'N')
			}
		}
		str("tnt", string(t))
	case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
		num("ipc", uint64(p.IPC))
		if p.IPC != IPCSuppressed {
			hex("payload", p.Payload)
		}
		if last != nil && last.Have && !last.Suppressed {
			hex("ip", last.IP)
		}
	case KindPIP:
		hex("cr3", p.Payload)
		flag("nr", FlagNR)
	case KindModeExec:
		str("mode", execMode(p.Flags))
		flag("if", FlagIF)
	case KindModeTSX:
		flag("intx", FlagInTX)
		flag("abort", FlagAbort)
	case KindCBR:
		num("ratio", p.Payload)
	case KindTSC:
		num("tsc", p.Payload)
	case KindMTC:
		num("ctc", p.Payload)
	case KindTMA:
		num("ctc", p.Payload)
		num("fc", uint64(p.Aux))
	case KindCYC:
		num("cycles", p.Payload)
	case KindVMCS:
		hex("vmcs", p.Payload)
	case KindMNT:
		hex("payload", p.Payload)
	case KindPTW:
		num("plc", uint64(p.Bits))
		hex("payload", p.Payload)
		flag("ip", FlagIP)
	case KindExStop, KindBEP:
		flag("ip", FlagIP)
	case KindMWait:
		hex("hints", p.Payload)
		hex("ext", uint64(p.Aux))
	case KindPwrE:
		num("state", uint64(p.Type))
		num("sub_state", uint64(p.Sub))
		flag("hw", FlagHW)
	case KindPwrX:
		num("last", uint64(p.Type))
		num("deepest", uint64(p.Sub))
		flag("interrupt", FlagInterrupt)
		flag("store", FlagStore)
		flag("autonomous", FlagAutonomous)
	case KindCFE:
		num("type", uint64(p.Type))
		str("name", CFETypeName(p.Type))
		num("vector", uint64(p.Aux))
		flag("ip", FlagIP)
	case KindEVD:
		num("type", uint64(p.Type))
		str("name", EVDTypeName(p.Type))
		hex("payload", p.Payload)
	case KindTrig:
		hex("trbv", uint64(p.Type))
		if p.Flags&FlagICNTValid != 0 {
			num("icnt", uint64(p.Aux))
		}
		flag("ip", FlagIP)
		flag("mult", FlagMult)
	case KindBBP:
		num("type", uint64(p.Type))
		if p.Flags&FlagBlock4 != 0 {
			num("item_size", 4)
		} else {
			num("item_size", 8)
		}
	case KindBIP:
		num("id", uint64(p.Type))
		hex("payload", p.Payload)
	}
	return append(b, '}')
}
