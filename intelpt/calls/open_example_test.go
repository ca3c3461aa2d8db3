package calls_test

import (
	"fmt"
	"os"
	"time"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
)

// The calls of a raw trace of one thread over code loaded at 0x100000
// (libipt's call_direct-ret_compressed test), as 'iotap pt calls --raw
// FILE:0x100000 --folded' prints them; with the code at a wrong address
// the thread is one gap, which Notes names.
func ExampleAnalyze() {
	trace, err := os.ReadFile("../testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		panic(err)
	}
	for _, at := range []string{"0x100000", "0x200000"} {
		im := intelpt.NewImage()
		if _, err := im.AddRaw("../testdata/libipt/call_direct-ret_compressed.bin:" + at); err != nil {
			panic(err)
		}
		in := calls.RawInput(trace, intelpt.Config{})
		res, err := calls.Analyze(in, calls.Options{Image: im})
		if err != nil {
			panic(err)
		}
		fmt.Println(res)
		calls.WriteFolded(os.Stdout, res.Tree, false)
		for _, n := range res.Notes(in) {
			fmt.Println(n)
		}
	}
	// Output:
	// 1 threads, 3 instructions, 1 calls, 0 tail calls, 1 returns, 0 unwinds, 0 unmatched returns, 0 gaps
	// thread_1;[unknown_0x100000] 2
	// thread_1;[unknown_0x100000];[unknown_0x100008] 1
	// 1 threads, 0 instructions, 0 calls, 0 tail calls, 0 returns, 0 unwinds, 0 unmatched returns, 1 gaps
	// gap: thread 1 at instruction 0: decode error: intelpt: offset 0x1c, ip 0x100000: no memory mapped at this address
}

// The job of 'iotap pt calls --folded' over a raw trace of one thread and
// its code: collapsed stacks, weighted by instructions.
func ExampleRun() {
	im := intelpt.NewImage()
	if _, err := im.AddRaw("../testdata/libipt/call_direct-ret_compressed.bin:0x100000"); err != nil {
		panic(err)
	}
	b, err := os.ReadFile("../testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		panic(err)
	}
	res, err := calls.Run(os.Stdout, calls.RawInput(b, intelpt.Config{}), "trace.pt", calls.OutputFolded, calls.Options{Image: im})
	if err != nil {
		panic(err)
	}
	fmt.Println(res)
	// Output:
	// thread_1;[unknown_0x100000] 2
	// thread_1;[unknown_0x100000];[unknown_0x100008] 1
	// 1 threads, 3 instructions, 1 calls, 0 tail calls, 1 returns, 0 unwinds, 0 unmatched returns, 0 gaps
}

// 'iotap pt calls --raw FILE:0x200000 TRACE' through a Job: the code at a
// wrong address, so the thread is a gap, the analysis's loss (exit 3).
func ExampleJob() {
	j := calls.Job{Raw: []string{"../testdata/libipt/call_direct-ret_compressed.bin:0x200000"}, MaxDepth: calls.DefaultTreeDepth}
	in, o, err := j.Open("../testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		panic(err)
	}
	res, err := calls.Run(os.Stdout, in, "trace.pt", calls.OutputNone, o)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Loss(in))
	// Output:
	// 1 gaps in the trace
}

// 'iotap pt flow --raw FILE:ADDRESS TRACE' through a FlowJob: the
// instructions that ran, as libipt's ptxed lists them, then what the
// listing lacks.
func ExampleFlowJob() {
	j := calls.FlowJob{
		Trace:   "../testdata/libipt/call_direct-ret_compressed.pt",
		Raw:     []string{"../testdata/libipt/call_direct-ret_compressed.bin:0x100000"},
		Listing: intelpt.FlowOptions{BlockDecoder: true},
	}
	t, err := j.Open()
	if err != nil {
		panic(err)
	}
	defer t.Close()
	if _, err := t.Run(os.Stdout, nil); err != nil {
		panic(err)
	}
	fmt.Println(len(t.Loss()), "losses")
	// Output:
	// 0000000000100000
	// 0000000000100008
	// 0000000000100005
	// [disabled]
	// 0 losses
}

// 'iotap pt calls --folded --folded-time' picks Run's form; --json with
// --folded is refused.
func ExampleOutputFlags_Output() {
	out, err := calls.OutputFlags{Folded: true, FoldedTime: true}.Output()
	fmt.Println(out == calls.OutputFoldedTime, err)
	_, err = calls.OutputFlags{JSON: true, Folded: true}.Output()
	fmt.Println(err)
	// Output:
	// true <nil>
	// give one of --json and --folded
}

// 'iotap pt calls --resolution 10us --raw FILE:ADDRESS TRACE': a raw
// trace has no TSC conversion, so the resolution is compared with ticks,
// which the job says before it runs.
func ExampleJob_Warnings() {
	j := calls.Job{Raw: []string{"../testdata/libipt/call_direct-ret_compressed.bin:0x100000"}, Resolution: 10 * time.Microsecond}
	in, _, err := j.Open("../testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		panic(err)
	}
	defer in.Close()
	for _, w := range j.Warnings(in) {
		fmt.Println(w)
	}
	// Output:
	// no TSC conversion in the input: Job.Resolution is compared with TSC ticks
}
