package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

func runEvents(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"events"}, args...), &out, &errb)
	return out.String(), errb.String(), err
}

// Bad command lines are usage errors (exit 2) found before any kernel
// access, so these run on any machine.
func TestEventsUsageErrors(t *testing.T) {
	tests := [][]string{
		{"register", "bad-name u32 a"},
		{"register", "ev long a"},
		{"register", "ev u32 a", "extra"},
		{"write", "--register", "ev u32 a", "other", "a=1"},
		{"write", "--register", "ev u32 a", "ev", "a=x"},
		{"write", "--register", "ev u8 a", "ev", "a=256"},
		{"write", "--register", "ev u32 a", "ev", "b=1"},
		{"write", "--register", "ev char[4] s", "ev", "s=toolong"},
		{"write", "--register", "ev u32 a", "ev", "novalue"},
		{"write", "bad/name"},
		{"record", "ev u32 a"},
		{"record", "-o", "x", "../etc"},
		{"record", "-o", "x", "ev u32 a; u32 a"},
		{"delete", "a/b"},
	}
	for _, args := range tests {
		_, _, err := runEvents(t, args...)
		if exitCode(err, &bytes.Buffer{}) != exitUsage {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestEventsVM runs the documented CLI flow in the lab: a recorder in the
// background, writes from the shell, stop with SIGINT, check the output.
func TestEventsVM(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	res := vmlab.Run(t, vmlab.Machine{Script: `set +e
iotap events record 'iotap_cli u32 a; __rel_loc char[] s; s64 n' --json -o /out/rec.json 2>/out/rec.err &
pid=$!
i=0
until iotap events status | grep -q 'iotap_cli .*ftrace'; do
	i=$((i+1)); [ $i -lt 200 ] || { echo never enabled; exit 1; }; sleep 0.1
done
` + "iotap events record iotap_cli2 -o /out/no.txt 2>/out/no.err; echo $? > /out/no.rc" + `
test -e /out/no.txt && echo left > /out/no.left
for i in 1 2 3; do iotap events write iotap_cli a=$i "s=hello $i" n=-$i; done
iotap events write --register 'iotap_cli3 u16 x' iotap_cli3 x=5 2>/out/w3.err; echo $? > /out/w3.rc
iotap events status > /out/status.txt
iotap events list > /out/list.txt
kill -INT $pid
wait $pid; echo $? > /out/rec.rc
stat -c %a /out/rec.json > /out/perm.txt
iotap events register 'iotap_cli_p u32 a' > /out/reg.txt
iotap events delete iotap_cli_p >> /out/reg.txt
# Loss: a 4 KiB buffer, the recorder stopped while 80 big events arrive.
# A second recorder, the same, with --allow-loss.
iotap events record 'iotap_loss u32 a; char[200] pad' --buffer-kb 4 -o /out/loss.txt 2>/out/loss.err &
lp=$!
iotap events record 'iotap_loss u32 a; char[200] pad' --buffer-kb 4 --allow-loss -o /out/loss2.txt 2>/out/loss2.err &
lp2=$!
i=0
until [ "$(iotap events status | grep -c 'iotap_loss .*ftrace')" = 1 ] && grep -q recording /out/loss.err && grep -q recording /out/loss2.err; do
	i=$((i+1)); [ $i -lt 200 ] || { echo never enabled; exit 1; }; sleep 0.1
done
kill -STOP $lp $lp2
i=0
while [ $i -lt 80 ]; do iotap events write iotap_loss a=$i pad=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done
kill -CONT $lp $lp2
sleep 1
kill -INT $lp $lp2
wait $lp; echo $? > /out/loss.rc
wait $lp2; echo $? > /out/loss2.rc
`})
	if res.ExitCode != 0 {
		t.Fatalf("script exit %d\n%s", res.ExitCode, res.Console)
	}
	read := func(n string) string { return strings.TrimSpace(string(res.ReadOut(t, n))) }
	// A bare name that is not registered: exit 2 with the remedy.
	if read("no.rc") != "2" || !strings.Contains(read("no.err"), "register it first") {
		t.Errorf("record of an unknown event: rc %s: %s", read("no.rc"), read("no.err"))
	}
	// ... and no output file (RecordToFile aborts it).
	if _, err := os.Stat(filepath.Join(res.Out, "no.left")); err == nil {
		t.Error("record of an unknown event left its output file")
	}
	if rc := read("rec.rc"); rc != "0" {
		t.Fatalf("record exit %s: %s", rc, read("rec.err"))
	}
	if !strings.Contains(read("rec.err"), "recorded 3 event(s), lost 0") {
		t.Errorf("record summary: %s", read("rec.err"))
	}
	if p := read("perm.txt"); p != "600" {
		t.Errorf("output mode %s, want 600", p)
	}
	lines := strings.Split(read("rec.json"), "\n")
	if len(lines) != 4 || lines[0] != `{"kind":"input","schema":1,"source":"events","file":null,"format":"tracefs","clock":"trace"}` {
		t.Fatalf("%d lines:\n%s", len(lines), read("rec.json"))
	}
	for i, l := range lines[1:] {
		var ev struct {
			Name   string
			TS     uint64 `json:"ts_ns"`
			CPU    int
			PID    int `json:"tid"`
			Fields map[string]any
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		n := float64(i + 1)
		if ev.Name != "iotap_cli" || ev.TS == 0 || ev.PID <= 0 || ev.Fields["a"] != n || ev.Fields["n"] != -n || ev.Fields["s"] != "hello "+string(rune('1'+i)) {
			t.Errorf("line %d: %+v", i, ev)
		}
	}
	if !strings.Contains(read("w3.err"), "not enabled, nothing written") || read("w3.rc") != "0" {
		t.Errorf("write to an unrecorded event: rc %s: %s", read("w3.rc"), read("w3.err"))
	}
	if !strings.Contains(read("status.txt"), "iotap_cli") || !strings.Contains(read("status.txt"), "ftrace") {
		t.Errorf("status:\n%s", read("status.txt"))
	}
	if !strings.Contains(read("list.txt"), "user_events/iotap_cli\tiotap_cli u32 a; __rel_loc char[] s; s64 n") {
		t.Errorf("list:\n%s", read("list.txt"))
	}
	if rc, msg := read("loss.rc"), read("loss.err"); rc != "3" || !strings.Contains(msg, "lost") {
		t.Errorf("overflowed recording: exit %s, want 3: %s", rc, msg)
	} else if m := regexp.MustCompile(`recorded (\d+) event\(s\), lost (\d+)`).FindStringSubmatch(msg); m == nil {
		t.Errorf("no summary: %s", msg)
	} else if r, _ := strconv.Atoi(m[1]); r+atoiOr0(m[2]) != 80 {
		t.Errorf("recorded %s + lost %s != 80 written", m[1], m[2])
	}
	// With --allow-loss: exit 0, and the loss said as a warning.
	if rc, msg := read("loss2.rc"), read("loss2.err"); rc != "0" || !regexp.MustCompile(`(?m)^iotap: warning: events record: [1-9]\d* event\(s\) lost, 0 undecodable$`).MatchString(msg) {
		t.Errorf("overflowed recording with --allow-loss: exit %s, want 0 and a warning: %s", rc, msg)
	}
	if reg := read("reg.txt"); !strings.Contains(reg, "registered iotap_cli_p u32 a as user_events/iotap_cli_p") || !strings.Contains(reg, "deleted iotap_cli_p") {
		t.Errorf("register/delete:\n%s", reg)
	}
}

func atoiOr0(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestEventsPerfVM records through perf rings (--perf) in the lab: the
// event shows "perf" in status, three writes come back, no loss.
func TestEventsPerfVM(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	res := vmlab.Run(t, vmlab.Machine{Script: `set +e
iotap events record --perf 'iotap_pf u32 a; __rel_loc char[] s' --json -o /out/rec.json 2>/out/rec.err &
pid=$!
i=0
until iotap events status | grep -q 'iotap_pf .*perf'; do
	i=$((i+1)); [ $i -lt 200 ] || { echo never enabled; cat /out/rec.err; exit 1; }; sleep 0.1
done
iotap events status > /out/status.txt
for i in 1 2 3; do iotap events write iotap_pf a=$i "s=perf $i"; done
kill -INT $pid
wait $pid; echo $? > /out/rec.rc
`})
	if res.ExitCode != 0 {
		t.Fatalf("script exit %d\n%s", res.ExitCode, res.Console)
	}
	read := func(n string) string { return strings.TrimSpace(string(res.ReadOut(t, n))) }
	if rc := read("rec.rc"); rc != "0" || !strings.Contains(read("rec.err"), "recorded 3 event(s), lost 0") {
		t.Fatalf("record --perf exit %s: %s", rc, read("rec.err"))
	}
	if st := read("status.txt"); strings.Contains(st, "ftrace") {
		t.Errorf("--perf touched ftrace:\n%s", st)
	}
	lines := strings.Split(read("rec.json"), "\n")
	if len(lines) != 4 || lines[0] != `{"kind":"input","schema":1,"source":"events","file":null,"format":"perf ring","clock":"perf"}` {
		t.Fatalf("%d lines:\n%s", len(lines), read("rec.json"))
	}
	for i, l := range lines[1:] {
		var ev struct {
			Name   string
			TS     uint64 `json:"ts_ns"`
			PID    int    `json:"tid"`
			Fields map[string]any
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		if ev.Name != "iotap_pf" || ev.TS == 0 || ev.PID <= 0 || ev.Fields["a"] != float64(i+1) || ev.Fields["s"] != "perf "+string(rune('1'+i)) {
			t.Errorf("line %d: %+v", i, ev)
		}
	}
}

// The words of events write's usage errors, found before any kernel
// access.
func TestEventsWriteUsageMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"write", "bad/name"}, `bad event name "bad/name"`},
		{[]string{"write", "--register", "ev u32 a", "other", "a=1"}, `--register names "ev", not "other"`},
		{[]string{"write", "--register", "ev u32 a", "ev", "novalue"}, `"novalue": want field=value`},
		{[]string{"write", "--register", "ev u32", "ev"}, "--register: "},
		{[]string{"write", "--eventheader", "NoEvent"}, `--eventheader: "NoEvent" is not PROVIDER:EVENT`},
		{[]string{"write", "--eventheader", "--level", "0", "P:Ev"}, "--level 0 is not a level (1..255)"},
	} {
		_, _, err := runEvents(t, tc.args...)
		if exitCode(err, &bytes.Buffer{}) != exitUsage || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%q: %v, want a usage error %q", tc.args, err, tc.msg)
		}
	}
}
