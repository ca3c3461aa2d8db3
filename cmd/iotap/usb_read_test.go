package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The third-party captures (see their README for licences).
const usbShared = "../../../shared/testdata/usb"

func usbSharedFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(usbShared, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s absent: %v", p, err)
	}
	return p
}

// usbRun runs iotap in-process and returns stdout, stderr and exit code.
func usbRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// The examples of the kernel's usbmon documentation (usbmon.txt): a hub
// port status read and a mass storage READ_10.
const usbmonDocText = `d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <
d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000
dd65f0e8 4128379752 S Bo:1:005:2 -115 31 = 55534243 ad000000 00800000 80010a28 20000000 20000040 00000000 000000
dd65f0e8 4128379808 C Bo:1:005:2 0 31 >
`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUSBReadText(t *testing.T) {
	p := writeTemp(t, "doc.1u", usbmonDocText)
	out, errs, code := usbRun(t, "usb", "read", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"1 0.000000 S Ci:1:001:0 GET_STATUS port=3 len=4",
		"2 0.000005 C Ci:1:001:0 OK len=4 lat=5µs status=connection|power|high-speed change=0",
		"3 552.465197 S Bo:1:005:2 len=31 CBW tag=0xad lun=1 in 32768: READ_10 lba=32 blocks=64",
		"4 552.465253 C Bo:1:005:2 OK len=31 lat=56µs",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}

func TestUSBReadHexDump(t *testing.T) {
	p := writeTemp(t, "doc.1u", usbmonDocText)
	out, errs, code := usbRun(t, "usb", "read", "-x", "--type", "bulk", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `3 552.465197 S Bo:1:005:2 len=31 CBW tag=0xad lun=1 in 32768: READ_10 lba=32 blocks=64
    0000  55 53 42 43 ad 00 00 00  00 80 00 00 80 01 0a 28  USBC...........(
    0010  20 00 00 00 20 00 00 40  00 00 00 00 00 00 00      ... ..@.......
4 552.465253 C Bo:1:005:2 OK len=31 lat=56µs
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestUSBReadBadText(t *testing.T) {
	p := writeTemp(t, "bad.1u", strings.Replace(usbmonDocText, "d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000", "d5ea89a0 3575914560 C Ci:1:001:0 zz", 1))
	_, errs, code := usbRun(t, "usb", "read", p)
	if code != exitFailure || !strings.Contains(errs, "line 2") {
		t.Errorf("exit %d, stderr %q: want 1 with the line number", code, errs)
	}
	out, errs, code := usbRun(t, "usb", "read", "--keep-going", p)
	if code != exitDataLost || !strings.Contains(errs, "1 unreadable lines skipped") || strings.Count(out, "\n") != 3 {
		t.Errorf("--keep-going: exit %d, stderr %q, %d lines", code, errs, strings.Count(out, "\n"))
	}
	_, _, code = usbRun(t, "usb", "read", "--keep-going", "--allow-loss", p)
	if code != 0 {
		t.Errorf("--allow-loss: exit %d", code)
	}
}

func TestUSBReadTruncated(t *testing.T) {
	src := usbSharedFile(t, "km003c-adc-1000hz.pcapng")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, "cut.pcapng", string(b[:len(b)/2+7]))
	out, errs, code := usbRun(t, "usb", "read", p)
	if code != exitDataLost || out == "" {
		t.Errorf("truncated pcapng: exit %d (want 3), stderr %q", code, errs)
	}
	if _, _, code := usbRun(t, "usb", "stats", "--allow-loss", p); code != 0 {
		t.Errorf("stats --allow-loss: exit %d", code)
	}
}

func TestUSBReadUsage(t *testing.T) {
	p := writeTemp(t, "doc.1u", usbmonDocText)
	for _, args := range [][]string{
		{"usb", "read", "--type", "usbx", p},
		{"usb", "read", "--dir", "sideways", p},
		{"usb", "read", "--vidpid", "12345", p},
		{"usb", "read", "--status", "EWHAT", p},
		{"usb", "read", "--from", "yesterday", p},
		{"usb", "read", "--from", "2026-01-01T00:00:00Z", p}, // text has no wall clock
		{"usb", "stats", "--ep", "16", p},
		{"usb", "pair"},
	} {
		if _, errs, code := usbRun(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d (want 2): %s", args, code, errs)
		}
	}
	if _, _, code := usbRun(t, "usb", "read", filepath.Join(t.TempDir(), "missing")); code != exitFailure {
		t.Errorf("missing file: exit %d", code)
	}
}

type usbJSONLine struct {
	Seq       int    `json:"seq"`
	Type      string `json:"urb_type"`
	Device    int    `json:"dev"`
	Transfer  string `json:"transfer"`
	EP        int    `json:"ep"`
	Status    *int   `json:"status"`
	Summary   string `json:"summary"`
	Request   string `json:"request"`
	VIDPID    string `json:"vidpid"`
	LatencyNs *int64 `json:"latency_ns"`
	SubmitSeq *int   `json:"submit_seq"`
}

// decodeNDJSON decodes the records of a stream after its "input" record
// (docs/ndjson.md), which must be the first line.
func decodeNDJSON[T any](t *testing.T, out string) []T {
	t.Helper()
	var rows []T
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], `{"kind":"input","schema":1,`) {
		t.Fatalf("first line %q: not an input record", lines[0])
	}
	for _, l := range lines[1:] {
		var r T
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// tsharkCount counts the frames of path matching a display filter.
func tsharkCount(t *testing.T, path, filter string) int {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command(tshark, "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", filter, err)
	}
	return strings.Count(string(out), "\n")
}

func TestUSBReadFiltersAgainstTshark(t *testing.T) {
	p := usbSharedFile(t, "km003c-adc-1000hz.pcapng")
	for _, tt := range []struct {
		args   []string
		filter string
	}{
		{nil, "usb"},
		{[]string{"--dev", "6"}, "usb.device_address == 6"},
		{[]string{"--type", "bulk", "--dir", "in"}, "usb.transfer_type == 3 && usb.endpoint_address.direction == 1"},
		{[]string{"--type", "ctrl"}, "usb.transfer_type == 2"},
		{[]string{"--ep", "1", "--dir", "out"}, "usb.endpoint_address == 0x01"},
		{[]string{"--status", "ENOENT"}, "usb.urb_status == -2"},
		{[]string{"--from", "1", "--to", "2.5"}, "frame.time_relative >= 1 && frame.time_relative < 2.5"},
		// The enumeration in the capture identifies device 6.
		{[]string{"--vidpid", "5fc9:0063"}, "usb.device_address == 6 && frame.number >= 2"},
	} {
		args := append([]string{"usb", "read", "--json"}, tt.args...)
		out, errs, code := usbRun(t, append(args, p)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errs)
		}
		n := len(decodeNDJSON[usbJSONLine](t, out))
		if want := tsharkCount(t, p, tt.filter); n != want {
			t.Errorf("%v: %d events, tshark -Y %q: %d", tt.args, n, tt.filter, want)
		}
	}
}

func TestUSBReadJSON(t *testing.T) {
	p := usbSharedFile(t, "km003c-adc-1000hz.pcapng")
	out, errs, code := usbRun(t, "usb", "read", "--json", "--dev", "6", "--type", "ctrl", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := decodeNDJSON[usbJSONLine](t, out)
	if rows[1].Summary != "DEVICE usb=2.10 class=misc/2/1 maxpacket0=32 id=5fc9:0063 rev=1.00 strings=1/4/3 configs=1" ||
		rows[1].VIDPID != "5fc9:0063" || rows[1].SubmitSeq == nil || *rows[1].SubmitSeq != 1 || rows[1].LatencyNs == nil || *rows[1].LatencyNs != 186000 {
		t.Errorf("row 2: %+v", rows[1])
	}
	for _, r := range rows {
		if r.Device != 6 || r.Transfer != "ctrl" || r.Request != "GET_DESCRIPTOR" {
			t.Errorf("filtered row %+v", r)
		}
	}
}

type usbStatsLine struct {
	Kind        string `json:"kind"`
	Device      int    `json:"dev"`
	Endpoint    *int   `json:"ep"`
	VIDPID      string `json:"vidpid"`
	Product     string `json:"product"`
	Completions int    `json:"completions"`
	Bytes       int64  `json:"bytes"`
	Cancelled   int    `json:"cancelled"`
	Latency     struct {
		Count int    `json:"count"`
		Min   *int64 `json:"min_ns"`
		Max   *int64 `json:"max_ns"`
	} `json:"latency"`
	Events  int `json:"events"`
	Pairing struct {
		Pairs   int `json:"pairs"`
		Orphans int `json:"orphan_completions"`
	} `json:"pairing"`
}

// tsharkSum sums an integer field over the frames matching filter.
func tsharkSum(t *testing.T, path, filter, field string) int64 {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command(tshark, "-r", path, "-Y", filter, "-T", "fields", "-e", field).Output()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, l := range strings.Fields(string(out)) {
		v, err := strconv.ParseInt(l, 0, 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		sum += v
	}
	return sum
}

func TestUSBStatsAgainstTshark(t *testing.T) {
	p := usbSharedFile(t, "km003c-adc-1000hz.pcapng")
	out, errs, code := usbRun(t, "usb", "stats", "--json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := decodeNDJSON[usbStatsLine](t, out)
	var dev6 *usbStatsLine
	var summary *usbStatsLine
	for i := range rows {
		switch {
		case rows[i].Kind == "usb_device" && rows[i].Device == 6:
			dev6 = &rows[i]
		case rows[i].Kind == "usb_summary":
			summary = &rows[i]
		}
	}
	if dev6 == nil || summary == nil {
		t.Fatalf("missing rows in\n%s", out)
	}
	if dev6.VIDPID != "5fc9:0063" || dev6.Product != "POWER-Z KM003C" {
		t.Errorf("identity %+v", dev6)
	}
	// Bytes: actual lengths of successful completions.
	if want := tsharkSum(t, p, "usb.device_address == 6 && usb.urb_type == 'C' && usb.urb_status == 0", "usb.urb_len"); dev6.Bytes != want {
		t.Errorf("device 6 bytes %d, tshark %d", dev6.Bytes, want)
	}
	if want := tsharkCount(t, p, "usb.device_address == 6 && usb.urb_type == 'C'"); dev6.Completions != want {
		t.Errorf("device 6 completions %d, tshark %d", dev6.Completions, want)
	}
	if want := tsharkCount(t, p, "usb.device_address == 6 && usb.urb_status == -2"); dev6.Cancelled != want {
		t.Errorf("device 6 cancelled %d, tshark %d", dev6.Cancelled, want)
	}
	if want := tsharkCount(t, p, "usb.urb_type == 'C' && usb.request_in"); summary.Pairing.Pairs != want {
		t.Errorf("pairs %d, tshark %d", summary.Pairing.Pairs, want)
	}
	if want := tsharkCount(t, p, "usb.urb_type == 'C' && !usb.request_in"); summary.Pairing.Orphans != want {
		t.Errorf("orphans %d, tshark %d", summary.Pairing.Orphans, want)
	}
	// Latency extremes are exact: compare with tshark's usb.time.
	if dev6.Latency.Count != summary.Pairing.Pairs-tsharkCount(t, p, "usb.urb_type == 'C' && usb.request_in && usb.device_address != 6") {
		t.Errorf("device 6 latency count %d", dev6.Latency.Count)
	}
	human, _, code := usbRun(t, "usb", "stats", p)
	if code != 0 || !strings.Contains(human, "3:006 5fc9:0063 ChargerLab POWER-Z KM003C") || !strings.Contains(human, "ENOENT×2") {
		t.Errorf("human table:\n%s", human)
	}
}

func TestUSBPairAgainstTshark(t *testing.T) {
	p := usbSharedFile(t, "km003c-pd-capture.pcapng")
	out, errs, code := usbRun(t, "usb", "pair", "--json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	type pairLine struct {
		Kind        string `json:"kind"`
		SubmitSeq   int    `json:"submit_seq"`
		CompleteSeq int    `json:"complete_seq"`
		LatencyNs   int64  `json:"latency_ns"`
	}
	rows := decodeNDJSON[pairLine](t, out)
	if rows[len(rows)-1].Kind != "usb_pair_summary" {
		t.Fatalf("last line %+v", rows[len(rows)-1])
	}
	rows = rows[:len(rows)-1]
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	res, err := exec.Command(tshark, "-r", p, "-Y", "usb.request_in", "-T", "fields", "-e", "frame.number", "-e", "usb.request_in", "-e", "usb.time").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(res)), "\n")
	if len(want) != len(rows) {
		t.Fatalf("%d pairs, tshark %d", len(rows), len(want))
	}
	for i, w := range want {
		f := strings.Fields(w)
		sec, _ := strconv.ParseFloat(f[2], 64)
		got := rows[i]
		if strconv.Itoa(got.CompleteSeq) != f[0] || strconv.Itoa(got.SubmitSeq) != f[1] || got.LatencyNs != int64(sec*1e6+0.5)*1000 {
			t.Errorf("pair %d: %+v, tshark %v", i, got, f)
		}
	}
}

func TestUSBPairUnmatchedAgainstTshark(t *testing.T) {
	for _, name := range []string{"km003c-adc-1000hz.pcapng", "unlicensed-usbrply-test/fx2.cap", "unlicensed-usbrply-test/lin_misc_control.pcap"} {
		t.Run(name, func(t *testing.T) { usbPairUnmatched(t, usbSharedFile(t, name)) })
	}
}

func usbPairUnmatched(t *testing.T, p string) {
	out, errs, code := usbRun(t, "usb", "pair", "--unmatched", "--json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	type line struct {
		Kind      string `json:"kind"`
		State     string `json:"state"`
		SubmitSeq int    `json:"submit_seq"`
	}
	var got []string
	for _, r := range decodeNDJSON[line](t, out) {
		if r.Kind == "usb_unmatched" && (r.State == "superseded" || r.State == "in_flight") {
			got = append(got, strconv.Itoa(r.SubmitSeq))
		}
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	// Two passes: usb.response_in of a submission needs the later frames.
	res, err := exec.Command(tshark, "-2", "-r", p, "-T", "fields", "-e", "frame.number", "-e", "usb.urb_type", "-e", "usb.response_in").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimRight(string(res), "\n"), "\n") {
		f := strings.Split(l, "\t")
		if len(f) == 3 && f[1] == "'S'" && f[2] == "" {
			want = append(want, f[0])
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("unmatched submissions %v, tshark %v", got, want)
	}
}

// The lab's '1t' recording (no bus numbers): addresses are printed the
// way the kernel prints them, and the keyboard's enumeration identifies it.
func TestUSBRead1t(t *testing.T) {
	p := filepath.Join("..", "..", "testdata", "usbmon", "lab-hidbus-t.txt")
	if _, err := os.Stat(p); err != nil {
		t.Skip(err)
	}
	out, errs, code := usbRun(t, "usb", "read", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) < 4 || strings.Count(f[3], ":") != 2 {
			t.Fatalf("address word of %q", l)
		}
	}
	stats, _, code := usbRun(t, "usb", "stats", p)
	if code != 0 || !strings.Contains(stats, "0627:0001 QEMU QEMU USB Keyboa") {
		t.Errorf("stats:\n%s", stats)
	}
}
