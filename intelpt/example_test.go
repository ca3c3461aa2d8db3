package intelpt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iotap/iotap/intelpt"
)

// Encode a few packets, then decode them without allocating.
func ExampleDecoder() {
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTIPPGE, IPC: intelpt.IPCSext48, Payload: 0x401000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 3, Payload: 0b101})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTIP, IPC: intelpt.IPCUpdate16, Payload: 0x2040})

	d := intelpt.NewDecoder(e.Bytes(), intelpt.Config{})
	if err := d.SyncForward(); err != nil {
		panic(err)
	}
	var p intelpt.Packet
	var last intelpt.LastIP
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err == io.EOF {
			break
		}
		var de *intelpt.DecodeError
		if errors.As(err, &de) {
			fmt.Println("bad packet at", de.Offset)
			break
		}
		switch p.Kind {
		case intelpt.KindTIP, intelpt.KindTIPPGE:
			last.Update(p.IPC, p.Payload)
			fmt.Printf("%#02x %v ip=%#x\n", off, p.Kind, last.IP)
		case intelpt.KindTNT8:
			fmt.Printf("%#02x %v %0*b\n", off, p.Kind, p.Bits, p.Payload)
		default:
			fmt.Printf("%#02x %v\n", off, p.Kind)
		}
	}
	// Output:
	// 0x00 psb
	// 0x10 psbend
	// 0x12 tip.pge ip=0x401000
	// 0x19 tnt.8 101
	// 0x1a tip ip=0x402040
}

// List a trace exactly like libipt's ptdump.
func ExampleDump() {
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: intelpt.FlagCSL})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCUpdate32, Payload: 0x1000})
	if _, err := intelpt.Dump(os.Stdout, e.Bytes(), intelpt.Config{}, intelpt.DumpOptions{LastIP: true}); err != nil {
		panic(err)
	}
	// Output:
	// 0000000000000000  psb
	// 0000000000000010  mode.exec  cs.l
	// 0000000000000012  psbend
	// 0000000000000014  fup        2: ????????00001000       ip   0000000000001000
}

// List a trace as NDJSON, the IPs reconstructed (iotap pt dump --json).
func ExampleDumpJSON() {
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTIPPGE, IPC: intelpt.IPCSext48, Payload: 0x401000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTIP, IPC: intelpt.IPCUpdate16, Payload: 0x2040})
	if _, err := intelpt.DumpJSON(os.Stdout, e.Bytes(), intelpt.Config{}, intelpt.DumpOptions{}); err != nil {
		panic(err)
	}
	// Output:
	// {"kind":"pt_packet","offset":0,"packet":"psb","size":16}
	// {"kind":"pt_packet","offset":16,"packet":"psbend","size":2}
	// {"kind":"pt_packet","offset":18,"packet":"tip.pge","size":7,"ipc":3,"payload":"0x401000","ip":"0x401000"}
	// {"kind":"pt_packet","offset":25,"packet":"tip","size":3,"ipc":1,"payload":"0x2040","ip":"0x402040"}
}

// Read a byte range of a raw trace (FILE:FROM-TO, as libipt's ptdump
// takes it) or a perf.data, and summarise each of its streams.
func ExampleReadFile() {
	b, err := intelpt.ReadFile("testdata/libipt/dump-all-packets.pt:0x0-0x80")
	if err != nil {
		panic(err)
	}
	in, err := intelpt.ParseInput(b)
	if err != nil {
		panic(err)
	}
	for _, s := range in.Streams {
		st := intelpt.ComputeStats(s.Data, in.Config())
		fmt.Println(s.CPU, st.Bytes, st.Packets, st.Overflows, in.Perf.LossSummary() == "")
	}
	// Output: -1 128 28 1 true
}

// List every stream of a perf.data as 'iotap pt dump' does, and what the
// listing lost.
func ExampleDumpInput() {
	b, err := intelpt.ReadFile("testdata/libipt/two-cpus.perf.data")
	if err != nil {
		panic(err)
	}
	in, err := intelpt.ParseInput(b)
	if err != nil {
		panic(err)
	}
	sum, err := intelpt.DumpInput(os.Stdout, in, in.Config(), intelpt.DumpOptions{NoOffset: true},
		intelpt.DumpInputOptions{File: "two-cpus.perf.data", CPU: 3})
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Streams, "stream,", sum.Errors, "errors, lost:", sum.Loss())
	// Output:
	// # cpu 3: 20 bytes
	// psb
	// psbend
	// ovf
	// 1 stream, 0 errors, lost: [cpu 3: 1 overflow(s)]
}

