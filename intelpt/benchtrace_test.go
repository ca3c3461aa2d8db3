package intelpt

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// mutatedTrace is the trace of round (0, 1, ...) that the tests of the
// segmented decoders (DumpFile, ComputeStatsFile) compare with one pass:
// a copy of base that is clean (round%3 == 0), corrupted at 1 to 40
// random bytes (decoding errors and resyncs inside segments and at cuts;
// round%3 == 1) or cut short by up to 20000 bytes with a bit flipped
// (round%3 == 2), and every fourth round preceded by garbage before the
// first PSB; r draws the places.
func mutatedTrace(base []byte, round int, r *rand.Rand) []byte {
	buf := bytes.Clone(base)
	if round%3 == 1 {
		for i := 1 + r.IntN(40); i > 0; i-- {
			buf[r.IntN(len(buf))] = byte(r.Uint32())
		}
	}
	if round%3 == 2 {
		buf = buf[:len(buf)-r.IntN(20000)]
		buf[r.IntN(len(buf))] ^= 0x40
	}
	if round%4 == 3 {
		buf = append(bytes.Repeat([]byte{0x55}, r.IntN(3000)), buf...) // garbage before the first PSB
	}
	return buf
}

// realisticTrace encodes about size bytes of a trace with a packet mix like
// real branch traces: mostly TNT, compressed TIPs, CYC/MTC timing, a PSB+
// every 4 KiB.
func realisticTrace(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	e := Encoder{buf: make([]byte, 0, size+64)}
	nextPSB := 0
	ip := uint64(0x401000)
	for len(e.buf) < size {
		if len(e.buf) >= nextPSB {
			e.Encode(Packet{Kind: KindPSB})
			e.Encode(Packet{Kind: KindTSC, Payload: uint64(len(e.buf)) * 7})
			e.Encode(Packet{Kind: KindTMA, Payload: uint64(r.IntN(1 << 16)), Aux: uint32(r.IntN(512))})
			e.Encode(Packet{Kind: KindCBR, Payload: 24})
			e.Encode(Packet{Kind: KindModeExec, Flags: FlagCSL | FlagIF})
			e.Encode(Packet{Kind: KindFUP, IPC: IPCSext48, Payload: ip})
			e.Encode(Packet{Kind: KindPSBEnd})
			nextPSB = len(e.buf) + 4096
		}
		switch x := r.IntN(100); {
		case x < 40:
			bits := uint8(1 + r.IntN(6))
			e.Encode(Packet{Kind: KindTNT8, Bits: bits, Payload: r.Uint64() & (1<<bits - 1)})
		case x < 55:
			e.Encode(Packet{Kind: KindCYC, Payload: uint64(r.IntN(1 << (5 + 7*r.IntN(2))))})
		case x < 70:
			ip += uint64(r.IntN(1 << 12))
			if r.IntN(4) == 0 {
				e.Encode(Packet{Kind: KindTIP, IPC: IPCUpdate32, Payload: ip & 0xffffffff})
			} else {
				e.Encode(Packet{Kind: KindTIP, IPC: IPCUpdate16, Payload: ip & 0xffff})
			}
		case x < 78:
			e.Encode(Packet{Kind: KindMTC, Payload: uint64(r.IntN(256))})
		case x < 83:
			bits := uint8(7 + r.IntN(41))
			e.Encode(Packet{Kind: KindTNT64, Bits: bits, Payload: r.Uint64() & (1<<bits - 1)})
		case x < 86:
			e.Encode(Packet{Kind: KindFUP, IPC: IPCUpdate16, Payload: ip & 0xffff})
		case x < 88:
			e.Encode(Packet{Kind: KindTIPPGD, IPC: IPCSuppressed})
			e.Encode(Packet{Kind: KindTIPPGE, IPC: IPCSext48, Payload: ip})
		case x < 90:
			e.Encode(Packet{Kind: KindModeExec, Flags: FlagCSL})
		case x < 95:
			e.Encode(Packet{Kind: KindPad})
		case x < 96:
			e.Encode(Packet{Kind: KindTSC, Payload: uint64(len(e.buf)) * 7})
		case x < 98:
			e.Encode(Packet{Kind: KindPTW, Bits: 1, Payload: r.Uint64()})
		default:
			e.Encode(Packet{Kind: KindPIP, Payload: uint64(r.IntN(1<<20)) << 12})
		}
	}
	if e.err != nil {
		panic(e.err)
	}
	return e.buf
}

// TestWriteBenchTrace writes the benchmark trace for bench/pt.sh when
// IOTAP_PT_BENCH_OUT names a file (IOTAP_PT_BENCH_MB sets its size).
func TestWriteBenchTrace(t *testing.T) {
	out := os.Getenv("IOTAP_PT_BENCH_OUT")
	if out == "" {
		t.Skip("set IOTAP_PT_BENCH_OUT to write the benchmark trace")
	}
	mb := 64
	if s := os.Getenv("IOTAP_PT_BENCH_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	if err := os.WriteFile(out, realisticTrace(mb<<20, 1), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRealisticTraceDecodes(t *testing.T) {
	buf := realisticTrace(1<<20, 2)
	d := NewDecoder(buf, Config{})
	var p Packet
	n := 0
	for {
		err := d.Next(&p)
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatal(err)
			}
			break
		}
		n++
	}
	if n < 1<<17 {
		t.Fatalf("only %d packets in 1 MiB", n)
	}
	s := ComputeStats(buf, Config{})
	if s.Packets != int64(n) || s.Errors != 0 || s.PSBs < 200 {
		t.Fatalf("stats %+v", s)
	}
}

// BenchmarkDecodeFile decodes IOTAP_PT_BENCH_FILE (bench/pt.sh) or a
// 16 MiB realistic trace.
func BenchmarkDecodeFile(b *testing.B) {
	var buf []byte
	if f := os.Getenv("IOTAP_PT_BENCH_FILE"); f != "" {
		var err error
		if buf, err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	} else {
		buf = realisticTrace(16<<20, 1)
	}
	d := NewDecoder(buf, Config{})
	var p Packet
	var packets int64
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d.Reset(buf)
		packets = 0
		for d.Next(&p) == nil {
			packets++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*packets), "ns/packet")
	b.ReportMetric(float64(packets), "packets")
}
