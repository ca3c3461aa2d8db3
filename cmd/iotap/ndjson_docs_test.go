package main

import (
	"bytes"
	"path/filepath"

	"context"
	"encoding/json"
	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/usbmon"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docKinds reads docs/ndjson.md: per record kind, the top-level fields its
// table lists. A table is the run of lines starting with "|"; its kind
// row ("| `kind` | string | `\"usb_event\"` |") names the kinds it
// documents, and the first cell of every row names fields in backquotes.
func docKinds(t *testing.T) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../docs/ndjson.md")
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([a-z0-9_]+)`")
	quoted := regexp.MustCompile("`\"([a-z0-9_]+)\"`")
	kinds := map[string]map[string]bool{}
	var fields []string
	var tkinds []string
	flush := func() {
		for _, k := range tkinds {
			if kinds[k] == nil {
				kinds[k] = map[string]bool{}
			}
			for _, f := range fields {
				kinds[k][f] = true
			}
		}
		fields, tkinds = nil, nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "|") {
			flush()
			continue
		}
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			fields = append(fields, m[1])
		}
		if strings.TrimSpace(cells[1]) == "`kind`" {
			for _, m := range quoted.FindAllStringSubmatch(cells[3], -1) {
				tkinds = append(tkinds, m[1])
			}
		}
	}
	flush()
	return kinds
}

// ndjsonDocCommands are --json command lines over the bundled test data
// whose records, together, carry every field of every kind.
var ndjsonDocCommands = [][]string{
	{"usb", "read", "--json", "../../testdata/usbmon/lab-0u.txt"},
	{"usb", "read", "--json", "../../testdata/usbmon/lab-capture.pcapng"},
	{"usb", "read", "--json", "../../testdata/usbmon/lab-usbmon0.bin"},
	{"usb", "read", "--json", "../../testdata/capture/usb.pcapng"},
	{"usb", "pair", "--json", "--unmatched", "../../testdata/usbmon/lab-capture.0u"},
	{"usb", "stats", "--json", "../../testdata/usbmon/lab-capture.pcapng"},
	{"report", "--json", "../../testdata/usbmon"},
	{"mmio", "read", "--json", "--allow-loss", "../../mmiotrace/testdata/kinds.log"},
	{"mmio", "stats", "--json", "--min-loop", "2", "../../testdata/mmiotrace/e1000-probe.log"},
	{"mmio", "names", "--json", "../../testdata/mmiotrace/e1000-probe.log"},
	{"events", "read", "--json", "../../userevents/testdata/linuxtracepoints/perf.data"},
	{"report", "--json", "../../testdata/capture/events.ndjson"},
	{"doctor", "--json"},
	// events status|list --json read the live tracefs: their golden
	// stream, written by the encoders those commands call.
	{"../../userevents/testdata/golden/user-event-status.ndjson"},
	{"mmio", "replay", "--dry-run", "--json", "--check-reads", "../../testdata/mmiotrace/e1000-probe.log"},
	// a divergence needs a device: the package's golden stream
	{"../../mmiotrace/testdata/golden/mmio-replay.ndjson"},
	{"pt", "dump", "--json", "../../intelpt/testdata/libipt/two-cpus.perf.data"},
	// every PT packet kind, a decoding error, a per-thread stream
	{"../../intelpt/testdata/golden/pt-packet.ndjson"},
	{"pt", "flow", "--json", "--block:show-blocks", "--stat", "--raw", "../../intelpt/testdata/libipt/call_direct-ret_compressed.bin:0x100000",
		"--pt", "../../intelpt/testdata/libipt/call_direct-ret_compressed.pt"},
	// every pt flow record kind and event value
	{"../../intelpt/testdata/golden/pt-flow.ndjson"},
	// timeline --json writes its trace to -o; see the package's golden for a
	// split timeline of every source
	{"../../timeline/testdata/golden/timeline.ndjson"},
}

