package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
)

type ptDumpFlags struct {
	opt       intelpt.DumpOptions
	cpu       string
	timing    ptTiming
	json      bool
	allowLoss lossFlag
	stream    int
	workers   int
	count     uint64 // -c
}

func newPTDumpCmd(e *env) *cobra.Command {
	var f ptDumpFlags
	c := &cobra.Command{
		Use:   "dump [flags] FILE",
		Short: "List PT packets like libipt's ptdump",
		Long: `List the packets of a PT trace in the format of libipt's ptdump: offset,
packet name, payload and, with --lastip/--exec-mode/--time/--tcal, tracking
information. The same options give the same text (iotap is tested against
libipt's 230-test corpus). Decoding starts at the first PSB (--no-sync: at
offset 0); after a bad packet the error is listed and decoding resumes at
the next PSB.

Timing (--time, --tcal) estimates the TSC at every timing packet from TSC,
TMA, MTC and CYC. MTC and TMA need --mtc-freq (IA32_RTIT_CTL.MTCFreq) and
--cpuid-0x15.eax/ebx (the TSC:crystal ratio); CYC needs a calibration from
--nom-freq (MSR_PLATFORM_INFO[15:8]) or from MTC/TSC. For perf.data input
these come from perf's AUXTRACE_INFO record, and for files written by
'iotap pt capture' from the capture.json next to them, unless given.

perf.data files hold one stream per CPU: each is listed after a
"# cpu N" line (--stream N selects one). --json prints NDJSON
(docs/ndjson.md): an "input" record, then one pt_packet record per packet
with the IP reconstructed (last IP reset at each PSB) and, on TMA/MTC/CYC
packets, the estimated TSC ("est_tsc", null until a TSC packet was seen);
the records of a perf.data name their stream ("stream", "cpu").

FILE:FROM[-TO] dumps a byte range of FILE, as ptdump does (offsets are then
relative to FROM).

Exit status 3 when decoding errors skipped bytes (the errors are in the
listing, as ptdump lists them; stderr counts them with the first one's
offset and the bytes skipped), the CPU dropped trace data (OVF packets,
counted), the trace ends inside a packet or perf recorded a loss, unless
--allow-loss.`,
		Example: `  iotap pt dump trace.pt
  iotap pt dump --lastip --no-pad perf.data
  iotap pt dump --time --time-delta --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 trace.pt`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			done := e.limitStdout(f.count)
			return done(runPTDump(e, &f, args[0]))
		},
	}
	fl := c.Flags()
	o := &f.opt
	fl.BoolVar(&o.LastIP, "lastip", false, "show the last IP on packets with IP payloads")
	fl.BoolVar(&o.ExecMode, "exec-mode", false, "show the execution mode on mode.exec")
	fl.BoolVar(&o.NoPad, "no-pad", false, "don't show PAD packets")
	fl.BoolVar(&o.NoOffset, "no-offset", false, "don't show the offset column")
	fl.BoolVar(&o.Raw, "raw", false, "show the raw packet bytes")
	fl.BoolVar(&o.NoSync, "no-sync", false, "start at offset 0 instead of the first PSB")
	fl.BoolVar(&o.NoTiming, "no-timing", false, "don't show timing packets")
	fl.BoolVar(&o.NoCyc, "no-cyc", false, "don't show CYC packets and ignore them for time")
	fl.BoolVar(&o.Quiet, "quiet", false, "print only errors")
	fl.BoolVar(&o.Time, "time", false, "show the estimated TSC on timing packets")
	fl.BoolVar(&o.TCal, "tcal", false, "show the time calibration")
	fl.BoolVar(&o.TimeDelta, "time-delta", false, "show time and calibration as deltas")
	fl.BoolVar(&o.NoTCal, "no-tcal", false, "skip time calibration (CYC then gives no time)")
	fl.BoolVar(&o.NoWallClock, "no-wall-clock", false, "print relative time when no TSC was seen")
	fl.BoolVar(&o.KeepTCalOnOvf, "keep-tcal-on-ovf", false, "keep the time calibration across overflows")
	fl.StringVar(&f.cpu, "cpu", "", "decode for CPU `f/m[/s]` (family/model/stepping: errata) or none")
	f.timing.flags(fl, 2)
	fl.BoolVar(&o.Blocks, "blocks", false, "decode BBP/BIP/BEP block packets (ptdump reports them as unknown opcodes)")
	fl.BoolVar(&f.json, "json", false, "one JSON object per packet (NDJSON)")
	f.allowLoss.add(fl, "exit 0 even when data was lost")
	fl.IntVar(&f.stream, "stream", -1, "perf.data: dump only the stream of CPU `n`")
	workersVar(fl, &f.workers, "decoding goroutines, each on a segment between PSBs, for the text of a raw trace without --lastip/--time/--tcal/--no-sync (0: all cores, at most 4, for a raw trace of 16 MiB or more on more than 2 cores, else 1)")
	fl.Uint64VarP(&f.count, "count", "c", 0, "stop after `N` lines of the listing (packets and errors; records with --json, after the input record), like tshark -c (0: all)")
	return c
}

func runPTDump(e *env, f *ptDumpFlags, path string) error {
	if err := f.opt.Check(); err != nil {
		return usageErrorf("pt dump: %v", err)
	}
	var err error
	if f.opt.CPU, err = ptCPU("pt dump", f.cpu); err != nil {
		return err
	}
	// Raw PT files are listed as they are read, in constant memory.
	in, err := ptOpen(path, f.stream < 0)
	if err != nil {
		return err
	}
	defer in.Close()
	cfg, o := f.timing.Apply(in.Config()), intelpt.DumpInputOptions{File: path, JSON: f.json, CPU: f.stream, Workers: f.workers}
	sum, err := in.Dump(e.ctx, e.stdout, cfg, f.opt, o, func(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt) {
		m := e.meter("iotap: pt dump", in.Size(), true)
		return m.Reader(r), m.ReaderAt(ra)
	})
	if err != nil {
		return fmt.Errorf("pt dump: %w", err)
	} else if sum.Streams == 0 {
		return usageErrorf("pt dump: no stream for cpu %d in %s", f.stream, path)
	}
	return f.allowLoss.check(e, "pt dump: ", sum.Loss(), "--allow-loss to accept")
}
