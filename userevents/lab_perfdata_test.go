package userevents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestPerfDataVM runs perf itself (the host's perf, copied into the guest
// with its libraries) in the QEMU lab: perf record -e user_events:NAME
// records events that iotap events write emits through the real 6.12
// user_events, and perf script prints them in the guest. On the host,
// PerfDataReader must read that perf.data to exactly those events: the
// values written, and the thread, CPU, time and fields perf script shows.
func TestPerfDataVM(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	bins := vmlab.HostProgram(t, "perf")
	const n = 5
	script := fmt.Sprintf(`set +e
iotap events register 'iotap_perf u32 n; s64 delta; __rel_loc char[] msg' 2>/out/register.err || { cat /out/register.err; exit 1; }
perf record -q -e user_events:iotap_perf -o /out/perf.data -- sh -c 'i=1; while [ $i -le %d ]; do iotap events write iotap_perf n=$i delta=-$i "msg=hello $i" || exit 1; i=$((i+1)); done' 2>/out/record.err
echo $? > /out/record.rc
perf script -i /out/perf.data -F tid,cpu,time,event,trace > /out/script.txt 2>/out/script.err
echo $? > /out/script.rc
perf --version > /out/version.txt
`, n)
	res := vmlab.Run(t, vmlab.Machine{Binaries: bins, Script: script})
	if res.ExitCode != 0 {
		t.Fatalf("guest script exit %d:\n%s", res.ExitCode, res.Console)
	}
	read := func(name string) string { return strings.TrimSpace(string(res.ReadOut(t, name))) }
	if rc := read("record.rc"); rc != "0" {
		t.Fatalf("perf record in the guest: exit %s: %s", rc, read("record.err"))
	}
	if rc := read("script.rc"); rc != "0" {
		t.Fatalf("perf script in the guest: exit %s: %s", rc, read("script.err"))
	}
	t.Logf("guest: %s", read("version.txt"))
	var want []string
	for _, l := range strings.Split(read("script.txt"), "\n") {
		if l != "" {
			want = append(want, strings.Join(strings.Fields(l), " "))
		}
	}
	data := res.ReadOut(t, "perf.data")
	r, err := NewPerfDataReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var ev Recorded
	seen := map[uint64]bool{}
	pids := map[int32]bool{}
	for {
		err := r.Read(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.System != "user_events" || ev.Name != "iotap_perf" {
			t.Errorf("unexpected event %s:%s", ev.System, ev.Name)
			continue
		}
		v := map[string]any{}
		for _, x := range ev.Values {
			if x.Field.String {
				v[x.Field.Name] = string(x.Bytes)
			} else {
				v[x.Field.Name] = x.Any()
			}
		}
		num, _ := v["n"].(uint64)
		if num < 1 || num > n || seen[num] {
			t.Errorf("event n=%v (%T): want each of 1..%d once", v["n"], v["n"], n)
			continue
		}
		seen[num] = true
		if d, _ := v["delta"].(int64); d != -int64(num) {
			t.Errorf("n=%d: delta %v (%T), want %d", num, v["delta"], v["delta"], -int64(num))
		}
		if m := v["msg"]; m != fmt.Sprintf("hello %d", num) {
			t.Errorf("n=%d: msg %q", num, m)
		}
		// Each write is its own iotap process (a Go program: the write
		// may come from any of its threads).
		if ev.Thread == 0 || ev.Process == 0 || pids[ev.Process] {
			t.Errorf("n=%d: pid %d tid %d: want a new writer process per event", num, ev.Process, ev.Thread)
		}
		pids[ev.Process] = true
		// perf script's line for a user_events sample: the kernel's print
		// fmt of the event, field=value.
		line := fmt.Sprintf("%d [%03d] %d.%06d: user_events:iotap_perf: n=%d delta=%d msg=hello %d",
			ev.Thread, ev.CPU, ev.TS/1e9, ev.TS%1e9/1e3, num, -int64(num), num)
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	if st := r.Stats(); st.Lost != 0 || st.Bad != 0 || st.NoFormat != 0 {
		t.Errorf("reader stats %+v", st)
	}
	if len(seen) != n {
		t.Errorf("iotap read %d of the %d events written", len(seen), n)
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("iotap %d samples, perf script %d:\n%s", len(got), len(want), read("script.txt"))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("sample %d:\n iotap       %s\n perf script %s", i, got[i], want[i])
		}
	}
}
