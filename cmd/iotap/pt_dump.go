package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
)

type ptDumpFlags struct {
	opt                intelpt.DumpOptions
	cpu                string
	mtcFreq, nomFreq   uint8
	cpuidEAX, cpuidEBX uint32
	json, allowLoss    bool
	stream             int
	count              uint64 // -c
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

Exit status 3 when the trace ends inside a packet or perf recorded a loss,
unless --allow-loss.`,
		Example: `  iotap pt dump trace.pt
  iotap pt dump --lastip --no-pad perf.data
  iotap pt dump --time --time-delta --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 trace.pt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			done := e.limitStdout(f.count)
			return done(runPTDump(e, cmd, &f, args[0]))
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
	fl.Uint8Var(&f.mtcFreq, "mtc-freq", 0, "MTC frequency `n` (IA32_RTIT_CTL[17:14])")
	fl.Uint8Var(&f.nomFreq, "nom-freq", 0, "nominal core:bus ratio `n` (MSR_PLATFORM_INFO[15:8])")
	fl.Uint32Var(&f.cpuidEAX, "cpuid-0x15.eax", 0, "CPUID[0x15].EAX (crystal clock ratio denominator)")
	fl.Uint32Var(&f.cpuidEBX, "cpuid-0x15.ebx", 0, "CPUID[0x15].EBX (crystal clock ratio numerator)")
	fl.BoolVar(&o.Blocks, "blocks", false, "decode BBP/BIP/BEP block packets (ptdump reports them as unknown opcodes)")
	fl.BoolVar(&f.json, "json", false, "one JSON object per packet (NDJSON)")
	fl.BoolVar(&f.allowLoss, "allow-loss", false, "exit 0 even when data was lost")
	fl.IntVar(&f.stream, "stream", -1, "perf.data: dump only the stream of CPU `n`")
	fl.Uint64VarP(&f.count, "count", "c", 0, "stop after `N` lines of the listing (packets and errors; records with --json, after the input record), like tshark -c (0: all)")
	return c
}

// ptConfig builds the decoder configuration from flags, starting from what
// perf.data recorded.
func ptConfig(cmd *cobra.Command, base intelpt.Config, mtc, nom uint8, eax, ebx uint32) intelpt.Config {
	c := base
	fl := cmd.Flags()
	if fl.Changed("mtc-freq") {
		c.MTCFreq = mtc
	}
	if fl.Changed("nom-freq") {
		c.NomFreq = nom
	}
	if fl.Changed("cpuid-0x15.eax") {
		c.CPUID15EAX = eax
	}
	if fl.Changed("cpuid-0x15.ebx") {
		c.CPUID15EBX = ebx
	}
	return c
}

func runPTDump(e *env, cmd *cobra.Command, f *ptDumpFlags, path string) error {
	if f.opt.Time && f.opt.TCal {
		return usageErrorf("pt dump: specify either --time or --tcal")
	}
	if f.cpu != "" && f.cpu != "none" {
		cpu, err := intelpt.ParseCPU(f.cpu)
		if err != nil {
			return usageErrorf("pt dump: --cpu: %v", err)
		}
		f.opt.CPU = &cpu
	}
	if f.stream < 0 {
		// Raw PT files are listed as they are read, in constant memory.
		if done, err := ptDumpStream(e, cmd, f, path); done {
			return err
		}
	}
	t, err := ptLoad(e, path)
	if err != nil {
		return err
	}
	ins, tr := t.Streams, t.Perf
	base, _ := intelpt.ConfigOf(path)
	if tr != nil {
		base = tr.Config
	}
	cfg := ptConfig(cmd, base, f.mtcFreq, f.nomFreq, f.cpuidEAX, f.cpuidEBX)
	var truncated []string
	var errs int64
	found := false
	if f.json {
		format := intelpt.FormatRaw
		if tr != nil {
			format = intelpt.FormatPerfData
		}
		if _, err := e.stdout.Write(intelpt.AppendInputNDJSON(nil, path, format, "")); err != nil {
			return err
		}
	}
	for _, in := range ins {
		if f.stream >= 0 && in.CPU != int32(f.stream) {
			continue
		}
		found = true
		if f.json {
			f.opt.StreamName, f.opt.StreamCPU = in.Name, in.CPU
			r, err := intelpt.DumpJSON(e.stdout, in.Data, cfg, f.opt)
			if err != nil {
				return err
			}
			errs += r.Errors
			if r.Truncated {
				truncated = append(truncated, fmt.Sprintf("%s: last %d bytes", ptName(in, path), r.SkippedTail))
			}
			continue
		}
		if in.Name != "" {
			fmt.Fprintf(e.stdout, "# %s: %d bytes\n", in.Name, len(in.Data))
		}
		r, err := intelpt.Dump(e.stdout, in.Data, cfg, f.opt)
		if err != nil {
			return err
		}
		errs += r.Errors
		if r.Truncated {
			truncated = append(truncated, fmt.Sprintf("%s: last %d bytes", ptName(in, path), r.SkippedTail))
		}
	}
	if !found {
		return usageErrorf("pt dump: no stream for cpu %d in %s", f.stream, path)
	}
	if errs > 0 {
		fmt.Fprintf(e.stderr, "iotap: pt dump: %d decoding error(s), resynchronised at the next PSB (see the listing)\n", errs)
	}
	var lost []string
	if len(truncated) > 0 {
		lost = append(lost, fmt.Sprintf("trace ends inside a packet (%v)", truncated))
	}
	if l := tr.LossSummary(); l != "" {
		lost = append(lost, l)
	}
	if len(lost) > 0 {
		if f.allowLoss {
			fmt.Fprintf(e.stderr, "iotap: pt dump: warning: %v\n", lost)
			return nil
		}
		return dataLostError("pt dump: %v (--allow-loss to accept)", lost)
	}
	return nil
}