// TestNDJSONDocs: docs/ndjson.md lists exactly the fields the encoders
// write, kind by kind, and every line of every stream is a JSON object
// whose first key is kind, the first line an "input" record.
func TestNDJSONDocs(t *testing.T) {
	docs := docKinds(t)
	seen := map[string]map[string]bool{}
	rare := rareUSBCapture(t)
	symDir := t.TempDir()
	symLogFile, kallsyms := filepath.Join(symDir, "e.log"), filepath.Join(symDir, "kallsyms")
	os.WriteFile(symLogFile, []byte(symLog), 0o600)
	os.WriteFile(kallsyms, []byte(symKallsyms), 0o600)
	// A polling loop (five reads of STATUS until bit 1 is set), for report.
	pollLog := filepath.Join(symDir, "poll.log")
	os.WriteFile(pollLog, []byte(symLog+"R 4 8.4 1 0xfebc0008 0x0 0x0 0\nR 4 8.5 1 0xfebc0008 0x0 0x0 0\nR 4 8.6 1 0xfebc0008 0x0 0x0 0\n"+
		"R 4 8.7 1 0xfebc0008 0x0 0x0 0\nR 4 8.8 1 0xfebc0008 0x2 0x0 0\nW 4 8.9 1 0xfebc0000 0x1 0x0 0\n"), 0o600)
	// B: one value changed, one access dropped, one added (every op of a diff).
	symLogB := filepath.Join(symDir, "b.log")
	os.WriteFile(symLogB, []byte(strings.NewReplacer(
		"0xfebc00d8 0xffffffff 0xffffffffc0010010", "0xfebc00d8 0x1 0xffffffffc0010010",
		"R 4 8.288892 1 0xfebc0008 0x80080783 0xffffffffc0010420 0\n", "",
		"R 4 8.294408 1 0xfebc0010 0x0 0x0 0\n", "R 4 8.294408 1 0xfebc0010 0x0 0x0 0\nW 2 8.3 1 0xfebc0020 0x5 0x0 0\n").Replace(symLog)), 0o600)
	// A PT trace with PSB gaps, a TSC span and an error (every pt_stats field).
	var pt intelpt.Encoder
	for i := 0; i < 3; i++ {
		pt.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		pt.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: uint64(1000 * (i + 1))})
		pt.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		pt.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 3, Payload: 5})
	}
	ptFile := filepath.Join(symDir, "t.pt")
	os.WriteFile(ptFile, append(pt.Bytes(), 0xd9), 0o600)
	extra := [][]string{{"pt", "stats", "--json", ptFile}, {"report", "--json", ptFile},
		{"timeline", "--json", "../../testdata/capture", "-o", filepath.Join(symDir, "t.pftrace")}}
	for _, f := range ndjsonDocExtra {
		extra = append(extra, f(t))
	}
	for _, args := range append(append(ndjsonDocCommands, extra...),
		[]string{"usb", "read", "--json", rare}, []string{"usb", "pair", "--json", "--unmatched", rare},
		[]string{"mmio", "read", "--json", "--symbols", kallsyms, symLogFile},
		[]string{"mmio", "read", "--json", "--allow-loss", "--symbols", kallsyms, "../../mmiotrace/testdata/kinds.log"},
		[]string{"mmio", "stats", "--json", "--symbols", kallsyms, symLogFile},
		[]string{"mmio", "diff", "--json", "--all", symLogFile, symLogB},
		[]string{"report", "--json", pollLog}) {
		var out, errb bytes.Buffer
		if len(args) == 1 {
			// A package's golden stream (commands that need the live
			// kernel: events status and list).
			b, err := os.ReadFile(args[0])
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
		} else if err := run(context.Background(), args, &out, &errb); err != nil && exitCode(err, &errb) != exitDataLost {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		for i, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%v line %d: %v: %s", args, i+1, err, l)
			}
			if !strings.HasPrefix(l, `{"kind":"`) {
				t.Fatalf("%v line %d does not start with kind: %s", args, i+1, l)
			}
			var kind string
			json.Unmarshal(m["kind"], &kind)
			if i == 0 && kind != "input" {
				t.Errorf("%v: first record is %q, want input", args, kind)
			}
			if seen[kind] == nil {
				seen[kind] = map[string]bool{}
			}
			for k := range m {
				seen[kind][k] = true
			}
		}
	}
	keys := func(m map[string]bool) []string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		sort.Strings(s)
		return s
	}
	for kind, fields := range seen {
		d, ok := docs[kind]
		if !ok {
			t.Errorf("kind %q is written but not in docs/ndjson.md", kind)
			continue
		}
		for f := range fields {
			if !d[f] {
				t.Errorf("%s.%s is written but not in docs/ndjson.md", kind, f)
			}
		}
		for f := range d {
			if !fields[f] {
				t.Errorf("%s.%s is in docs/ndjson.md but no test stream writes it (written: %v)", kind, f, keys(fields))
			}
		}
	}
	for kind := range docs {
		if seen[kind] == nil {
			t.Errorf("kind %q is in docs/ndjson.md but no test stream writes it", kind)
		}
	}
}

// ndjsonDocExtra adds command lines that need a platform's tools (pt
// calls: a perf.data synthesized with gcc on Linux).
var ndjsonDocExtra []func(t *testing.T) []string

// rareUSBCapture writes a pcapng whose events carry the fields the
// bundled captures lack: a synthesized GET_DESCRIPTOR (DEVICE) pair and a
// control request that never completes.
func rareUSBCapture(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rare.pcapng")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := usbmon.NewPcapngWriter(f, usbmon.LinkTypeUSBLinuxMmapped)
	if err != nil {
		t.Fatal(err)
	}
	dev := []byte{18, 1, 0x00, 0x02, 0, 0, 0, 64, 0x27, 0x06, 0x01, 0x00, 0x00, 0x01, 1, 2, 3, 1}
	evs := []usbmon.Event{
		{ID: 1, Type: usbmon.Submission, Transfer: usbmon.Control, In: true, Bus: 1, Device: 2, Status: -115, Length: 18,
			SetupFlag: usbmon.SetupPresent, Setup: [8]byte{0x80, 6, 0, 1, 0, 0, 18, 0}, Synthesized: true},
		{ID: 1, Type: usbmon.Callback, Transfer: usbmon.Control, In: true, Bus: 1, Device: 2, Length: 18,
			DataFlag: usbmon.DataPresent, Data: dev, Synthesized: true},
		{ID: 2, Type: usbmon.Submission, Transfer: usbmon.Control, In: true, Bus: 1, Device: 2, Status: -115, Length: 2,
			SetupFlag: usbmon.SetupPresent, Setup: [8]byte{0x80, 0, 0, 0, 0, 0, 2, 0}},
	}
	for i := range evs {
		evs[i].Sec, evs[i].Usec, evs[i].Fields = 1700000000, int32(i), usbmon.HasWallClock
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return p
}
