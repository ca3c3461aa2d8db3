package intelpt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// flowNDJSONImage is a small 64-bit program at 0x1000.
func flowNDJSONImage(t testing.TB) *Image {
	code := []byte{
		0x31, 0xc0, // 1000: xor eax, eax
		0x7e, 0x01, // 1002: jle 1005
		0x90,                         // 1004: nop
		0xe8, 0x01, 0x00, 0x00, 0x00, // 1005: call 100b
		0xf4, // 100a: hlt
		0xc3, // 100b: ret
	}
	im := NewImage()
	if _, err := im.Add(code, 0x1000, ASID{CR3: AnyASID, VMCS: AnyASID}, "code"); err != nil {
		t.Fatal(err)
	}
	return im
}

// flowNDJSONTrace runs the program once with a TSC, a paging event and a
// CBR, then enables tracing at an address outside the image (an error).
func flowNDJSONTrace(t testing.TB) []byte {
	var e Encoder
	for _, p := range []Packet{
		{Kind: KindPSB}, {Kind: KindTSC, Payload: 0x1000}, {Kind: KindPIP, Payload: 0xabc000},
		{Kind: KindModeExec, Flags: FlagCSL}, {Kind: KindFUP, IPC: IPCSext48, Payload: 0x1000}, {Kind: KindPSBEnd},
		{Kind: KindCBR, Payload: 36},
		{Kind: KindTNT8, Bits: 2, Payload: 0b11},
		{Kind: KindFUP, IPC: IPCUpdate16, Payload: 0x100a}, {Kind: KindTIPPGD, IPC: IPCSuppressed},
		{Kind: KindPSB}, {Kind: KindPSBEnd},
		{Kind: KindTIPPGE, IPC: IPCSext48, Payload: 0x5000},
		{Kind: KindTNT8, Bits: 1, Payload: 1},
	} {
		e.Encode(p)
	}
	if e.Err() != nil {
		t.Fatal(e.Err())
	}
	return e.Bytes()
}

// TestFlowNDJSONGolden pins 'pt flow --json' byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): the block decoder with
// blocks, times, --stat and a perf.data stream's name, then the
// instruction decoder on a raw trace: instructions, blocks, the events
// (enabled with its TSC, paging, exec mode, cbr, disabled), a decoding
// error and the statistics. That the instructions are ptxed's is
// TestPTFlowLibipt's (cmd/iotap) and FuzzFlowNDJSON's.
func TestFlowNDJSONGolden(t *testing.T) {
	im, trace := flowNDJSONImage(t), flowNDJSONTrace(t)
	var out bytes.Buffer
	out.Write(AppendInputNDJSON(nil, "flow.pt", FormatRaw, ""))
	o := FlowOptions{BlockDecoder: true, ShowBlocks: true, Time: true, Stat: true, JSON: true, EventTime: true, ResyncOnError: true,
		StreamName: "cpu 1", StreamCPU: 1}
	if _, err := FlowListing(&out, trace, FlowConfig{Image: im}, o); err != nil {
		t.Fatal(err)
	}
	o = FlowOptions{JSON: true, StatInsn: true}
	if _, err := FlowListing(&out, trace, FlowConfig{Image: im}, o); err != nil {
		t.Fatal(err)
	}
	// The events whose values the small trace lacks, one of each, and the
	// end of a trace, as the lister prints them.
	l := &flowLister{w: bufio.NewWriter(&out), o: FlowOptions{JSON: true, StreamName: "tid 7", StreamCPU: -1}}
	for _, ev := range []Event{
		{Type: EvExecMode, Mode: Mode64, IP: 0x1000},
		{Type: EvPaging, CR3: 0xabc000, IPSuppressed: true},
		{Type: EvAsyncVMCS, Base: 0x12345000, IP: 0x1000, HasTSC: true, TSC: 99},
		{Type: EvTSX, Speculative: true, IP: 0x1002},
		{Type: EvPTWrite, Payload: 0x42, IP: 0x1005},
		{Type: EvInterrupt, Vector: 14, IP: 0x100b},
		{Type: EvAsyncBranch, At: 0x1002, IP: 0xffffffff81000000},
	} {
		l.printEventJSON(&ev)
	}
	l.printEOT()
	l.w.Flush()
	golden.Check(t, "pt-flow.ndjson", out.Bytes())
}

