//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/tracefs"
)

type ptCaptureFlags struct {
	cpus, out                             string
	pid                                   int
	duration                              time.Duration
	chunks                                int
	order                                 uint
	circular, user, kernel, allowLoss     bool
	copyBinaries                          bool
	tsc, branch, mtc, cyc, noretcomp, ptw bool
	pwrEvt                                bool
	psbPeriod, mtcPeriod, cycThresh       uint64
	filters                               []string
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
	fl := c.Flags()
	fl.StringVarP(&f.out, "output", "o", "", "output `DIR`")
	fl.StringVar(&f.cpus, "cpu", "", "trace the CPUs in `LIST` (e.g. 0-3,6)")
	fl.IntVar(&f.pid, "pid", 0, "trace the thread `PID` (per-thread mode)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (0: until Ctrl-C or COMMAND exits)")
	fl.IntVar(&f.chunks, "chunks", 16, "chunks per buffer")
	fl.UintVar(&f.order, "order", 4, "log2 of the pages per chunk")
	fl.BoolVar(&f.circular, "circular", false, "circular (snapshot) buffers instead of stop-on-full")
	fl.BoolVar(&f.user, "user", false, "trace user mode only")
	fl.BoolVar(&f.kernel, "kernel", false, "trace kernel mode only")
	fl.BoolVar(&f.allowLoss, "allow-loss", false, "exit 0 even when trace data was lost")
	fl.BoolVar(&f.copyBinaries, "copy-binaries", false, "copy the traced programs' files into DIR/binaries (by build-id) so DIR decodes on another machine")
	fl.BoolVar(&f.tsc, "tsc", true, "TSC packets")
	fl.BoolVar(&f.branch, "branch", true, "branch tracing (control flow packets)")
	fl.BoolVar(&f.mtc, "mtc", false, "MTC timing packets")
	fl.BoolVar(&f.cyc, "cyc", false, "CYC cycle-accurate packets")
	fl.BoolVar(&f.noretcomp, "noretcomp", false, "disable return compression")
	fl.BoolVar(&f.ptw, "ptw", false, "PTWRITE packets")
	fl.BoolVar(&f.pwrEvt, "pwr-evt", false, "power event packets")
	fl.Uint64Var(&f.psbPeriod, "psb-period", 0, "PSB period (2^(n+11) bytes)")
	fl.Uint64Var(&f.mtcPeriod, "mtc-period", 0, "MTC period (2^n crystal ticks)")
	fl.Uint64Var(&f.cycThresh, "cyc-thresh", 0, "CYC threshold (2^(n-1) cycles)")
	fl.StringArrayVar(&f.filters, "filter", nil, "perf address filter (repeatable), e.g. 'filter main @ /bin/prog'")
	return c
}

func (f *ptCaptureFlags) options(cmd *cobra.Command) intelpt.Options {
	var o intelpt.Options
	ch := cmd.Flags().Changed
	o.TSC, o.Branch = &f.tsc, &f.branch
	b := func(name string, v *bool) *bool {
		if ch(name) {
			return v
		}
		return nil
	}
	n := func(name string, v *uint64) *uint64 {
		if ch(name) {
			return v
		}
		return nil
	}
	o.MTC, o.CYC, o.NoRetComp, o.PTW, o.PwrEvt = b("mtc", &f.mtc), b("cyc", &f.cyc), b("noretcomp", &f.noretcomp), b("ptw", &f.ptw), b("pwr-evt", &f.pwrEvt)
	o.PSBPeriod, o.MTCPeriod, o.CycThresh = n("psb-period", &f.psbPeriod), n("mtc-period", &f.mtcPeriod), n("cyc-thresh", &f.cycThresh)
	return o
}

func runPTCapture(e *env, cmd *cobra.Command, f *ptCaptureFlags, args []string) error {
	if f.out == "" {
		return usageErrorf("pt capture: -o DIR is required")
	}
	modes := 0
	if f.cpus != "" {
		modes++
	}
	if f.pid != 0 {
		modes++
	}
	if len(args) > 0 {
		modes++
	}
	if modes > 1 {
		return usageErrorf("pt capture: give one of --cpu, --pid or -- COMMAND")
	}
	if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
		return usageErrorf("pt capture: put the command after --")
	}
	// Probe first: on a machine without PT nothing is created.
	if _, err := intelpt.Supported(); err != nil {
		return fmt.Errorf("pt capture: %w", err)
	}
	cfg := intelpt.TraceConfig{Chunks: f.chunks, Order: f.order, Circular: f.circular, Options: f.options(cmd),
		User: f.user, Kernel: f.kernel, AddrFilters: f.filters}
	if f.cpus != "" {
		cpus, err := tracefs.ParseCPUList(f.cpus)
		if err != nil {
			return usageErrorf("pt capture: --cpu: %v", err)
		}
		cfg.CPUs = cpus
	}
	ropt := intelpt.RecordOptions{Trace: cfg, Command: args, CopyBinaries: f.copyBinaries}
	if f.pid != 0 {
		ropt.Trace.Mode, ropt.Trace.PID = intelpt.PerThread, f.pid
	}
	// A COMMAND is started held before its exec; tracing starts at the
	// exec (enable_on_exec) and ends when it exits.
	ropt.Run, ropt.Stdin, ropt.Stdout, ropt.Stderr = len(args) > 0, os.Stdin, e.stdout, e.stderr
	ctx := e.ctx
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	res, err := intelpt.Record(ctx, f.out, ropt)
	if err != nil {
		return fmt.Errorf("pt capture: %w", err)
	}
	res.WriteSummary(e.stderr, "pt capture: ")
	if len(res.Lost) > 0 && !f.allowLoss {
		return dataLostError("pt capture: trace lost: %v (bigger buffers: --chunks/--order; --allow-loss to accept)", res.Lost)
	}
	return nil
}
