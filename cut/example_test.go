package cut_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/mmiotrace"
)

func Example() {
	log := strings.Join([]string{
		"VERSION 20070824",
		"MAP 1.000000 1 0xfebc0000 0xffffc90000a00000 0x20000 0x0 0",
		"R 4 1.500000 1 0xfebc0008 0x80080783 0x0 0",
		"MARK 2.000000 probe done",
		"W 4 2.250000 1 0xfebc00d0 0x9d 0x0 0",
		"R 4 3.000000 1 0xfebc0008 0x80080783 0x0 0",
	}, "\n") + "\n"
	in := cut.Input{Name: "probe.log", ReaderAt: strings.NewReader(log), Size: int64(len(log))}
	// Build the index (iotap index writes it next to the input).
	ix, err := cut.BuildIndex(context.Background(), in, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	in.Index = ix

	spec, _ := timerange.ParseSpec("mark:probe done", "+1s")
	var out bytes.Buffer
	res, err := cut.Cut(context.Background(), in, &out, cut.Options{Window: spec, Warn: func(s string) { fmt.Fprintln(os.Stderr, s) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	fmt.Println(res.Events, "events, indexed:", res.Indexed)
	// Output:
	// VERSION 20070824
	// MAP 1.000000 1 0xfebc0000 0xffffc90000a00000 0x20000 0x0 0
	// MARK 2.000000 probe done
	// W 4 2.250000 1 0xfebc00d0 0x9d 0x0 0
	// 2 events, indexed: true
}

// A window from one of a trace's markers (MARK 8.112034 "iotap: bind
// 0000:00:03.0 e1000") to 0.1845 s after its first record (8.104948) is
// placed on the trace's own clock, in ns; standard input cannot be read
// twice for it.
func ExampleResolveWindow() {
	spec, err := timerange.ParseSpec("mark:iotap: bind 0000:00:03.0 e1000", "0.1845s")
	if err != nil {
		fmt.Println(err)
		return
	}
	win, err := cut.ResolveWindow(context.Background(), "../mmiotrace/testdata/e1000-bind.log", spec, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(win.From, win.To)
	_, err = cut.ResolveWindow(context.Background(), "-", spec, nil)
	fmt.Println(errors.Is(err, cut.ErrWindowNeedsFile))
	// Output:
	// 8112034000 8289448000
	// true
}

// OpenStream reads a window of a log in-process, as the log's own format:
// here the accesses from 8.29 s (@T: the log's own stamps) to 5 ms
// later, with the MAP record before them that places them.
func ExampleOpenStream() {
	spec, _ := timerange.ParseSpec("@8.29", "+5ms")
	s, err := cut.OpenStream(context.Background(), "../mmiotrace/testdata/e1000-bind.log", spec, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	b, err := io.ReadAll(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") || strings.HasPrefix(l, "MAP ") {
			fmt.Println(l)
		}
	}
	fmt.Println(s.Result().Events, "events")
	_, err = cut.OpenStream(context.Background(), "../mmiotrace/testdata/e1000-bind.log", timerange.Spec{HasFrom: true, From: timerange.Point{Base: timerange.Mark, Mark: "nowhere"}}, nil)
	var we *cut.WindowError
	fmt.Println(errors.As(err, &we))
	// Output:
	// MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0x0 0
	// R 4 8.290117 1 0xfebc0008 0x80080783 0x0 0
	// W 4 8.294406 1 0xfebc00d8 0xffffffff 0x0 0
	// R 4 8.294888 1 0xfebc0008 0x80080783 0x0 0
	// 3 events
	// true
}

// Cut a window of a log file as 'iotap cut' does (with its index when it
// has one), and say what loss the window keeps.
func ExampleCutFile() {
	spec, _ := timerange.ParseSpec("@13", "")
	var out bytes.Buffer
	res, err := cut.CutFile(context.Background(), "../mmiotrace/testdata/kinds.log", &out, true, nil, cut.Options{Window: spec})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Summary("kinds.log", spec))
	fmt.Println(res.LostInWindow())
	// Output:
	// mmiotrace log kinds.log: 3 events kept of [@13..), 738 bytes read (read from the start)
	// [the window records 42 lost events]
}

// Read the window of an mmiotrace log in-process, after checking that
// the file is one.
func ExampleOpenTraceStream() {
	spec, _ := timerange.ParseSpec("@13", "")
	s, err := cut.OpenTraceStream(context.Background(), "../mmiotrace/testdata/kinds.log", detect.MMIO, spec, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	b, _ := io.ReadAll(s)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "MARK") || strings.HasPrefix(l, "UNMAP") {
			fmt.Println(l)
		}
	}
	_, err = cut.OpenTraceStream(context.Background(), "../testdata/usbmon/lab-capture.pcapng", detect.MMIO, spec, nil)
	fmt.Println(err != nil)
	// Output:
	// MARK 13.000000 Lost 42 events.
	// UNMAP 13.100000 1 0xffffffff81931030 0
	// true
}

// Read a USB capture as 'iotap usb convert' reads its input: whole, or
// with a window its cut; an input of another kind is refused the same
// way either way.
func ExampleOpenReader() {
	ctx := context.Background()
	spec, _ := timerange.ParseSpec("@13", "")
	for _, s := range []timerange.Spec{{}, spec} {
		r, err := cut.OpenReader(ctx, "../mmiotrace/testdata/kinds.log", detect.USB, s, nil)
		fmt.Println(r == nil, err)
	}
	r, err := cut.OpenReader(ctx, "../testdata/usbmon/lab-0u.txt", detect.USB, timerange.Spec{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	size := r.Size()
	b, _ := io.ReadAll(r)
	fmt.Println(r.Stream == nil, size == int64(len(b)), r.Loss())
	// Output:
	// true ../mmiotrace/testdata/kinds.log: not a usbmon capture: it is mmiotrace log (use 'iotap mmio ...')
	// true ../mmiotrace/testdata/kinds.log: not a usbmon capture: it is mmiotrace log (use 'iotap mmio ...')
	// true true []
}

// 'iotap index FILE' as a library call: the sidecar index written next
// to the trace (a private file; cut then seeks with it).
func ExampleWriteIndexFile() {
	dir, _ := os.MkdirTemp("", "index")
	defer os.RemoveAll(dir)
	src, _ := os.ReadFile("../testdata/usbmon/lab-0u.txt")
	path := dir + "/usb.txt"
	os.WriteFile(path, src, 0o600)
	summary, err := cut.WriteIndexFile(context.Background(), path, cut.DefaultInterval, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.ReplaceAll(summary, dir+"/", ""))
	ix, err := cut.LoadIndex(path + cut.IndexSuffix)
	fmt.Println(ix.Records, err)
	// Output:
	// usb.txt: usbmon text, 138 records, 1 checkpoints, 0 markers, 7 sources; wrote usb.txt.iotapidx (133 bytes)
	// 138 <nil>
}

// The writes of a time window of an mmiotrace log, as 'iotap mmio
// filter --write --from @12 --to @13' prints them: the log is cut, the
// records that locate the window's accesses kept.
func ExampleOpenLog() {
	ctx := context.Background()
	spec, _ := timerange.ParseSpec("@12", "@13")
	l, err := cut.OpenLog(ctx, "../mmiotrace/testdata/kinds.log", cut.LogOptions{Window: spec})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	var f mmiotrace.Filter
	f.Kinds.Add(mmiotrace.KindWrite)
	var out strings.Builder
	st, lost, err := l.Filter(ctx, &out, &f, mmiotrace.FilterOptions{})
	fmt.Print(strings.ReplaceAll(out.String(), " \n", "\n"))
	fmt.Println(l.Format, st.Kept, "lines kept; lost:", lost, err)
	// Output:
	// # iotap test log: one record of every kind (hand-written in the kernel's format)
	// VERSION 20070824
	// PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
	// PCIDEV 0000 80861237 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
	// LSPCI 00:03.0 Ethernet controller: Intel Corporation 82540EM Gigabit Ethernet Controller (rev 03)
	// MAP 0.001000 1 0xfebc0000 0xffffc90000a00000 0x20000 0xffffffff81931000 0
	// W 1 12.000001 1 0xfebc00d8 0xff 0x0 0
	// mmiotrace log 7 lines kept; lost: [] <nil>
}

// The writes of a time window of an mmiotrace log, replayed dry as
// 'iotap mmio replay --dry-run --from @12 --to @13' prints them.
func ExampleLog_Replay() {
	ctx := context.Background()
	spec, _ := timerange.ParseSpec("@12", "@13")
	l, err := cut.OpenLog(ctx, "../mmiotrace/testdata/kinds.log", cut.LogOptions{Window: spec})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	a := mmiotrace.ReplayArgs{DryRun: true}
	opt, err := a.Options()
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := l.Replay(ctx, &a, opt, mmiotrace.NewReplayPrinter(os.Stdout, false))
	fmt.Println(st.Writes, "writes; lost:", st.Loss, err)
	// Output:
	// W 1 0000:00:03.0/0+0xd8 0xfebc00d8 0xff
	// 1 writes; lost: [] <nil>
}
