//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/outfile"
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
	var child *exec.Cmd
	var release *os.File
	switch {
	case f.pid != 0:
		cfg.Mode, cfg.PID = intelpt.PerThread, f.pid
	case len(args) > 0:
		// The child waits on a pipe so the event exists before it execs
		// COMMAND; tracing starts at that exec (enable_on_exec).
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		child = exec.Command("/bin/sh", append([]string{"-c", `read _ <&3; exec 3<&-; exec "$@"`, "sh"}, args...)...)
		child.Stdin, child.Stdout, child.Stderr = os.Stdin, e.stdout, e.stderr
		child.ExtraFiles = []*os.File{r}
		if err := child.Start(); err != nil {
			r.Close()
			w.Close()
			return fmt.Errorf("pt capture: starting %s: %w", args[0], err)
		}
		r.Close()
		release = w
		cfg.Mode, cfg.PID, cfg.EnableOnExec = intelpt.PerThread, child.Process.Pid, true
	}
	tr, err := intelpt.NewTrace(cfg)
	if err != nil {
		if child != nil {
			child.Process.Kill()
			child.Wait()
		}
		return fmt.Errorf("pt capture: %w", err)
	}
	defer tr.Free()
	if err := os.MkdirAll(f.out, 0o700); err != nil {
		return err
	}
	type sink struct {
		pt    *os.File
		bytes int64
		info  intelpt.BufferInfo
	}
	bufs := tr.Buffers()
	sinks := make([]sink, len(bufs))
	for i, b := range bufs {
		name := intelpt.BufferFileName(b.CPU)
		of, err := outfile.Create(filepath.Join(f.out, name+".pt"), outfile.Options{Mode: outfile.InPlace})
		if err != nil {
			return err
		}
		fh := of.OS() // kept under its name whatever happens (a killed capture reads back)
		defer fh.Close()
		sinks[i].pt = fh
	}
	var scratch []byte
	drain := func(final bool) error {
		for i, b := range bufs {
			if f.circular && !final {
				continue
			}
			var info intelpt.BufferInfo
			var err error
			scratch, info, err = b.Drain(scratch[:0])
			if err != nil {
				return err
			}
			if _, err := sinks[i].pt.Write(scratch); err != nil {
				return err
			}
			sinks[i].bytes += int64(len(scratch))
			sinks[i].info = info
			if _, err := b.DrainSideband(); err != nil {
				return err
			}
		}
		return nil
	}
	start := time.Now()
	if err := tr.Start(); err != nil {
		return fmt.Errorf("pt capture: %w", err)
	}
	var done <-chan error
	if child != nil {
		release.Write([]byte("go\n"))
		release.Close()
		ch := make(chan error, 1)
		go func() { ch <- child.Wait() }()
		done = ch
	}
	var timeout <-chan time.Time
	if f.duration > 0 {
		timeout = time.After(f.duration)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-e.ctx.Done():
			break loop
		case <-timeout:
			break loop
		case <-done:
			break loop
		case <-tick.C:
			if err := drain(false); err != nil {
				return fmt.Errorf("pt capture: %w", err)
			}
		}
	}
	if err := tr.Stop(); err != nil {
		return err
	}
	if err := drain(true); err != nil {
		return fmt.Errorf("pt capture: %w", err)
	}
	words, dcfg := tr.Config()
	sc := intelpt.CaptureInfo{Tool: "iotap", Mode: cfg.Mode.String(), CPUs: cfg.CPUs, PID: cfg.PID, Command: args,
		Chunks: cfg.Chunks, Order: cfg.Order, Circular: cfg.Circular, PMUType: tr.PMU().Type, Config: words,
		MTCFreq: dcfg.MTCFreq, SampleType: tr.SampleType(), Filters: cfg.AddrFilters, Start: start, End: time.Now()}
	ti := intelpt.TimingInfo()
	sc.CPUID15EAX, sc.CPUID15EBX, sc.NomFreq = ti.CPUID15EAX, ti.CPUID15EBX, ti.NomFreq
	if len(bufs) > 0 {
		sc.TSC = bufs[0].TSC()
	}
	var lost []string
	for i, b := range bufs {
		name := intelpt.BufferFileName(b.CPU)
		if err := outfile.WriteFile(filepath.Join(f.out, name+".sideband"), b.Sideband(), outfile.Options{}); err != nil {
			return err
		}
		sb, _ := b.DrainSideband()
		sc.Buffers = append(sc.Buffers, intelpt.CaptureBuffer{CPU: b.CPU, File: name + ".pt", Sideband: name + ".sideband",
			Bytes: sinks[i].bytes, Info: sinks[i].info, SB: sb})
		if sb.Lossy() {
			lost = append(lost, fmt.Sprintf("%s: %d truncated, %d partial, %d collision AUX records, %d lost records",
				name, sb.Truncated, sb.Partial, sb.Collision, sb.Lost))
		}
		fmt.Fprintf(e.stderr, "%s: %d bytes of trace\n", name, sinks[i].bytes)
	}
	sc.Lost = len(lost) > 0
	if err := intelpt.WriteCaptureInfo(f.out, &sc); err != nil {
		return err
	}
	// The files the traced code came from, with their build-ids (and
	// copies with --copy-binaries): what decoding elsewhere needs.
	sideband := &intelpt.Sideband{}
	for _, b := range bufs {
		sideband.Merge(intelpt.RawSideband(b.Sideband(), tr.SampleType(), true))
	}
	files := intelpt.MappedFiles(sideband)
	if f.copyBinaries {
		intelpt.CopyBinaries(f.out, files)
	}
	if err := intelpt.WriteMappedFiles(f.out, files); err != nil {
		return err
	}
	for _, mf := range files {
		if mf.Error != "" {
			fmt.Fprintf(e.stderr, "pt capture: %s: %s\n", mf.Path, mf.Error)
		}
	}
	if len(lost) > 0 && !f.allowLoss {
		return dataLostError("pt capture: trace lost: %v (bigger buffers: --chunks/--order; --allow-loss to accept)", lost)
	}
	return nil
}
