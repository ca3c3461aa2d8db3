package intelpt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/iotap/iotap/internal/golden"
)

// TestDumpNDJSONGolden pins 'pt dump --json' byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): libipt's dump-all-packets.pt
// (every packet of the SDM but the block packets) as a raw trace, then a
// generated per-CPU stream (block packets, a suppressed IP, a TRIG with
// an instruction count, a decoding error) and a per-thread one (null
// cpu), named as perf.data streams. The packets' values are checked
// against ptdump by TestDumpJSONLibiptCorpus; this pins the shape.
func TestDumpNDJSONGolden(t *testing.T) {
	all, err := os.ReadFile(filepath.Join(corpusDir, "dump-all-packets.pt"))
	if err != nil {
		t.Skip("libipt corpus not available")
	}
	var out bytes.Buffer
	out.Write(AppendInputNDJSON(nil, "dump-all-packets.pt", FormatRaw, ""))
	if _, err := DumpJSON(&out, all, Config{}, DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	var e Encoder
	for _, p := range []Packet{
		{Kind: KindPSB}, {Kind: KindPSBEnd},
		{Kind: KindTIPPGE, IPC: IPCSext48, Payload: 0x401000},
		{Kind: KindTIP, IPC: IPCSuppressed},
		{Kind: KindBBP, Type: 2, Flags: FlagBlock4}, {Kind: KindBIP, Type: 1, Bits: 4, Payload: 0x1234}, {Kind: KindBEP, Flags: FlagIP},
		{Kind: KindTrig, Type: 0x1f, Aux: 5, Flags: FlagICNTValid | FlagIP},
		{Kind: KindPIP, Payload: 0x1000, Flags: FlagNR},
	} {
		e.Encode(p)
	}
	if e.Err() != nil {
		t.Fatal(e.Err())
	}
	gen := append(e.Bytes(), 0x02, 0xff, 0xff) // an unknown opcode
	e = Encoder{}
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindFUP, IPC: IPCUpdate16, Payload: 0x2000})
	if _, err := DumpJSON(&out, append(gen, e.Bytes()...), Config{}, DumpOptions{StreamName: "cpu 3", StreamCPU: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := DumpJSON(&out, e.Bytes(), Config{}, DumpOptions{StreamName: "tid 4242", StreamCPU: -1}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "pt-packet.ndjson", out.Bytes())
}

// FuzzDumpNDJSON: whatever the trace, every line DumpJSON writes is one
// JSON object that encoding/json parses, and the records read back as
// the packets an independent Decoder loop finds: offset, name, size, the
// payload as the kind's field, the stream's name and CPU on every record.
func FuzzDumpNDJSON(f *testing.F) {
	for _, n := range []string{"dump-all-packets.pt", "cbr-tsc-tma-mtc-cyc.pt"} {
		if b, err := os.ReadFile(filepath.Join(corpusDir, n)); err == nil {
			f.Add(b, int32(1), false)
		}
	}
	f.Add([]byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0xff}, int32(-1), true)
	f.Fuzz(func(t *testing.T, data []byte, cpu int32, noSync bool) {
		name := "cpu " + strconv.Itoa(int(cpu))
		var out bytes.Buffer
		res, err := DumpJSON(&out, data, Config{}, DumpOptions{NoSync: noSync, StreamName: name, StreamCPU: cpu})
		if err != nil {
			t.Fatal(err)
		}
		// The streamed listing (a window of 64 bytes, read one byte at a
		// time) is the same.
		var streamed bytes.Buffer
		sres, err := DumpJSONReader(&streamed, iotest.OneByteReader(bytes.NewReader(data)), 64, Config{}, DumpOptions{NoSync: noSync, StreamName: name, StreamCPU: cpu})
		if err != nil || sres != res || !bytes.Equal(streamed.Bytes(), out.Bytes()) {
			t.Fatalf("DumpJSONReader: %v, %+v (want %+v)\n%s\n---\n%s", err, sres, res, streamed.String(), out.String())
		}
		// The reference: the same decoding loop, without the output.
		type pkt struct {
			off int64
			p   Packet
		}
		var want []pkt
		errs := 0
		d := NewDecoder(data, Config{})
		if noSync {
			d.SetOffset(0)
		} else if d.SyncForward() != nil {
			d = nil
		}
		for d != nil {
			off := d.Offset()
			var p Packet
			if err := d.Next(&p); err != nil {
				if k, ok := DecodeErrorKind(err); ok && k != "truncated" {
					errs++
					want = append(want, pkt{off: off, p: Packet{Kind: KindInvalid}})
					if d.SyncForward() == nil {
						continue
					}
				}
				break
			}
			want = append(want, pkt{off, p})
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		i := 0
		for ; sc.Scan(); i++ {
			var r map[string]any
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.UseNumber()
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			if i >= len(want) {
				t.Fatalf("record %d beyond the %d packets: %s", i, len(want), sc.Text())
			}
			w := want[i]
			num := func(k string) string { n, _ := r[k].(json.Number); return string(n) }
			if r["stream"] != name || (cpu < 0) != (r["cpu"] == nil) || cpu >= 0 && num("cpu") != strconv.Itoa(int(cpu)) || num("offset") != strconv.FormatInt(w.off, 10) {
				t.Fatalf("%s: want stream %q cpu %d offset %d", sc.Text(), name, cpu, w.off)
			}
			if w.p.Kind == KindInvalid {
				if r["kind"] != NDJSONDecodeError || r["error"] == "" {
					t.Fatalf("%s: want a decode error at %d", sc.Text(), w.off)
				}
				continue
			}
			if r["kind"] != NDJSONPacket || r["packet"] != w.p.Kind.String() || num("size") != strconv.Itoa(int(w.p.Size)) {
				t.Fatalf("%s: want %v at %d", sc.Text(), w.p, w.off)
			}
			hex := "0x" + strconv.FormatUint(w.p.Payload, 16)
			dec10 := strconv.FormatUint(w.p.Payload, 10)
			switch w.p.Kind {
			case KindTSC:
				if num("tsc") != dec10 {
					t.Fatalf("%s: tsc %s", sc.Text(), dec10)
				}
			case KindMTC, KindTMA:
				if num("ctc") != dec10 {
					t.Fatalf("%s: ctc %s", sc.Text(), dec10)
				}
			case KindCYC:
				if num("cycles") != dec10 {
					t.Fatalf("%s: cycles %s", sc.Text(), dec10)
				}
			case KindPIP:
				if r["cr3"] != hex || r["nr"] != (w.p.Flags&FlagNR != 0) {
					t.Fatalf("%s: cr3 %s", sc.Text(), hex)
				}
			case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
				if w.p.IPC == IPCSuppressed && r["payload"] != nil || w.p.IPC != IPCSuppressed && r["payload"] != hex {
					t.Fatalf("%s: payload %s", sc.Text(), hex)
				}
			case KindTNT8, KindTNT64:
				s, _ := r["tnt"].(string)
				if len(s) != int(w.p.Bits) || strings.Trim(s, "TN") != "" {
					t.Fatalf("%s: %d TNT bits", sc.Text(), w.p.Bits)
				}
			}
		}
		if i != len(want) || int64(errs) != res.Errors {
			t.Fatalf("%d records, %d packets and errors (%d errors, DumpResult %+v)", i, len(want), errs, res)
		}
	})
}

// TestPacketNDJSONNoAllocs: a pt_packet record (TNT bits, an IP, a
// stream's name) and a pt_insn record of the flow listing allocate
// nothing once the buffer has grown.
func TestPacketNDJSONNoAllocs(t *testing.T) {
	last := LastIP{IP: 0x401000, Have: true}
	x := PacketJSON{Stream: "cpu 3", CPU: 3, Last: &last, Timed: true, HaveTSC: true, EstTSC: 42}
	pkts := []Packet{{Kind: KindTNT64, Size: 8, Bits: 46, Payload: 0x2aaaaaaaaaaa}, {Kind: KindTIP, Size: 7, IPC: IPCSext48, Payload: 0x401000}, {Kind: KindMTC, Size: 2, Payload: 7}}
	b := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() {
		for i := range pkts {
			b = pkts[i].AppendNDJSON(b[:0], 100, &x)
		}
	}); n != 0 {
		t.Errorf("%v allocations per 3 pt_packet records", n)
	}
	var out bytes.Buffer
	out.Grow(1 << 20)
	l := &flowLister{w: bufio.NewWriterSize(&out, 1<<16), o: FlowOptions{JSON: true, Time: true, StreamName: "cpu 3", StreamCPU: 3}}
	l.line(0x401000, false, 0)
	if n := testing.AllocsPerRun(100, func() { l.line(0x401000, true, 0) }); n != 0 {
		t.Errorf("%v allocations per pt_insn record", n)
	}
}
