package calls

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// TestCallNDJSONGolden pins the pt_call record byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): a call with times converted
// to ns (perf.data with TIME_CONV) and one without (null ns, ticks only),
// with a name that needs escaping.
func TestCallNDJSONGolden(t *testing.T) {
	c := Call{Thread: 4242, Depth: 2, Func: "fib", Entry: 0x401136, Kind: "call", EndReason: "return",
		Begin: 1000, End: 1600, BeginInsn: 10, EndInsn: 52, SelfInsn: 30}
	b := AppendNDJSON(nil, &c, Clock{ToNS: func(tsc uint64) uint64 { return tsc * 2 / 3 }})
	c = Call{Thread: 1, Func: "operator\"\"_x<\t>", Entry: 0xffffffff81000000, Kind: "root", EndReason: "trace-end", End: 5, EndInsn: 3, SelfInsn: 3}
	b = AppendNDJSON(b, &c, Clock{})
	golden.Check(t, "pt-call.ndjson", b)
}

// FuzzCallNDJSON: every pt_call record is one line that encoding/json
// parses, and every value reads back as the call's.
func FuzzCallNDJSON(f *testing.F) {
	f.Add(int32(7), 3, "fib", uint64(0x401136), "call", "return", uint64(100), uint64(250), uint64(5), uint64(90), uint64(40), true)
	f.Add(int32(-1), 0, "\xff\"\\\x01", uint64(1<<63), "root", "gap", uint64(1<<64-1), uint64(0), uint64(0), uint64(0), uint64(0), false)
	f.Fuzz(func(t *testing.T, tid int32, depth int, fn string, entry uint64, kind, reason string, begin, end, bi, ei, self uint64, conv bool) {
		c := Call{Thread: tid, Depth: depth, Func: fn, Entry: entry, Kind: kind, EndReason: reason, Begin: begin, End: end, BeginInsn: bi, EndInsn: ei, SelfInsn: self}
		clk := Clock{}
		if conv {
			clk.ToNS = func(v uint64) uint64 { return v/3 + 7 }
		}
		line := AppendNDJSON(nil, &c, clk)
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("not one line: %q", line)
		}
		var r struct {
			Kind      string  `json:"kind"`
			TID       int32   `json:"tid"`
			Depth     int     `json:"depth"`
			Func      string  `json:"func"`
			Entry     string  `json:"entry"`
			BeginTSC  uint64  `json:"begin_tsc"`
			EndTSC    uint64  `json:"end_tsc"`
			BeginNS   *uint64 `json:"begin_ns"`
			EndNS     *uint64 `json:"end_ns"`
			CallKind  string  `json:"call_kind"`
			EndReason string  `json:"end_reason"`
			Insns     uint64  `json:"insns"`
			SelfInsns uint64  `json:"self_insns"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		text := func(s string) string { // what encoding/json carries for s (invalid UTF-8: U+FFFD)
			j, _ := json.Marshal(s)
			var w string
			json.Unmarshal(j, &w)
			return w
		}
		var e uint64
		if _, err := fmtSscan(r.Entry, &e); err != nil || e != entry {
			t.Fatalf("%s: entry, want %#x", line, entry)
		}
		if r.Kind != NDJSONCall || r.TID != tid || r.Depth != depth || r.Func != text(fn) || r.CallKind != text(kind) || r.EndReason != text(reason) ||
			r.BeginTSC != begin || r.EndTSC != end || r.Insns != ei-bi || r.SelfInsns != self {
			t.Fatalf("%s: want %+v", line, c)
		}
		if conv != (r.BeginNS != nil) || conv != (r.EndNS != nil) || (conv && (*r.BeginNS != clk.ToNS(begin) || *r.EndNS != clk.ToNS(end))) {
			t.Fatalf("%s: ns times, conversion %v", line, conv)
		}
	})
}

// fmtSscan reads a "0x..." hex string.
func fmtSscan(s string, v *uint64) (int, error) { return fmt.Sscanf(s, "0x%x", v) }
