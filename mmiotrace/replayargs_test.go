package mmiotrace_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/mmiotrace"
)

// TestReplayArgsOptions: each bad argument is an error naming its flag;
// --log-device replaces --device as the log's device unless it is a dry
// run, which ignores it.
func TestReplayArgsOptions(t *testing.T) {
	for _, c := range []struct {
		a    mmiotrace.ReplayArgs
		want string
	}{
		{mmiotrace.ReplayArgs{}, "replay needs --device PCIADDR (the target) or --dry-run"},
		{mmiotrace.ReplayArgs{DryRun: true, Pace: "slow"}, `--pace "slow"`},
		{mmiotrace.ReplayArgs{DryRun: true, Pace: "fixed"}, "--pace fixed needs --delay"},
		{mmiotrace.ReplayArgs{DryRun: true, Addrs: []string{"x"}}, "--addr: "},
		{mmiotrace.ReplayArgs{DryRun: true, BARs: []string{"0000:00:03.0"}}, "--bar: "},
		{mmiotrace.ReplayArgs{Device: "03.0"}, "--device: "},
		{mmiotrace.ReplayArgs{Device: "0000:00:03.0", LogDevice: "03.0"}, "--log-device: "},
	} {
		_, err := c.a.Options()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q...", c.a, err, c.want)
		}
	}
	a := mmiotrace.ReplayArgs{Device: "0000:00:03.0", LogDevice: "0000:00:04.0", Pace: "fixed"}
	a.Delay = time.Millisecond
	opt, err := a.Options()
	if err != nil || opt.Device == nil || opt.Device.String() != "0000:00:04.0" || opt.Pacing != mmiotrace.PaceFixed || opt.Delay != time.Millisecond {
		t.Errorf("%+v: %+v, %v; want the log device 0000:00:04.0, fixed pace of 1ms", a, opt, err)
	}
	a.DryRun, a.LogDevice = true, "junk"
	if opt, err = a.Options(); err != nil || opt.Device.String() != "0000:00:03.0" {
		t.Errorf("dry run: %+v, %v; want --log-device ignored", opt, err)
	}
}

// TestReplayArgsDryRun: a dry run of the lab's e1000 bind log with
// CheckReads prints every access of the log, in order, at the BAR offset
// of e1000's BAR 0 (0xfebc0000, from its PCIDEV line), as the log's lines
// split by fields say; the summary counts its writes and reads.
func TestReplayArgsDryRun(t *testing.T) {
	f, err := os.Open("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	writes, reads := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 6 || (fl[0] != "R" && fl[0] != "W") {
			continue
		}
		phys, err := strconv.ParseUint(fl[4], 0, 64)
		if err != nil || phys < 0xfebc0000 || phys >= 0xfebc0000+0x20000 {
			t.Fatalf("%q: not an access to e1000's BAR 0", sc.Text())
		}
		want = append(want, fmt.Sprintf("%s %s 0000:00:03.0/0+%#x %s %s", fl[0], fl[1], phys-0xfebc0000, fl[4], fl[5]))
		if fl[0] == "W" {
			writes++
		} else {
			reads++
		}
	}
	f.Seek(0, 0)
	a := mmiotrace.ReplayArgs{DryRun: true}
	a.CheckReads = true
	opt, err := a.Options()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := a.Replay(context.Background(), f, opt, mmiotrace.NewReplayPrinter(&out, false))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(want) || len(want) < 1000 {
		t.Fatalf("%d accesses printed, the log has %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("access %d: %q, the log says %q", i, got[i], want[i])
		}
	}
	if st.Writes != int64(writes) || st.Reads != int64(reads) || st.Divergences != 0 {
		t.Errorf("summary %s; the log has %d writes, %d reads", st, writes, reads)
	}
}

// A dry run prints the writes a replay would execute, located on the
// BARs of the log's devices.
func ExampleReplayArgs() {
	log := `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 1.000000 1 0xfebc0000 0xffffc90000100000 0x20000 0x0 0
W 4 1.000001 1 0xfebc00d8 0xffffffff 0x0 0
R 4 1.000002 1 0xfebc0008 0x80080783 0x0 0
W 1 1.000003 1 0xfebc0010 0x7 0x0 0
`
	a := mmiotrace.ReplayArgs{DryRun: true, Pace: "recorded"}
	opt, err := a.Options()
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := a.Replay(context.Background(), strings.NewReader(log), opt, mmiotrace.NewReplayPrinter(os.Stdout, false))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st)
	// Output:
	// W 4 0000:00:03.0/0+0xd8 0xfebc00d8 0xffffffff
	// W 1 0000:00:03.0/0+0x10 0xfebc0010 0x7
	// 2 writes, 0 reads checked, 0 divergences, 0 accesses outside known BARs
}
