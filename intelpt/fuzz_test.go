package intelpt

import (
	"errors"
	"io"
	"testing"
)

// FuzzDecoder checks that decoding arbitrary bytes never panics, always
// terminates, reports errors with an offset inside the input, and that every
// decoded packet re-encodes to the bytes it came from.
func FuzzDecoder(f *testing.F) {
	var e Encoder
	for _, p := range samplePackets() {
		e.Encode(p)
	}
	f.Add(e.Bytes())
	f.Add([]byte{0x02, 0x82, 0x02, 0x82})
	f.Add([]byte{0x07, 0x02, 0xf3, 0x02, 0x73, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cfg := range []Config{{}, {Errata: Errata{SKD007: true, SKZ84: true}}} {
			d := NewDecoder(data, cfg)
			var p Packet
			steps := 0
			for {
				steps++
				if steps > len(data)+2 {
					t.Fatalf("no progress: %d steps for %d bytes", steps, len(data))
				}
				off := d.Offset()
				err := d.Next(&p)
				if err == io.EOF {
					break
				}
				if err != nil {
					var de *DecodeError
					if !errors.As(err, &de) || de.Offset != off || off < 0 || off >= int64(len(data)) {
						t.Fatalf("error %v at decoder offset %d", err, off)
					}
					if d.SyncForward() != nil {
						break
					}
					if d.Offset() <= off-psbSize {
						t.Fatalf("resync went back from %d to %d", off, d.Offset())
					}
					continue
				}
				if p.Size == 0 || d.Offset() <= off || d.Offset() > int64(len(data)) {
					t.Fatalf("packet %+v at %d moved the decoder to %d", p, off, d.Offset())
				}
				if cfg == (Config{}) && p.Kind != KindBIP {
					re, err := Append(nil, &p)
					if err != nil {
						t.Fatalf("re-encoding %+v: %v", p, err)
					}
					var q Packet
					if err := NewDecoder(re, cfg).Next(&q); err != nil {
						t.Fatalf("decoding our encoding %x of %+v: %v", re, p, err)
					}
					q.Size, p.Size = 0, 0
					if q != p {
						t.Fatalf("bytes %x decode as %+v, re-encoded %x as %+v", data[off:d.Offset()], p, re, q)
					}
				}
			}
		}
	})
}

// FuzzDump checks the ptdump listing never panics on arbitrary input, with
// every timing option on.
func FuzzDump(f *testing.F) {
	f.Add([]byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x19, 1, 2, 3, 4, 5, 6, 7, 0x59, 1, 0x07, 0x44}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		cfg := Config{MTCFreq: mode & 0xf, NomFreq: mode >> 4, CPUID15EAX: 1, CPUID15EBX: uint32(mode)}
		opt := DumpOptions{Time: mode&1 == 0, TCal: mode&1 == 1, TimeDelta: mode&2 != 0, LastIP: true, ExecMode: true, Raw: true, NoSync: mode&4 != 0, KeepTCalOnOvf: mode&8 != 0}
		if _, err := Dump(io.Discard, data, cfg, opt); err != nil {
			t.Fatal(err)
		}
	})
}
