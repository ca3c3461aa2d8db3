package main

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt/calls"
)

type ptCallsFlags struct {
	job       calls.Job
	out       calls.OutputFlags
	allowLoss lossFlag
}

func newPTCallsCmd(e *env) *cobra.Command {
	f := ptCallsFlags{job: calls.Job{MaxDepth: calls.DefaultTreeDepth}}
	c := &cobra.Command{
		Use:   "calls [flags] perf.data|CAPTURE_DIR",
		Short: "Function calls of the traced threads: call tree, NDJSON, collapsed stacks",
		Long: `Rebuild every function call of the traced threads from Intel PT: the
instruction flow (block decoder) over the files that the sideband's mmap
records name, found by path, under --sysroot, or by build-id in
--buildid-dir directories (perf's ~/.debug layout; a capture directory's
own binaries/ first). Calls and returns nest per thread; tail calls (a jump
to another function's entry), returns and jumps that skip frames (longjmp,
exceptions) and gaps (overflow, decode errors, code not found) are shown.

Default output: the call tree with the number of calls and inclusive/self
instructions and time per call path. --json: one object per call (thread,
depth, function, begin, end, kind, end_reason, instructions), callees
before their callers. --folded: collapsed stacks for flamegraph.pl and
speedscope, weighted by self instructions (--folded-time: self time).
The tree and --folded stop at --max-depth frames (default 128): deeper
calls are summed into a "[deeper calls]" frame, so that the output grows
with the distinct stacks, not with the depth of a deep recursion.
--resolution keeps only calls at least that long (in every output:
shorter calls count as their caller's own instructions and time).

Kernel-mode trace decodes with --kernel (a vmlinux, or /proc/kcore) and
gets names from --kallsyms (/proc/kallsyms of the traced machine; it also
gives the KASLR slide) or the vmlinux's symbols. The vDSO is found in the
capture directory, in ~/.debug, or is this machine's when its build-id
matches.

Mappings whose file is not found are listed on stderr; exit status 3 when
trace or sideband was lost or a part of the trace could not be decoded,
unless --allow-loss.`,
		Example: `  iotap pt calls perf.data
  iotap pt calls --folded perf.data > stacks.folded
  iotap pt calls --json --resolution 10us --sysroot /mnt/target capture-dir`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPTCalls(e, &f, args[0]) },
	}
	fl := c.Flags()
	ptFileFlags(fl, "", &f.job.Sysroot, &f.job.BuildIDDirs, &f.job.Kernel, &f.job.Kallsyms)
	fl.BoolVar(&f.out.JSON, "json", false, "one JSON object per call")
	fl.BoolVar(&f.out.Folded, "folded", false, "collapsed stacks (flamegraph.pl, speedscope)")
	fl.BoolVar(&f.out.FoldedTime, "folded-time", false, "weight collapsed stacks by self time instead of instructions")
	fl.DurationVar(&f.job.Resolution, "resolution", 0, "keep only calls at least this long (shorter ones count as their caller's own)")
	fl.IntVar(&f.job.MaxDepth, "max-depth", calls.DefaultTreeDepth, "call tree and --folded: sum the calls deeper than `N` into one \""+calls.DeeperCalls+"\" node (0: no limit)")
	fl.IntVar(&f.job.PID, "pid", 0, "only the threads of process `PID`")
	fl.BoolVar(&f.job.NoDemangle, "no-demangle", false, "keep C++/Rust names mangled")
	f.allowLoss.add(fl, "exit 0 even when data was lost")
	fl.BoolVar(&f.out.Quiet, "quiet", false, "no output but the summary on stderr (for timing)")
	fl.StringArrayVar(&f.job.Raw, "raw", nil, "the argument is a raw PT trace of one thread over this code: `FILE[:OFFSET[-END]]:ADDRESS` (as pt flow's; repeatable; no symbols)")
	return c
}

// ptCallsFlag is the flag of the calls.Job field named field.
func ptCallsFlag(field string) string {
	if field == "Resolution" {
		return "resolution"
	}
	return field
}

func runPTCalls(e *env, f *ptCallsFlags, path string) error {
	out, err := f.out.Output()
	if err != nil {
		return usageErrorf("pt calls: %v", err)
	}
	// Little is allocated per block or call: the heap is the input, the
	// image and its decode caches and the call tree, live until the end.
	// Collect late, as pt flow does (a collection only burnt CPU: 5 %).
	defer debug.SetGCPercent(debug.SetGCPercent(1000))
	in, o, err := f.job.Open(path)
	if ae := (*calls.JobArgError)(nil); errors.As(err, &ae) {
		return usageErrorf("pt calls: --%s %v: want %s", ptCallsFlag(ae.Field), ae.Value, ae.Want)
	} else if re := (*calls.RawError)(nil); errors.As(err, &re) {
		return usageErrorf("pt calls: --raw: %v", err)
	} else if errors.Is(err, calls.ErrStdin) {
		return usageErrorf("pt calls: a perf.data, capture directory or raw trace is read by its name, not from standard input")
	} else if err != nil {
		return fmt.Errorf("pt calls: %w", err)
	}
	defer in.Close()
	for _, w := range f.job.Warnings(in) {
		fmt.Fprintf(e.stderr, "iotap: pt calls: %s: --%s %s\n", w.Problem, ptCallsFlag(w.Field), w.Effect)
	}
	if m := e.meter("iotap: pt calls", in.TraceBytes(), out == calls.OutputJSON); m != nil {
		o.Progress = m.Update
	}
	res, err := calls.Run(e.stdout, in, path, out, o)
	if res == nil {
		return fmt.Errorf("pt calls: %w", err)
	} else if err != nil {
		return err
	}
	for _, n := range res.Notes(in) {
		fmt.Fprintf(e.stderr, "iotap: pt calls: %s\n", n)
	}
	fmt.Fprintf(e.stderr, "iotap: pt calls: %s\n", res)
	if l := res.Loss(in); l != "" {
		prefix := "pt calls: "
		if len(res.Cut) > 0 && in.Loss == "" {
			prefix += path + ": " // the file whose stream is cut
		}
		return f.allowLoss.check(e, prefix, []string{l}, "--allow-loss to accept")
	}
	return nil
}
