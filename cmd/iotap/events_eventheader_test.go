package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestEventHeaderVM writes EventHeader events with 'events write
// --eventheader' on the lab kernel while 'events record' records their
// tracepoint through ftrace and another through perf rings: each
// recorder prints them decoded, in perf-decode's JSON shape, with the
// values given on the command line.
func TestEventHeaderVM(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	const tp = "'MyProvider_L4K1f u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level'"
	res := vmlab.Run(t, vmlab.Machine{Script: `set +e
iotap events record ` + tp + ` --json -o /out/ftrace.json 2>/out/ftrace.err &
a=$!
iotap events record --perf ` + tp + ` -o /out/perf.txt 2>/out/perf.err &
b=$!
i=0
until iotap events status | grep -q 'MyProvider_L4K1f .*ftrace.*perf\|MyProvider_L4K1f .*perf.*ftrace'; do
	i=$((i+1)); [ $i -lt 300 ] || { echo never enabled; iotap events status; exit 1; }; sleep 0.1
done
iotap events write --eventheader --level 4 --keyword 0x1f MyProvider:Request status:u32=404 "path=/no such file" delta=-5 ok:bool=true e:errno=2 2>/out/w1.err; echo $? > /out/w1.rc
iotap events write --eventheader --level 4 --keyword 0x1f MyProvider:Done bytes:x64=0xbeef 2>/out/w2.err; echo $? > /out/w2.rc
iotap events write --eventheader --level 2 --keyword 0x1f MyProvider:Unrecorded x=1 2>/out/w3.err; echo $? > /out/w3.rc
kill -INT $a $b
wait $a; echo $? > /out/ftrace.rc
wait $b; echo $? > /out/perf.rc
`})
	if res.ExitCode != 0 {
		t.Fatalf("script exit %d\n%s", res.ExitCode, res.Console)
	}
	read := func(n string) string { return strings.TrimSpace(string(res.ReadOut(t, n))) }
	for _, w := range []string{"w1", "w2", "w3"} {
		if rc := read(w + ".rc"); rc != "0" {
			t.Errorf("%s exit %s: %s", w, rc, read(w+".err"))
		}
	}
	if !strings.Contains(read("w3.err"), "MyProvider_L2K1f is not enabled, nothing written") {
		t.Errorf("level 2 write: %s", read("w3.err"))
	}
	if read("ftrace.rc") != "0" || read("perf.rc") != "0" {
		t.Fatalf("recorders exit %s %s: %s %s", read("ftrace.rc"), read("perf.rc"), read("ftrace.err"), read("perf.err"))
	}
	meta := regexp.MustCompile(`^\{"kind":"user_event","ts_ns":\d+,"wall_ns":null,"cpu":\d+,"tid":\d+,"pid":null,`)
	want := []string{
		`{"kind":"input","schema":1,"source":"events","file":null,"format":"tracefs","clock":"trace"}`,
		`{"kind":"user_event",T,"system":"user_events","name":"MyProvider:Request","fields":{"status":404,"path":"/no such file","delta":-5,"ok":true,"e":"ENOENT(2)"},` +
			`"eventheader":{"tracepoint":"MyProvider_L4K1f","id":0,"version":0,"level":4,"keyword":"0x1f","opcode":0,"tag":0,"activity":null,"related_activity":null}}`,
		`{"kind":"user_event",T,"system":"user_events","name":"MyProvider:Done","fields":{"bytes":"0xBEEF"},` +
			`"eventheader":{"tracepoint":"MyProvider_L4K1f","id":0,"version":0,"level":4,"keyword":"0x1f","opcode":0,"tag":0,"activity":null,"related_activity":null}}`,
	}
	lines := strings.Split(read("ftrace.json"), "\n")
	if len(lines) != 3 {
		t.Fatalf("ftrace recorder: %d lines:\n%s", len(lines), read("ftrace.json"))
	}
	for i, l := range lines {
		got := meta.ReplaceAllString(l, `{"kind":"user_event",T,`)
		if got != want[i] {
			t.Errorf("line %d:\n got  %s\n want %s", i, got, want[i])
		}
	}
	text := read("perf.txt")
	if strings.Count(text, "\n") != 1 || !strings.Contains(text, `MyProvider:Request: status=404 path="/no such file" delta=-5 ok=true e="ENOENT(2)"`) ||
		!strings.Contains(text, `MyProvider:Done: bytes="0xBEEF"`) {
		t.Errorf("perf recorder text:\n%s", text)
	}
}