func ptName(in intelpt.InputStream, path string) string {
	if in.Name == "" {
		return path
	}
	return in.Name
}

// ptDumpStream lists a raw PT file (or stdin) through intelpt.DumpReader.
// It returns done=false, without reading, for perf.data and FILE:RANGE
// arguments.
func ptDumpStream(e *env, cmd *cobra.Command, f *ptDumpFlags, path string) (bool, error) {
	br, closeFn, ok, err := ptRawReader(path)
	if !ok {
		return err != nil, err
	}
	defer closeFn()
	base, _ := intelpt.ConfigOf(path)
	cfg := ptConfig(cmd, base, f.mtcFreq, f.nomFreq, f.cpuidEAX, f.cpuidEBX)
	var res intelpt.DumpResult
	if f.json {
		f.opt.StreamName, f.opt.StreamCPU = "", -1
		if _, err = e.stdout.Write(intelpt.AppendInputNDJSON(nil, path, intelpt.FormatRaw, "")); err == nil {
			res, err = intelpt.DumpJSONReader(e.stdout, e.ptReader("iotap: pt dump", path, br, true), 0, cfg, f.opt)
		}
	} else {
		res, err = intelpt.DumpReader(e.stdout, e.ptReader("iotap: pt dump", path, br, true), 0, cfg, f.opt)
	}
	if err != nil {
		return true, fmt.Errorf("pt dump: %s: %w", path, err)
	}
	if res.Errors > 0 {
		fmt.Fprintf(e.stderr, "iotap: pt dump: %d decoding error(s), resynchronised at the next PSB (see the listing)\n", res.Errors)
	}
	if res.Truncated {
		msg := fmt.Sprintf("pt dump: trace ends inside a packet (last %d bytes)", res.SkippedTail)
		if f.allowLoss {
			fmt.Fprintf(e.stderr, "iotap: %s\n", msg)
			return true, nil
		}
		return true, dataLostError("%s (--allow-loss to accept)", msg)
	}
	return true, nil
}

// ptRawReader opens FILE (or stdin) for streaming when it holds raw PT.
// ok is false, with no error, for perf.data files and paths that do not
// open (FILE:RANGE); ptLoad handles those.
func ptRawReader(path string) (r *bufio.Reader, closeFn func(), ok bool, err error) {
	var src io.Reader
	closeFn = func() {}
	if path == "-" {
		src = os.Stdin
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, nil, false, nil
		}
		src, closeFn = fh, func() { fh.Close() }
	}
	br := bufio.NewReaderSize(src, 1<<20)
	if head, _ := br.Peek(detect.HeadSize); path != "-" {
		if res, err := detect.Head(head, len(head) < detect.HeadSize); err != nil || res.Kind != detect.PT {
			if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
				closeFn()
				return nil, nil, false, fmt.Errorf("pt: %s is a directory (give a trace file)", path)
			} else if serr == nil && !fi.Mode().IsRegular() {
				// A pipe cannot be read again by ptLoad.
				closeFn()
				if err == nil {
					err = &detect.NotTraceError{Want: detect.PT, Found: &res}
				}
				return nil, nil, false, fmt.Errorf("pt: %s: %w", path, err)
			}
			// Not raw PT by its head: ptLoad reads the whole file and
			// says what it is.
			closeFn()
			return nil, nil, false, nil
		}
	}
	if magic, _ := br.Peek(len(intelpt.PerfMagic)); intelpt.IsPerfData(magic) {
		closeFn()
		if path == "-" {
			return nil, nil, false, usageErrorf("pt: perf.data on standard input: give the file name")
		}
		return nil, nil, false, nil
	}
	return br, closeFn, true, nil
}

// ptCtxReader stops reading when the command is cancelled (Ctrl-C).
// ptReader returns r, the raw trace path being streamed, stopping on
// Ctrl-C and counted by a progress meter of the job what (the file's size
// as its total when it is a regular file).
func (e *env) ptReader(what, path string, r io.Reader, busy bool) io.Reader {
	total := int64(-1)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		total = fi.Size()
	}
	return ptCtxReader{e, e.meter(what, total, busy).Reader(r)}
}

// ptSegmentable opens path for intelpt.ComputeStatsFile when it is a
// regular file of at least intelpt.ParallelStatsMin bytes and workers (0:
// more than two cores, as mmio read: on two, the second decoder competes
// with everything else for the other core and costs more CPU than it
// saves wall time, docs/performance.md) asks for more than one decoder.
func ptSegmentable(path string, workers int) (*os.File, int64, bool) {
	if workers == 0 && runtime.GOMAXPROCS(0) > 2 {
		workers = runtime.GOMAXPROCS(0)
	}
	if path == "-" || workers < 2 {
		return nil, 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() >= intelpt.ParallelStatsMin {
		return f, fi.Size(), true
	}
	f.Close()
	return nil, 0, false
}

// ptCtxReaderAt ends reads once the command is interrupted.
type ptCtxReaderAt struct {
	e *env
	r io.ReaderAt
}

func (c ptCtxReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if err := c.e.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(b, off)
}

type ptCtxReader struct {
	e *env
	r io.Reader
}

func (c ptCtxReader) Read(b []byte) (int, error) {
	if err := c.e.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}
