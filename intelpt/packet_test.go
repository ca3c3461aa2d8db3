package intelpt

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// samplePackets has one or more packets of every kind.
func samplePackets() []Packet {
	return []Packet{
		{Kind: KindPSB}, {Kind: KindPSBEnd}, {Kind: KindPad}, {Kind: KindOVF}, {Kind: KindTraceStop},
		{Kind: KindTNT8, Bits: 5, Payload: 0x11}, {Kind: KindTNT8, Bits: 6, Payload: 0x3f},
		{Kind: KindTNT64, Bits: 47, Payload: 0x7fff00001234}, {Kind: KindTNT64, Bits: 1, Payload: 0},
		{Kind: KindTIP, IPC: IPCFull, Payload: 0xffffffffffff1000},
		{Kind: KindTIP, IPC: IPCSext48, Payload: 0xffffffff1000},
		{Kind: KindTIPPGE, IPC: IPCUpdate16, Payload: 0x1234},
		{Kind: KindTIPPGD, IPC: IPCUpdate32, Payload: 0x12345678},
		{Kind: KindFUP, IPC: IPCUpdate48, Payload: 0x123456789abc},
		{Kind: KindFUP, IPC: IPCSuppressed},
		{Kind: KindPIP, Payload: 0xafafa0, Flags: FlagNR}, {Kind: KindPIP, Payload: 0xfffffffffffe0},
		{Kind: KindModeExec, Flags: FlagCSL | FlagIF}, {Kind: KindModeExec, Flags: FlagCSD},
		{Kind: KindModeTSX, Flags: FlagInTX}, {Kind: KindModeTSX, Flags: FlagAbort},
		{Kind: KindCBR, Payload: 0x24}, {Kind: KindTSC, Payload: 0xffffffffffffff},
		{Kind: KindMTC, Payload: 0x94}, {Kind: KindTMA, Payload: 0xbeef, Aux: 0x1ff},
		{Kind: KindCYC, Payload: 0}, {Kind: KindCYC, Payload: 0x1f}, {Kind: KindCYC, Payload: 0x20},
		{Kind: KindCYC, Payload: 0x1fffffffffffffff},
		{Kind: KindVMCS, Payload: 0xabcd000}, {Kind: KindMNT, Payload: 0x2a2242e5d4c3b2a1},
		{Kind: KindPTW, Bits: 0, Payload: 0x90abcdef, Flags: FlagIP}, {Kind: KindPTW, Bits: 1, Payload: 0x1234567890abcdef},
		{Kind: KindExStop}, {Kind: KindExStop, Flags: FlagIP},
		{Kind: KindMWait, Payload: 0xb, Aux: 1},
		{Kind: KindPwrE, Type: 1, Sub: 2, Flags: FlagHW},
		{Kind: KindPwrX, Type: 3, Sub: 5, Flags: FlagStore},
		{Kind: KindCFE, Type: 1, Aux: 14, Flags: FlagIP}, {Kind: KindEVD, Type: 2, Payload: 0xf00baa},
		{Kind: KindTrig, Type: 0xa1, Flags: FlagMult}, {Kind: KindTrig, Type: 0xa1, Flags: FlagIP | FlagICNTValid, Aux: 23},
		{Kind: KindBBP, Type: 4, Flags: FlagBlock4}, {Kind: KindBIP, Type: 3, Bits: 4, Payload: 0xdeadbeef},
		{Kind: KindBEP, Flags: FlagIP},
		{Kind: KindBBP, Type: 2}, {Kind: KindBIP, Type: 31, Bits: 8, Payload: 0x0123456789abcdef}, {Kind: KindBEP},
	}
}

