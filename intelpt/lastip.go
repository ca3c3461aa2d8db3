package intelpt

// LastIP reconstructs full IPs from compressed TIP/FUP payloads. The zero
// value has no IP; reset it (assign LastIP{}) at every PSB.
type LastIP struct {
	IP         uint64
	Have       bool // an IP has been seen
	Suppressed bool // the last IP packet had its IP suppressed
}

// Update applies an IP packet's compressed payload. It returns ErrBadPacket
// for a reserved compression.
func (l *LastIP) Update(ipc IPC, payload uint64) error {
	switch ipc {
	case IPCSuppressed:
		l.Suppressed = true
		return nil
	case IPCUpdate16:
		l.IP = l.IP&^0xffff | payload&0xffff
	case IPCUpdate32:
		l.IP = l.IP&^0xffffffff | payload&0xffffffff
	case IPCUpdate48:
		l.IP = l.IP&^0xffffffffffff | payload&0xffffffffffff
	case IPCSext48:
		l.IP = sext48(payload)
	case IPCFull:
		l.IP = payload
	default:
		return ErrBadPacket
	}
	l.Have, l.Suppressed = true, false
	return nil
}

func sext48(v uint64) uint64 {
	return uint64(int64(v<<16) >> 16)
}