// The statistics of every stream, and the loss they show.
func ExampleInputStats() {
	b, err := intelpt.ReadFile("testdata/libipt/ovf.pt")
	if err != nil {
		panic(err)
	}
	in, err := intelpt.ParseInput(b)
	if err != nil {
		panic(err)
	}
	items := intelpt.InputStats(in, "ovf.pt", in.Config())
	fmt.Println(items[0].Stats.Packets, "packets;", intelpt.StatsLoss(items, in.Perf))
	// Output: 3 packets; [ovf.pt: 1 overflow(s)]
}

// 'iotap pt dump' of a raw trace read as it comes (a pipe, a large file),
// cut inside its last packet: the listing, then what it lacks.
func ExampleDumpStream() {
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: 0x1000})
	b := e.Bytes()
	sum, err := intelpt.DumpStream(context.Background(), os.Stdout, bytes.NewReader(b[:len(b)-2]), intelpt.Config{}, intelpt.DumpOptions{}, intelpt.DumpInputOptions{File: "-"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Loss())
	// Output:
	// 0000000000000000  psb
	// 0000000000000010  psbend
	// [trace ends inside a packet (last 6 bytes)]
}

// 'iotap pt capture -o DIR --cpu 0-1 --mtc --duration 2s' behind its
// flags: the options of Record, checked.
func ExampleCaptureArgs() {
	mtc := true
	a := intelpt.CaptureArgs{Dir: "out", CPUs: "0-1", Duration: 2 * time.Second}
	a.Record.Trace.Options.MTC = &mtc
	o, err := a.Options()
	fmt.Println(o.Trace.Mode, o.Trace.CPUs, *o.Trace.Options.MTC, o.Duration, err)
	a.Record.Trace.PID = 42
	_, err = a.Options()
	fmt.Println(err)
	// Output:
	// per-cpu [0 1] true 2s <nil>
	// give one of --cpu, --pid or -- COMMAND
}

// 'iotap pt dump --time --tcal': one view of the timing at a time.
func ExampleDumpOptions_Check() {
	o := intelpt.DumpOptions{Time: true, TCal: true}
	fmt.Println(o.Check())
	// Output: specify either --time or --tcal
}

// List a raw trace file as 'iotap pt dump --workers 4' does: a trace of
// at least ParallelStatsMin bytes is cut at PSBs into segments listed on
// 4 goroutines and written in order; the listing and the result are
// DumpReader's (a small trace, as this one, is listed in one pass).
func ExampleDumpFile() {
	f, err := os.Open("testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		panic(err)
	}
	res, err := intelpt.DumpFile(os.Stdout, f, fi.Size(), intelpt.Config{}, intelpt.DumpOptions{}, 4)
	if err != nil {
		panic(err) // a write error
	}
	fmt.Printf("%d packets, loss %q, truncated %v\n", res.Packets, res.Loss(), res.Truncated)
	// Output:
	// 0000000000000000  psb
	// 0000000000000010  fup        3: 0000000000100000
	// 0000000000000017  mode.exec  cs.l
	// 0000000000000019  psbend
	// 000000000000001b  tnt.8      !!
	// 000000000000001c  fup        1: ????????????0009
	// 000000000000001f  tip.pgd    0: ????????????????
	// 7 packets, loss "", truncated false
}

// Summarise a mapped range of a raw trace, read again from its file (as
// pt flow does after its listing, to say what the listing lacks): the
// first 29 bytes of a trace end inside its FUP packet at 0x1c.
func ExampleMappedTrace_Stats() {
	m, err := intelpt.MapFileRange("testdata/libipt/call_direct-ret_compressed.pt", 0, 29)
	if err != nil {
		panic(err)
	}
	defer m.Close()
	st, err := m.Stats(intelpt.Config{})
	if err != nil {
		panic(err) // the file was cut shorter while mapped
	}
	fmt.Printf("%d bytes, %d packets, truncated %v at %#x\n", st.Bytes, st.Packets, st.Truncated, st.TruncatedAt)
	fmt.Println(m.FlowLoss(intelpt.Config{}))
	// Output:
	// 29 bytes, 5 packets, truncated true at 0x1c
	// [trace ends inside a packet at offset 0x1c (last 1 bytes)]
}

// Find where a trace cut inside a packet ends, from where a decoder
// stopped (here the first packet after the PSB, at 0x10) or from its
// first PSB (-1): the first 29 bytes of this trace end inside its FUP at
// 0x1c; all 32 end at a packet boundary.
func ExampleTruncatedFrom() {
	trace, err := os.ReadFile("testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%#x %#x %d\n", intelpt.TruncatedFrom(trace[:29], 0x10, intelpt.Config{}), intelpt.TruncatedFrom(trace[:29], -1, intelpt.Config{}), intelpt.TruncatedFrom(trace, -1, intelpt.Config{}))
	// Output: 0x1c 0x1c -1
}