func TestRoundTrip(t *testing.T) {
	var e Encoder
	want := samplePackets()
	for _, p := range want {
		e.Encode(p)
	}
	if e.Err() != nil {
		t.Fatal(e.Err())
	}
	d := NewDecoder(e.Bytes(), Config{})
	seen := map[Kind]bool{}
	for i, w := range want {
		var p Packet
		off := d.Offset()
		if err := d.Next(&p); err != nil {
			t.Fatalf("packet %d (%v) at %#x: %v", i, w.Kind, off, err)
		}
		size := p.Size
		p.Size = 0
		if p != w {
			t.Errorf("packet %d: got %+v, want %+v", i, p, w)
		}
		re, err := Append(nil, &w)
		if err != nil || len(re) != int(size) || !bytes.Equal(re, e.Bytes()[off:off+int64(size)]) {
			t.Errorf("packet %d: size %d, re-encoded %x (%v)", i, size, re, err)
		}
		seen[p.Kind] = true
	}
	var p Packet
	if err := d.Next(&p); err != io.EOF {
		t.Fatalf("after last packet: %v, want io.EOF", err)
	}
	for _, k := range Kinds() {
		if k != KindInvalid && !seen[k] {
			t.Errorf("kind %v not covered", k)
		}
	}
}

func TestLastIP(t *testing.T) {
	var l LastIP
	steps := []struct {
		ipc  IPC
		v    uint64
		want uint64
	}{
		{IPCSext48, 0x800000001000, 0xffff800000001000},
		{IPCUpdate16, 0x2345, 0xffff800000002345},
		{IPCUpdate32, 0x11112222, 0xffff800011112222},
		{IPCUpdate48, 0x7fff00000000, 0xffff7fff00000000},
		{IPCFull, 0x42, 0x42},
	}
	for _, s := range steps {
		if err := l.Update(s.ipc, s.v); err != nil || l.IP != s.want || !l.Have {
			t.Fatalf("update(%d, %#x): ip %#x err %v, want %#x", s.ipc, s.v, l.IP, err, s.want)
		}
	}
	l.Update(IPCSuppressed, 0)
	if !l.Suppressed || l.IP != 0x42 {
		t.Fatalf("suppressed: %+v", l)
	}
	if err := l.Update(5, 0); !errors.Is(err, ErrBadPacket) {
		t.Fatalf("reserved ipc: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		off  int64
		err  error
	}{
		{"bad ext", []byte{0x00, 0x02, 0x04}, 1, ErrBadOpcode},
		{"bad ext2", []byte{0x02, 0xc3, 0x01}, 0, ErrBadOpcode},
		{"reserved ipc", []byte{0x00, 0x00, 0xad}, 2, ErrBadPacket},
		{"bad mode leaf", []byte{0x99, 0x40}, 0, ErrBadPacket},
		{"tma reserved", []byte{0x02, 0x73, 0, 0, 1, 0, 0}, 0, ErrBadPacket},
		{"tnt64 empty", []byte{0x02, 0xa3, 0, 0, 0, 0, 0, 0}, 0, ErrBadPacket},
		{"ptw class", []byte{0x02, 0x52, 0, 0, 0, 0}, 0, ErrBadPacket},
		{"short tsc", []byte{0x00, 0x19, 1, 2}, 1, ErrTruncated},
		{"short psb", []byte{0x02, 0x82, 0x02, 0x82}, 0, ErrTruncated},
		{"bad psb", append([]byte{0x02, 0x82}, bytes.Repeat([]byte{0x02, 0x83}, 7)...), 0, ErrBadPacket},
		{"cyc too long", []byte{0x07, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, 0, ErrBadPacket},
		{"short cyc", []byte{0x07, 1}, 0, ErrTruncated},
	}
	for _, tt := range tests {
		d := NewDecoder(tt.in, Config{})
		var p Packet
		var err error
		for err == nil {
			err = d.Next(&p)
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Offset != tt.off || !errors.Is(err, tt.err) {
			t.Errorf("%s: got %v, want %v at %#x", tt.name, err, tt.err, tt.off)
		}
		if d.Offset() != tt.off {
			t.Errorf("%s: decoder moved to %#x after error", tt.name, d.Offset())
		}
	}
}

func TestErrata(t *testing.T) {
	// SKD007: a 2-byte CYC that looks like an ext opcode, followed by f3,
	// is an OVF.
	in := []byte{0x07, 0x02, 0xf3}
	var p Packet
	d := NewDecoder(in, Config{Errata: Errata{SKD007: true}})
	if err := d.Next(&p); err != nil || p.Kind != KindOVF || d.Offset() != 3 {
		t.Fatalf("skd007: %+v at %d, %v", p, d.Offset(), err)
	}
	d = NewDecoder(in, Config{})
	if err := d.Next(&p); err != nil || p.Kind != KindCYC || d.Offset() != 2 {
		t.Fatalf("no erratum: %+v at %d, %v", p, d.Offset(), err)
	}
	// SKZ84: a TMA with reserved bits set becomes an invalid 8-byte packet.
	in = []byte{0x02, 0x73, 0, 0, 1, 0, 0, 0}
	d = NewDecoder(in, Config{Errata: Errata{SKZ84: true}})
	if err := d.Next(&p); err != nil || p.Kind != KindInvalid || d.Offset() != 8 {
		t.Fatalf("skz84: %+v at %d, %v", p, d.Offset(), err)
	}
}

func TestSync(t *testing.T) {
	var e Encoder
	e.Encode(Packet{Kind: KindTNT8, Bits: 2, Payload: 1})
	e.Encode(Packet{Kind: KindTSC, Payload: 7}) // offset 1
	psb1 := len(e.Bytes())                      // 9
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindPSBEnd})
	e.Encode(Packet{Kind: KindPad})
	psb2 := len(e.Bytes())
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindFUP, IPC: IPCFull, Payload: 0x1000})
	buf := e.Bytes()

	d := NewDecoder(buf, Config{})
	if err := d.SyncForward(); err != nil || d.Offset() != int64(psb1) {
		t.Fatalf("first sync: %v at %d, want %d", err, d.Offset(), psb1)
	}
	if err := d.SyncForward(); err != nil || d.Offset() != int64(psb2) {
		t.Fatalf("second sync: %v at %d, want %d", err, d.Offset(), psb2)
	}
	if err := d.SyncForward(); !errors.Is(err, ErrNoSync) {
		t.Fatalf("third sync: %v", err)
	}
	d = NewDecoder(buf, Config{})
	if err := d.SyncBackward(); err != nil || d.Offset() != int64(psb2) {
		t.Fatalf("backward from end: %v at %d", err, d.Offset())
	}
	if err := d.SyncBackward(); err != nil || d.Offset() != int64(psb1) {
		t.Fatalf("backward again: %v at %d", err, d.Offset())
	}
	if err := d.SyncBackward(); !errors.Is(err, ErrNoSync) {
		t.Fatalf("backward past start: %v", err)
	}
	// Resync after a bad packet.
	bad := append([]byte{0x02, 0x04, 0xff}, buf[psb1:]...)
	d = NewDecoder(bad, Config{})
	var p Packet
	if err := d.Next(&p); !errors.Is(err, ErrBadOpcode) {
		t.Fatalf("bad packet: %v", err)
	}
	if err := d.SyncForward(); err != nil || d.Offset() != 3 {
		t.Fatalf("resync: %v at %d", err, d.Offset())
	}
	if err := d.Next(&p); err != nil || p.Kind != KindPSB || d.SyncOffset() != 3 {
		t.Fatalf("after resync: %+v %v", p, err)
	}
}