// FuzzFlowNDJSON: whatever the trace, every line of the JSON listing is a
// JSON object that encoding/json parses, and it says what the text
// listing (ptxed's format, checked against ptxed by the libipt corpus)
// says: the same instruction addresses in order, as many errors with the
// same offsets and IPs, as many events, the same counts; every record
// names the stream.
func FuzzFlowNDJSON(f *testing.F) {
	f.Add(flowNDJSONTrace(f), true, int32(2))
	f.Add(flowNDJSONTrace(f)[:40], false, int32(-1))
	f.Fuzz(func(t *testing.T, trace []byte, block bool, cpu int32) {
		im := flowNDJSONImage(t)
		o := FlowOptions{BlockDecoder: block, Stat: true, ResyncOnError: true}
		var text bytes.Buffer
		st, err := FlowListing(&text, trace, FlowConfig{Image: im}, o)
		if err != nil {
			t.Fatal(err)
		}
		o.JSON, o.StreamName, o.StreamCPU = true, "cpu "+strconv.Itoa(int(cpu)), cpu
		var js bytes.Buffer
		st2, err := FlowListing(&js, trace, FlowConfig{Image: im}, o)
		if err != nil {
			t.Fatal(err)
		}
		if st != st2 {
			t.Fatalf("counts: text %+v, json %+v", st, st2)
		}
		var wantIPs, wantErrs []string
		events := 0
		for _, l := range strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n") {
			switch {
			case l == "" || strings.HasPrefix(l, "insn:") || strings.HasPrefix(l, "blocks:") || l == "[end of trace]":
			case strings.HasPrefix(l, "[") && strings.Count(l, ":") >= 2 && strings.Contains(l, ", "):
				// [offset, ip: what: error]
				f := strings.SplitN(strings.Trim(l, "[]"), ": ", 2)
				wantErrs = append(wantErrs, f[0])
			case strings.HasPrefix(l, "["):
				events++
			default:
				wantIPs = append(wantIPs, strings.TrimLeft(strings.TrimPrefix(l, "? "), "0"))
			}
		}
		var gotIPs, gotErrs []string
		gotEvents := 0
		sc := bufio.NewScanner(&js)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			if r["stream"] != o.StreamName || (cpu < 0) != (r["cpu"] == nil) || cpu >= 0 && r["cpu"] != float64(cpu) {
				t.Fatalf("%s: want stream %q, cpu %d", sc.Text(), o.StreamName, cpu)
			}
			hex := func(k string) string { s, _ := r[k].(string); return strings.TrimPrefix(s, "0x") }
			switch r["kind"] {
			case NDJSONInsn:
				gotIPs = append(gotIPs, strings.TrimLeft(hex("ip"), "0"))
			case NDJSONFlowError:
				gotErrs = append(gotErrs, strconv.FormatUint(uint64(r["offset"].(float64)), 16)+", "+hex("ip"))
			case NDJSONEvent:
				gotEvents++
			case NDJSONFlowStats:
				if r["insns"] != float64(st.Insns) || block != (r["blocks"] != nil) || block && r["blocks"] != float64(st.Blocks) {
					t.Fatalf("%s: want %+v", sc.Text(), st)
				}
			case NDJSONTraceEnd, NDJSONBlock:
			default:
				t.Fatalf("record of kind %v: %s", r["kind"], sc.Text())
			}
		}
		if strings.Join(gotIPs, ",") != strings.Join(wantIPs, ",") || strings.Join(gotErrs, ";") != strings.Join(wantErrs, ";") || gotEvents != events {
			t.Fatalf("text listing:\n%s\njson:\n%s", text.String(), js.String())
		}
	})
}
