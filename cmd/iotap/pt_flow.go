package main

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
)

// decoderFlag records which of --insn-decoder/--block-decoder came last,
// as ptxed does.
type decoderFlag struct {
	block *bool
	val   bool
}

func (d *decoderFlag) String() string   { return "false" }
func (d *decoderFlag) Type() string     { return "bool" }
func (d *decoderFlag) IsBoolFlag() bool { return true }
func (d *decoderFlag) Set(s string) error {
	if s == "true" {
		*d.block = d.val
	}
	return nil
}

type ptFlowFlags struct {
	job       calls.FlowJob
	timing    ptTiming
	allowLoss lossFlag
	// no effect: --no-inst, --check
	noInst, check bool
}

func newPTFlowCmd(e *env) *cobra.Command {
	f := ptFlowFlags{job: calls.FlowJob{Listing: intelpt.FlowOptions{BlockDecoder: true}}}
	c := &cobra.Command{
		Use:   "flow [flags] --raw FILE:ADDR|--elf FILE [--pt] TRACE",
		Short: "List the executed instructions of a PT trace like libipt's ptxed",
		Long: `Reconstruct the instruction flow of a PT trace over a memory image and list
it in the format of libipt's ptxed --no-inst: one line per instruction
address, events in brackets, errors as [offset, ip: what: message]. The
options are ptxed's (the same command line works); the output is tested
against libipt's ptxed test corpus.

The image is built from --raw FILE[:OFFSET[-END]]:ADDRESS and --elf
FILE[:BASE] (loadable segments), both repeatable; later files win where
they overlap. Without them, the trace may be a perf.data file or an
'iotap pt capture' directory: the image is then the files that its
sideband's mmap records name for the process of the stream (--stream N,
--pid), found as 'pt calls' finds them (--sysroot, --buildid-dir, the
directory's binaries/, the vDSO; --kernel and --kallsyms for kernel code). --block-decoder (the default) decodes block by block with a
per-section cache; --insn-decoder one instruction at a time (same output).
--json prints NDJSON instead (docs/ndjson.md): an "input" record, then
pt_insn, pt_block (--block:show-blocks), pt_event, pt_flow_error,
pt_trace_end and pt_flow_stats (--stat) records; those of a perf.data or
capture directory name their stream ("stream", "cpu").

Exit status 3 when decoding errors skipped trace bytes (the errors are in
the listing, as ptxed lists them; stderr counts them with the first one's
offset and the bytes skipped), the CPU dropped trace data (OVF packets,
counted) or the trace ends inside a packet (stderr names the file and the
packet's offset; the listing ends before it, as ptxed's), unless
--allow-loss.`,
		Example: `  iotap pt flow --raw code.bin:0x400000 --pt trace.pt
  iotap pt flow perf.data
  iotap pt flow --stream 1 --pid 4242 capture-dir
  iotap pt flow --insn-decoder --elf ./a.out --event:ip --event:time --pt trace.pt`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				if f.job.Trace != "" {
					return usageErrorf("pt flow: give the trace either as argument or with --pt")
				}
				f.job.Trace = args[0]
			}
			return runPTFlow(e, &f)
		},
	}
	fl := c.Flags()
	j := &f.job
	o := &j.Listing
	fl.Var(&decoderFlag{&o.BlockDecoder, false}, "insn-decoder", "use the instruction flow decoder")
	fl.Var(&decoderFlag{&o.BlockDecoder, true}, "block-decoder", "use the block decoder (default)")
	for _, n := range []string{"insn-decoder", "block-decoder"} {
		fl.Lookup(n).NoOptDefVal = "true"
	}
	fl.BoolVar(&o.ShowBlocks, "block:show-blocks", false, "show blocks in the output")
	fl.BoolVar(&j.Flags.EndOnCall, "block:end-on-call", false, "end a block after a call")
	fl.BoolVar(&j.Flags.EndOnJump, "block:end-on-jump", false, "end a block after a jump")
	fl.BoolVar(&j.Flags.KeepTcalOnOVF, "block:keep-tcal-on-ovf", false, "block decoder: keep the timing calibration across overflows")
	fl.BoolVar(&j.InsnKeepTcalOnOVF, "insn:keep-tcal-on-ovf", false, "instruction decoder: keep the timing calibration across overflows")
	fl.StringArrayVar(&j.Raw, "raw", nil, "load raw `file[:from[-to]]:address` into the image")
	fl.StringArrayVar(&j.ELF, "elf", nil, "load the loadable segments of ELF `file[:base]` into the image")
	fl.StringVar(&j.Trace, "pt", "", "the trace `file[:from[-to]]`")
	fl.StringVar(&j.CPU, "cpu", "", "decode for CPU `f/m[/s]` (errata) or none")
	fl.BoolVar(&o.EventIP, "event:ip", false, "print the IP of events")
	fl.BoolVar(&o.EventTime, "event:time", false, "print the TSC of events")
	fl.BoolVar(&j.Flags.TickEvents, "event:tick", false, "report tick events (the time changed at a branch)")
	fl.BoolVar(&j.Flags.IFlagsEvents, "event:iflags", false, "report iflags events")
	fl.BoolVar(&o.ResyncOnError, "resync-on-error", false, "resync at the next event or PSB after an error")
	for n := 0; n < 4; n++ {
		fl.Uint64Var(&j.FilterCfg[n], fmt.Sprintf("filter:addr%d_cfg", n), 0, fmt.Sprintf("IA32_RTIT_CTL.ADDR%d_CFG", n))
		fl.Uint64Var(&j.Filter.A[n], fmt.Sprintf("filter:addr%d_a", n), 0, fmt.Sprintf("IA32_RTIT_ADDR%d_A", n))
		fl.Uint64Var(&j.Filter.B[n], fmt.Sprintf("filter:addr%d_b", n), 0, fmt.Sprintf("IA32_RTIT_ADDR%d_B", n))
	}
	fl.BoolVar(&o.Stat, "stat", false, "print statistics (even when quiet)")
	fl.BoolVar(&o.StatInsn, "stat:insn", false, "count instructions")
	fl.BoolVar(&o.StatBlocks, "stat:blocks", false, "count blocks")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print only errors and statistics")
	fl.BoolVar(&o.Time, "time", false, "print the current time on each instruction")
	fl.BoolVar(&o.Offset, "offset", false, "print the trace offset on each line")
	fl.BoolVar(&f.noInst, "no-inst", false, "print addresses only (always the case: there is no disassembler)")
	fl.BoolVar(&f.check, "check", false, "accepted for ptxed compatibility (no effect)")
	f.allowLoss.add(fl, "exit 0 even when decoding errors skipped trace bytes or the trace overflowed")
	f.timing.flags(fl, 1)
	fl.BoolVar(&o.JSON, "json", false, "NDJSON: an input record, then a record per instruction, block, event and error")
	fl.IntVar(&j.Input.Stream, "stream", -1, "perf.data or capture directory: list PT stream `N` (as pt dump numbers them; default: the only one)")
	fl.Int32Var(&j.Input.PID, "pid", 0, "perf.data or capture directory: the process `PID` whose mappings make the image (a per-CPU stream of several processes)")
	ptFileFlags(fl, "perf.data or capture directory: ", &j.Input.Sysroot, &j.Input.BuildIDDirs, &j.Input.Kernel, &j.Input.Kallsyms)
	return c
}