// randomStream encodes n random valid packets (no block packets, which
// libipt does not know) and returns the stream and the packets.
func randomStream(r *rand.Rand, n int, withBlocks bool) ([]byte, []Packet) {
	var e Encoder
	var ps []Packet
	for len(ps) < n {
		p := randomPacket(r, withBlocks)
		if p.Kind == KindBBP {
			// A block: BBP, a few BIPs, BEP.
			e.Encode(p)
			ps = append(ps, p)
			sz := uint8(8)
			if p.Flags&FlagBlock4 != 0 {
				sz = 4
			}
			for i := r.IntN(4); i > 0; i-- {
				b := Packet{Kind: KindBIP, Type: uint8(r.IntN(32)), Bits: sz, Payload: r.Uint64() >> (64 - 8*uint(sz))}
				e.Encode(b)
				ps = append(ps, b)
			}
			b := Packet{Kind: KindBEP, Flags: Flags(r.IntN(2)) * FlagIP}
			e.Encode(b)
			ps = append(ps, b)
			continue
		}
		e.Encode(p)
		ps = append(ps, p)
	}
	if e.Err() != nil {
		panic(e.Err())
	}
	return e.Bytes(), ps
}

func randomPacket(r *rand.Rand, withBlocks bool) Packet {
	for {
		k := Kind(1 + r.IntN(int(numKinds)-1))
		if k == KindBIP || k == KindBEP || (k == KindBBP && !withBlocks) {
			continue
		}
		p := Packet{Kind: k}
		switch k {
		case KindTNT8:
			p.Bits = uint8(1 + r.IntN(6))
			p.Payload = r.Uint64() & (1<<p.Bits - 1)
		case KindTNT64:
			p.Bits = uint8(1 + r.IntN(47))
			p.Payload = r.Uint64() & (1<<p.Bits - 1)
		case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
			p.IPC = []IPC{0, 1, 2, 3, 4, 6}[r.IntN(6)]
			if sz := ipcSize[p.IPC]; sz > 0 {
				p.Payload = r.Uint64() >> (64 - 8*uint(sz))
			}
		case KindPIP:
			p.Payload = r.Uint64() >> 17 << 5
			p.Flags = Flags(r.IntN(2)) * FlagNR
		case KindModeExec:
			p.Flags = Flags(r.IntN(8)) * FlagCSL & (FlagCSL | FlagCSD | FlagIF)
		case KindModeTSX:
			p.Flags = Flags(r.IntN(4)) * FlagInTX & (FlagInTX | FlagAbort)
		case KindCBR, KindMTC:
			p.Payload = uint64(r.IntN(256))
		case KindTSC:
			p.Payload = r.Uint64() >> 8
		case KindTMA:
			p.Payload, p.Aux = uint64(r.IntN(1<<16)), uint32(r.IntN(512))
		case KindCYC:
			p.Payload = r.Uint64() >> uint(3+r.IntN(61))
		case KindVMCS:
			p.Payload = r.Uint64() >> 24 << 12
		case KindMNT, KindEVD:
			p.Payload = r.Uint64()
			if k == KindEVD {
				p.Type = uint8(r.IntN(32))
			}
		case KindPTW:
			p.Bits = uint8(r.IntN(2))
			p.Payload = r.Uint64() >> (32 * (1 - uint(p.Bits)))
			p.Flags = Flags(r.IntN(2)) * FlagIP
		case KindExStop:
			p.Flags = Flags(r.IntN(2)) * FlagIP
		case KindMWait:
			p.Payload, p.Aux = uint64(r.Uint32()), r.Uint32()
		case KindPwrE:
			p.Type, p.Sub = uint8(r.IntN(16)), uint8(r.IntN(16))
			p.Flags = Flags(r.IntN(2)) * FlagHW
		case KindPwrX:
			p.Type, p.Sub = uint8(r.IntN(16)), uint8(r.IntN(16))
			p.Flags = Flags(r.IntN(8)) * FlagInterrupt & (FlagInterrupt | FlagStore | FlagAutonomous)
		case KindCFE:
			p.Type, p.Aux = uint8(r.IntN(32)), uint32(r.IntN(256))
			p.Flags = Flags(r.IntN(2)) * FlagIP
		case KindTrig:
			p.Type = uint8(r.IntN(256))
			p.Flags = Flags(r.IntN(8)) * FlagICNTValid & (FlagICNTValid | FlagMult | FlagIP)
			if p.Flags&FlagICNTValid != 0 {
				p.Aux = uint32(r.IntN(1 << 16))
			}
		case KindBBP:
			p.Type = uint8(r.IntN(32))
			p.Flags = Flags(r.IntN(2)) * FlagBlock4
		}
		return p
	}
}

func TestRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf, want := randomStream(r, 20000, true)
	d := NewDecoder(buf, Config{})
	var p Packet
	for i, w := range want {
		if err := d.Next(&p); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		p.Size = 0
		if p != w {
			t.Fatalf("packet %d: got %+v, want %+v", i, p, w)
		}
	}
	if err := d.Next(&p); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestDecoderAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf, want := randomStream(r, 1000, true)
	d := NewDecoder(buf, Config{})
	var p Packet
	allocs := testing.AllocsPerRun(10, func() {
		d.Reset(buf)
		for d.Next(&p) == nil {
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run of %d packets, want 0", allocs, len(want))
	}
}

func BenchmarkDecoder(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	buf, _ := randomStream(r, 1<<16, false)
	d := NewDecoder(buf, Config{})
	var p Packet
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		d.Reset(buf)
		for d.Next(&p) == nil {
		}
	}
}
