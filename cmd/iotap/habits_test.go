package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// -c N prints exactly the first N records the same command prints without
// it (tshark -c), exits 0 and leaves valid output (every --json line parses).
func TestReadCount(t *testing.T) {
	usbText := "../../testdata/usbmon/lab-0u.txt"
	usbPcapng := "../../testdata/usbmon/lab-capture.pcapng"
	mmioLog := "../../testdata/mmiotrace/e1000-probe.log"
	ptTrace := writePTTrace(t)
	cases := []struct {
		name string
		args []string // without -c
		n    int
		json bool
	}{
		{"usb text", []string{"usb", "read", usbText}, 3, false},
		{"usb pcapng json", []string{"usb", "read", "--json", usbPcapng}, 5, true},
		{"usb filtered", []string{"usb", "read", "--dir", "in", "--type", "bulk", usbText}, 4, false},
		{"usb one", []string{"usb", "read", usbPcapng}, 1, false},
		{"usb more than all", []string{"usb", "read", usbText}, 1 << 30, false},
		{"mmio text", []string{"mmio", "read", mmioLog}, 7, false},
		{"mmio json", []string{"mmio", "read", "--json", mmioLog}, 10, true},
		{"usb pair", []string{"usb", "pair", usbPcapng}, 3, false},
		{"usb pair json", []string{"usb", "pair", "--json", usbText}, 4, true},
		{"pt dump", []string{"pt", "dump", ptTrace}, 6, false},
		{"pt dump json", []string{"pt", "dump", "--json", ptTrace}, 5, true},
		{"pt dump more than all", []string{"pt", "dump", ptTrace}, 1 << 20, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full, errs, code := usbRun(t, c.args...)
			if code != 0 {
				t.Fatalf("without -c: exit %d: %s", code, errs)
			}
			all := strings.SplitAfter(full, "\n")
			all = all[:len(all)-1] // after the last newline
			head := ""
			if c.json && strings.HasPrefix(full, `{"kind":"input"`) { // not counted by -c
				head, all = all[0], all[1:]
			}
			want := head + strings.Join(all[:min(c.n, len(all))], "")
			if c.n < len(all) && c.n <= 10 && len(all) < 2*c.n {
				t.Fatalf("sample too small for -c %d: %d records", c.n, len(all))
			}
			args := append([]string{c.args[0], c.args[1], "-c", strconv.Itoa(c.n)}, c.args[2:]...)
			got, errs, code := usbRun(t, args...)
			if code != 0 {
				t.Fatalf("-c %d: exit %d: %s", c.n, code, errs)
			}
			if got != want {
				t.Errorf("-c %d: got\n%s\nwant the first %d records:\n%s", c.n, got, c.n, want)
			}
			if n := strings.Count(got[len(head):], "\n"); n != min(c.n, len(all)) {
				t.Errorf("-c %d: %d lines", c.n, n)
			}
			if c.json {
				for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
					var v map[string]any
					if err := json.Unmarshal([]byte(l), &v); err != nil {
						t.Errorf("line %q: %v", l, err)
					}
				}
			}
			// The long form is the same flag.
			args[2] = "--count"
			if got2, _, _ := usbRun(t, args...); got2 != got {
				t.Errorf("--count differs from -c")
			}
		})
	}
}

