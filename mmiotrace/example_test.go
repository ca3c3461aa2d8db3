package mmiotrace_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iotap/iotap/mmiotrace"
)

const exampleLog = `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0x0 0
R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0
W 4 8.294406 1 0xfebc00d8 0xffffffff 0x0 0
`

// Read records without allocating, resolving each access to its BAR.
func ExampleReader() {
	rd := mmiotrace.NewReader(strings.NewReader(exampleLog))
	bars := mmiotrace.NewBARMap()
	var rec mmiotrace.Record
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		bars.Observe(&rec)
		if rec.Kind == mmiotrace.KindRead || rec.Kind == mmiotrace.KindWrite {
			loc, _ := bars.Lookup(rec.Phys)
			fmt.Printf("%s %d %s BAR%d+0x%x = 0x%x\n", rec.Kind, rec.Width, loc.BAR.Addr, loc.BAR.Index, loc.Offset, rec.Value)
		}
	}
	// Output:
	// R 4 0000:00:03.0 BAR0+0x8 = 0x80080783
	// W 4 0000:00:03.0 BAR0+0xd8 = 0xffffffff
}

// Keep the writes to the first 0x100 bytes of the NIC's BAR0; the records
// that interpret them stay.
func ExampleFilterLog() {
	br, _ := mmiotrace.ParseBARRange("0000:00:03.0/0+0x0..0x100")
	var kinds mmiotrace.KindSet
	kinds.Add(mmiotrace.KindWrite)
	f := &mmiotrace.Filter{Kinds: kinds, BARs: []mmiotrace.BARRange{br}}
	var out strings.Builder
	st, err := mmiotrace.FilterLog(context.Background(), strings.NewReader(exampleLog), &out, f, mmiotrace.FilterOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	fmt.Println(st.Kept, "of", st.Lines)
	// Output:
	// VERSION 20070824
	// PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
	// MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0x0 0
	// W 4 8.294406 1 0xfebc00d8 0xffffffff 0x0 0
	// 4 of 5
}

// A dry run of a replay prints the accesses it would execute, as 'iotap
// mmio replay --dry-run --json' does, then its counts.
func ExampleDryRun() {
	pr := mmiotrace.NewReplayPrinter(os.Stdout, true)
	opt := mmiotrace.ReplayOptions{CheckReads: true, OnAccess: pr.Access}
	target := mmiotrace.DryRun(&opt)
	st, err := mmiotrace.Replay(context.Background(), strings.NewReader(exampleLog), target, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	pr.Summary(st, true)
	fmt.Println(st)
	// Output:
	// {"kind":"mmio_replay_access","line":4,"access":"R","ts_ns":8288891000,"phys":"0xfebc0008","value":"0x80080783","location":"0000:00:03.0/0+0x8","bar":"0000:00:03.0/0","offset":"0x8","width":4}
	// {"kind":"mmio_replay_access","line":5,"access":"W","ts_ns":8294406000,"phys":"0xfebc00d8","value":"0xffffffff","location":"0000:00:03.0/0+0xd8","bar":"0000:00:03.0/0","offset":"0xd8","width":4}
	// {"kind":"mmio_replay_summary","dry_run":true,"writes":1,"reads":1,"divergences":0,"unmapped":0,"skipped":0,"lost":0}
	// 1 writes, 1 reads checked, 0 divergences, 0 accesses outside known BARs
}

// --value MASK=BITS keeps the accesses whose value has BITS under MASK.
func ExampleParseValueMask() {
	mask, bits, err := mmiotrace.ParseValueMask("0x80000000=0")
	fmt.Printf("%#x %#x %v\n", mask, bits, err)
	_, _, err = mmiotrace.ParseValueMask("0x1=0x3")
	fmt.Println(err)
	// Output:
	// 0x80000000 0x0 <nil>
	// bits 0x3 outside mask 0x1
}

// The first write of a log, as 'iotap mmio read -c 1 -Y "mmio.kind ==
// \"W\""' prints it; Formatter(true, nil) would write NDJSON instead.
func ExampleCopyRecords() {
	rd := mmiotrace.NewReader(strings.NewReader(exampleLog))
	isWrite := func(r *mmiotrace.Record) bool { return r.Kind == mmiotrace.KindWrite }
	n, err := mmiotrace.CopyRecords(context.Background(), rd, os.Stdout, mmiotrace.Formatter(false, nil),
		mmiotrace.CopyOptions{Keep: isWrite, Count: 1})
	fmt.Println(n, err)
	// Output:
	// W 4 8.294406 1 0xfebc00d8 0xffffffff 0x0 0
	// 1 <nil>
}

// Compare two logs by register sequence as 'iotap mmio diff' does: the
// second driver run wrote another value to IMC (0xd8).
func ExampleWriteDiff() {
	other := strings.Replace(exampleLog, "0xfebc00d8 0xffffffff", "0xfebc00d8 0x0", 1)
	a, _ := mmiotrace.Accesses(strings.NewReader(exampleLog))
	b, _ := mmiotrace.Accesses(strings.NewReader(other))
	ops, err := mmiotrace.Diff(a, b, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	mmiotrace.WriteDiff(os.Stdout, a, b, ops, mmiotrace.DiffFormat{All: true})
	// Output:
	//   A:4 B:4 R 4 0000:00:03.0/0+0x8 0x80080783
	// ~ A:5 B:5 W 0000:00:03.0/0+0xd8 0xffffffff -> 0x0
	// A 2 accesses, B 2: 1 identical, 1 same register with other value, 0 only in A, 0 only in B
}

// DiffLogs is 'iotap mmio diff': both logs read side by side (a bad line
// is skipped and counted in its Loss), aligned and written.
func ExampleDiffLogs() {
	other := strings.Replace(exampleLog, "0xfebc00d8 0xffffffff", "0xfebc00d8 0x0", 1) + "W 4 oops\n"
	a := mmiotrace.NewDiffLog(strings.NewReader(exampleLog), "good.log", "")
	b := mmiotrace.NewDiffLog(strings.NewReader(other), "bad.log", "")
	if err := mmiotrace.DiffLogs(os.Stdout, a, b, 4000, mmiotrace.DiffFormat{}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(len(a.Loss), len(b.Loss))
	// Output:
	// ~ A:5 B:5 W 0000:00:03.0/0+0xd8 0xffffffff -> 0x0
	// A 2 accesses, B 2: 1 identical, 1 same register with other value, 0 only in A, 0 only in B
	// 0 1
}

// ReadLog is 'iotap mmio read': here the first two writes of a log, as
// NDJSON after its input record.
func ExampleReadLog() {
	log := "VERSION 20070824\n" +
		"W 4 1.000100 1 0xfebc0000 0x4000240 0x0 0\n" +
		"R 4 1.000200 1 0xfebc0008 0x80080783 0x0 0\n" +
		"W 4 1.000300 1 0xfebc00d8 0xffffffff 0x0 0\n" +
		"W 4 1.000400 1 0xfebc0010 0x1 0x0 0\n"
	lost, err := mmiotrace.ReadLog(context.Background(), strings.NewReader(log), os.Stdout, mmiotrace.ReadOptions{
		JSON: true, File: "e1000.log", Format: "mmiotrace log",
		Keep:  func(r *mmiotrace.Record) bool { return r.Kind == mmiotrace.KindWrite },
		Count: 2,
	})
	fmt.Println(lost, err)
	// Output:
	// {"kind":"input","schema":1,"source":"mmio","file":"e1000.log","format":"mmiotrace log","clock":"trace"}
	// {"kind":"mmio_access","access":"W","width":4,"ts_ns":1000100000,"map_id":1,"phys":"0xfebc0000","value":"0x4000240","pc":null}
	// {"kind":"mmio_access","access":"W","width":4,"ts_ns":1000300000,"map_id":1,"phys":"0xfebc00d8","value":"0xffffffff","pc":null}
	// [] <nil>
}

// 'iotap mmio read --check FILE' with a progress meter: ReadLog reads the
// log through in and says the bytes read; without Progress it would map
// the regular file Path instead.
func ExampleReadLog_progress() {
	f, err := os.Open("testdata/e1000-bind.log")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var read int64
	_, err = mmiotrace.ReadLog(context.Background(), f, io.Discard, mmiotrace.ReadOptions{
		Check: true, Path: f.Name(), Progress: func(n int64) { read = n }})
	st, _ := f.Stat()
	fmt.Println(read == st.Size(), err)
	// Output: true <nil>
}