// ptFlowFlag is the flag of the calls.FlowJob field that ae names.
func ptFlowFlag(ae *calls.FlowArgError) string {
	switch ae.Field {
	case "Trace":
		return "pt"
	case "CPU":
		return "cpu"
	case "FilterCfg":
		return fmt.Sprintf("filter:addr%d_cfg", ae.Index)
	}
	return ae.Field
}

func runPTFlow(e *env, f *ptFlowFlags) error {
	if f.job.Trace == "" {
		return usageErrorf("pt flow: no trace (--pt FILE)")
	}
	// The decoders do not allocate per instruction: the heap is the trace,
	// the image and its decode caches, all live until the end. A collection
	// would only burn CPU, so collect late (from before the trace is read).
	defer debug.SetGCPercent(debug.SetGCPercent(1000))
	f.job.Timing = f.timing.Timing
	t, err := f.job.Open()
	var se *calls.StreamsError
	var ae *calls.FlowArgError
	switch {
	case errors.Is(err, calls.ErrStdin):
		return usageErrorf("pt flow: a perf.data or capture directory is read by its name, not from standard input (a raw trace on standard input needs its image: --raw or --elf)")
	case errors.Is(err, calls.ErrNoSideband):
		return usageErrorf("pt flow: no image (--raw or --elf; or give a perf.data or capture directory, whose sideband names the files)")
	case errors.As(err, &se):
		return usageErrorf("pt flow: %s has %d PT streams: choose one with --stream N (pt dump lists them)", f.job.Trace, se.Streams)
	case errors.As(err, &ae):
		return usageErrorf("pt flow: --%s: %v", ptFlowFlag(ae), ae.Err)
	case err != nil:
		return fmt.Errorf("pt flow: %w", err)
	}
	defer t.Close()
	for _, u := range t.Unfound {
		fmt.Fprintf(e.stderr, "iotap: pt flow: mapping %s not loaded: %v\n", u.Mapping.String(), u.Err)
	}
	var progress func(int64)
	if m := e.meter("iotap: pt flow", t.Size(), !f.job.Listing.Quiet); m != nil {
		progress = m.Update
	}
	if _, err := t.Run(e.stdout, progress); err != nil {
		return err
	}
	return f.allowLoss.check(e, "pt flow: "+f.job.Trace+": ", t.Loss(), "--allow-loss to accept")
}
