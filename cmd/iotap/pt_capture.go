package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iotap/iotap/intelpt"
)

type ptCaptureFlags struct {
	args      intelpt.CaptureArgs
	allowLoss lossFlag
}

func newPTCaptureCmd(e *env) *cobra.Command {
	var f ptCaptureFlags
	c := &cobra.Command{
		Use:   "capture [flags] -o DIR [--cpu LIST | --pid PID | -- COMMAND [ARGS...]]",
		Short: "Record Intel PT per CPU or per thread with perf_event_open (intel_pt PMU)",
		Long: `Record Intel Processor Trace with the kernel's intel_pt PMU: one perf event per
CPU (default: all online CPUs, or --cpu LIST) or one for a thread (--pid, or
a COMMAND started and traced from its exec). Each buffer is an AUX area of
--chunks chunks of 2^--order pages: stop-on-full (default; drained while
tracing, the CPU pauses tracing if iotap falls behind and perf reports the
gap) or --circular (snapshot: keeps the most recent data, written at the end).

DIR receives, with mode 0600: cpuN.pt (raw PT, 'iotap pt dump' reads it),
cpuN.sideband (perf records: mmap2, comm, itrace_start, context switches,
aux; needed later for instruction flow) and capture.json (configuration,
PMU type, config words, MTC frequency, per-buffer info, sideband counts,
loss). Tracing stops after --duration, when COMMAND exits, or on Ctrl-C.

Exit status 3 when the kernel reported lost trace (AUX truncated, partial or
collision flags, lost records), unless --allow-loss. Needs an Intel CPU with
PT and root or CAP_PERFMON.`,
		Example: `  iotap pt capture -o out --duration 1s
  iotap pt capture -o out --cpu 0-3 --mtc --mtc-period 3 --cyc
  iotap pt capture -o out --user -- ./myprog arg`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPTCapture(e, cmd, &f, args)
		},
	}
	f.flags(c.Flags())
	return c
}

// flags defines the flags of pt capture, which fill f.args.
func (f *ptCaptureFlags) flags(fl *pflag.FlagSet) {
	t, o := &f.args.Record.Trace, &f.args.Record.Trace.Options
	fl.StringVarP(&f.args.Dir, "output", "o", "", "output `DIR`")
	fl.StringVar(&f.args.CPUs, "cpu", "", "trace the CPUs in `LIST` (e.g. 0-3,6)")
	fl.IntVar(&t.PID, "pid", 0, "trace the thread `PID` (per-thread mode)")
	fl.DurationVar(&f.args.Duration, "duration", 0, "stop after this long (0: until Ctrl-C or COMMAND exits)")
	fl.IntVar(&t.Chunks, "chunks", 16, "chunks per buffer")
	fl.UintVar(&t.Order, "order", 4, "log2 of the pages per chunk")
	fl.BoolVar(&t.Circular, "circular", false, "circular (snapshot) buffers instead of stop-on-full")
	fl.BoolVar(&t.User, "user", false, "trace user mode only")
	fl.BoolVar(&t.Kernel, "kernel", false, "trace kernel mode only")
	f.allowLoss.add(fl, "exit 0 even when trace data was lost")
	fl.BoolVar(&f.args.Record.CopyBinaries, "copy-binaries", false, "copy the traced programs' files into DIR/binaries (by build-id) so DIR decodes on another machine")
	o.TSC, o.Branch = new(bool), new(bool)
	fl.BoolVar(o.TSC, "tsc", true, "TSC packets")
	fl.BoolVar(o.Branch, "branch", true, "branch tracing (control flow packets)")
	optBool(fl, &o.MTC, "mtc", "MTC timing packets")
	optBool(fl, &o.CYC, "cyc", "CYC cycle-accurate packets")
	optBool(fl, &o.NoRetComp, "noretcomp", "disable return compression")
	optBool(fl, &o.PTW, "ptw", "PTWRITE packets")
	optBool(fl, &o.PwrEvt, "pwr-evt", "power event packets")
	optUint(fl, &o.PSBPeriod, "psb-period", "PSB period (2^(n+11) bytes)")
	optUint(fl, &o.MTCPeriod, "mtc-period", "MTC period (2^n crystal ticks)")
	optUint(fl, &o.CycThresh, "cyc-thresh", "CYC threshold (2^(n-1) cycles)")
	fl.StringArrayVar(&t.AddrFilters, "filter", nil, "perf address filter (repeatable), e.g. 'filter main @ /bin/prog'")
}

func runPTCapture(e *env, cmd *cobra.Command, f *ptCaptureFlags, args []string) error {
	f.args.Command = args
	rec, err := f.args.Options()
	if err != nil {
		return usageErrorf("pt capture: %v", err)
	}
	if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
		return usageErrorf("pt capture: put the command after --")
	}
	rec.Stdin, rec.Stdout, rec.Stderr = os.Stdin, e.stdout, e.stderr
	// Record probes first: on a machine without PT nothing is created.
	res, err := intelpt.Record(e.ctx, f.args.Dir, rec)
	if err != nil {
		return fmt.Errorf("pt capture: %w", err)
	}
	res.WriteSummary(e.stderr, "pt capture: ")
	if len(res.Lost) > 0 {
		return f.allowLoss.check(e, "pt capture: trace lost: ", []string{fmt.Sprint(res.Lost)}, "bigger buffers: --chunks/--order; --allow-loss to accept")
	}
	return nil
}