// USB captures compressed by the gzip, xz and zstd tools (installed by
// .ci/run) read, count and pair exactly as the uncompressed file: the
// compression is found from the content, so the names carry no extension.
func TestUSBCompressedInputs(t *testing.T) {
	tools := [][]string{{"gzip", "-c"}, {"xz", "-c"}, {"zstd", "-q", "-c"}}
	for _, f := range []string{"../../testdata/usbmon/lab-0u.txt", "../../testdata/usbmon/lab-capture.pcapng", "../../testdata/usbmon/lab-usbmon0.bin"} {
		for _, tool := range tools {
			if _, err := exec.LookPath(tool[0]); err != nil {
				t.Fatalf("%s not installed (.ci/run installs it): %v", tool[0], err)
			}
			z, err := exec.Command(tool[0], append(tool[1:], f)...).Output()
			if err != nil {
				t.Fatalf("%s %s: %v", tool[0], f, err)
			}
			zp := filepath.Join(t.TempDir(), filepath.Base(f)+"-"+tool[0]+"-noext")
			if err := os.WriteFile(zp, z, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range [][]string{{"usb", "read"}, {"usb", "read", "--json"}, {"usb", "stats"}, {"usb", "stats", "--json"}, {"usb", "pair"}} {
				want, werr, wcode := usbRun(t, append(cmd, f)...)
				got, gerr, gcode := usbRun(t, append(cmd, zp)...)
				if wcode != 0 && !strings.Contains(f, "usbmon0.bin") {
					t.Fatalf("%v %s: exit %d: %s", cmd, f, wcode, werr)
				}
				// the "input" record names the file read
				got = strings.Replace(got, `"file":"`+zp+`"`, `"file":"`+f+`"`, 1)
				if got != want || gcode != wcode || strings.ReplaceAll(gerr, zp, f) != werr {
					t.Errorf("%v on %s output of %s differs from the plain file (exit %d vs %d)\nstderr %q vs %q", cmd, tool[0], f, gcode, wcode, gerr, werr)
				}
			}
			// convert: the same pcapng from the compressed input.
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.pcapng"), filepath.Join(dir, "b.pcapng")
			_, e1, c1 := usbRun(t, "usb", "convert", "--to", "pcapng", "-o", a, f)
			_, e2, c2 := usbRun(t, "usb", "convert", "--to", "pcapng", "-o", b, zp)
			ab, _ := os.ReadFile(a)
			bb, _ := os.ReadFile(b)
			if c1 != c2 || string(ab) != string(bb) {
				t.Errorf("usb convert of %s %s: exit %d vs %d, %d vs %d bytes (%s / %s)", tool[0], f, c2, c1, len(bb), len(ab), e2, e1)
			}
		}
	}
}

// writePTTrace writes a small raw Intel PT trace (three PSB+ sections and
// a few packets each) to a temporary file.
func writePTTrace(t *testing.T) string {
	var enc intelpt.Encoder
	for i := 0; i < 3; i++ {
		for _, p := range []intelpt.Packet{
			{Kind: intelpt.KindPSB}, {Kind: intelpt.KindTSC, Payload: uint64(1000 * (i + 1))},
			{Kind: intelpt.KindFUP, IPC: intelpt.IPCFull, Payload: 0x401000}, {Kind: intelpt.KindPSBEnd},
			{Kind: intelpt.KindTNT8, Bits: 5, Payload: 0x11}, {Kind: intelpt.KindTIP, IPC: intelpt.IPCUpdate16, Payload: 0x1234},
			{Kind: intelpt.KindPad},
		} {
			enc.Encode(p)
		}
	}
	if enc.Err() != nil {
		t.Fatal(enc.Err())
	}
	p := filepath.Join(t.TempDir(), "trace.pt")
	if err := os.WriteFile(p, enc.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// usb stats -c N counts the first N events (after the filters) only.
func TestUSBStatsCount(t *testing.T) {
	in := "../../testdata/usbmon/lab-capture.pcapng"
	events := func(args ...string) float64 {
		out, errs, code := usbRun(t, append([]string{"usb", "stats", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("usb stats %v: exit %d %s", args, code, errs)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var v map[string]any
			if json.Unmarshal([]byte(l), &v) == nil && v["kind"] == "usb_summary" {
				return v["events"].(float64)
			}
		}
		t.Fatalf("no summary in %s", out)
		return 0
	}
	all := events(in)
	if all < 20 {
		t.Fatalf("sample too small: %v events", all)
	}
	if n := events("-c", "7", in); n != 7 {
		t.Errorf("-c 7 counted %v events (of %v)", n, all)
	}
	if n := events("-c", "7", "--dir", "in", in); n != 7 {
		t.Errorf("-c 7 --dir in counted %v events", n)
	}
	if n := events("-c", "100000", in); n != all {
		t.Errorf("-c beyond the end counted %v of %v events", n, all)
	}
}
