package cut

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
)

const (
	mmioLog   = "../testdata/mmiotrace/e1000-probe.log"
	pcapngCap = "../testdata/usbmon/lab-capture.pcapng"
	textCap   = "../testdata/usbmon/lab-0u.txt"
	eventsCap = "../testdata/capture/events.ndjson"
)

func fileInput(t testing.TB, path string) Input {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Name: path, ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
}

func doCut(t testing.TB, in Input, from, to string) ([]byte, *Result) {
	t.Helper()
	spec, err := timerange.ParseSpec(from, to)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Cut(context.Background(), in, &out, Options{Window: spec, Warn: func(m string) { t.Logf("warning: %s", m) }})
	if err != nil {
		t.Fatalf("Cut %s %q..%q: %v", in.Name, from, to, err)
	}
	return out.Bytes(), res
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// The mmiotrace cut against gawk: the accesses of the cut file are the
// lines of the log whose timestamp is in the window, in order; the header
// and the MAP before the window are kept; the mmiotrace reader reads the
// cut without error.
func TestCutMMIOAgainstGawk(t *testing.T) {
	if _, err := exec.LookPath("gawk"); err != nil {
		t.Skip("gawk not installed (apt install gawk)")
	}
	in := fileInput(t, mmioLog)
	for _, w := range []struct{ from, to string }{
		{"@12.3", "@12.5"},
		{"0.5", "0.7"},            // relative to the first timed line (11.829418)
		{"mark:vmlab: e1000", ""}, // prefix of "vmlab: e1000 bound"
		{"mark:vmlab: unbind", "mark:vmlab: e1000 bound"},
		{"", "@12.0"},
		{"@99", ""}, // empty: headers only
	} {
		out, res := doCut(t, in, w.from, w.to)
		lo, hi := "-1", "1e18"
		if res.Window.HasFrom {
			lo = fmt.Sprintf("%.9f", float64(res.Window.From)/1e9)
		}
		if res.Window.HasTo {
			hi = fmt.Sprintf("%.9f", float64(res.Window.To)/1e9)
		}
		// R/W have the stamp in $3, MARK in $2.
		prog := fmt.Sprintf(`(($1=="R"||$1=="W") && $3+0 >= %s && $3+0 < %s) || ($1=="MARK" && $2+0 >= %s && $2+0 < %s)`, lo, hi, lo, hi)
		want := run(t, "gawk", prog, mmioLog)
		cutPath := writeTemp(t, "cut.log", out)
		got := run(t, "gawk", `$1=="R"||$1=="W"||$1=="MARK"`, cutPath)
		if got != want {
			t.Errorf("%s..%s: cut has %d access/marker lines, gawk selects %d", w.from, w.to, strings.Count(got, "\n"), strings.Count(want, "\n"))
		}
		if int64(strings.Count(want, "\n")) != res.Events {
			t.Errorf("%s..%s: Events %d, gawk %d", w.from, w.to, res.Events, strings.Count(want, "\n"))
		}
		if !bytes.HasPrefix(out, []byte("VERSION 20070824\nPCIDEV")) {
			t.Errorf("%s..%s: header not kept: %.40q", w.from, w.to, out)
		}
		// The MAP before the window stays while the window is after it.
		if res.Window.HasFrom && res.Window.From > 12222895000 && !bytes.Contains(out, []byte("\nMAP 12.222895 1 0xfebc0000")) {
			t.Errorf("%s..%s: MAP line dropped", w.from, w.to)
		}
		r := mmiotrace.NewReader(bytes.NewReader(out))
		n := 0
		for {
			if _, err := r.Read(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s..%s: reading the cut: %v", w.from, w.to, err)
			}
			n++
		}
		if int64(n) != res.Kept {
			t.Errorf("%s..%s: reader sees %d records, cut kept %d", w.from, w.to, n, res.Kept)
		}
	}
}

// The pcapng cut against tshark: the packets of the cut are those tshark
// selects with a display filter on the input, and tshark reads the cut.
func TestCutPcapngAgainstTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed (apt install tshark)")
	}
	in := fileInput(t, pcapngCap)
	first := run(t, "tshark", "-r", pcapngCap, "-c", "1", "-T", "fields", "-e", "frame.time_epoch")
	t0 := strings.TrimSpace(first)
	for _, w := range []struct{ from, to string }{
		{"0.5", "1.5"},
		{"", "0.2"},
		{"@" + t0, "+1ms"},
		{"100", "200"}, // after the end: an empty capture
	} {
		out, res := doCut(t, in, w.from, w.to)
		lo := float64(res.Window.From) / 1e9
		filter := fmt.Sprintf("frame.time_epoch >= %.6f", lo)
		if !res.Window.HasFrom {
			filter = "frame.time_epoch >= 0"
		}
		if res.Window.HasTo {
			filter += fmt.Sprintf(" && frame.time_epoch < %.6f", float64(res.Window.To)/1e9)
		}
		want := run(t, "tshark", "-r", pcapngCap, "-Y", filter, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "usb.urb_id")
		cutPath := writeTemp(t, "cut.pcapng", out)
		got := run(t, "tshark", "-r", cutPath, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "usb.urb_id")
		if got != want {
			t.Errorf("%s..%s: cut has %d packets, tshark selects %d", w.from, w.to, strings.Count(got, "\n"), strings.Count(want, "\n"))
		}
		if int64(strings.Count(want, "\n")) != res.Events {
			t.Errorf("%s..%s: Events %d, tshark %d", w.from, w.to, res.Events, strings.Count(want, "\n"))
		}
		// iotap's reader reads it back with the same number of events.
		r, _, err := usbmon.NewReader(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s..%s: %v", w.from, w.to, err)
		}
		n := 0
		var ev usbmon.Event
		for {
			if err := r.ReadInto(&ev); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s..%s: reading the cut: %v", w.from, w.to, err)
			}
			n++
		}
		if int64(n) != res.Events {
			t.Errorf("%s..%s: usbmon reader reads %d events, cut wrote %d", w.from, w.to, n, res.Events)
		}
	}
}

// usbmon text: the lines of the cut are those whose stamp (µs) is in the
// window, selected by gawk.
func TestCutUSBText(t *testing.T) {
	in := fileInput(t, textCap)
	out, res := doCut(t, in, "0.05", "0.2")
	if _, err := exec.LookPath("gawk"); err == nil {
		first := strings.Fields(run(t, "gawk", "NR==1", textCap))[1]
		prog := fmt.Sprintf(`$2 - %s >= 50000 && $2 - %s < 200000`, first, first)
		want := run(t, "gawk", prog, textCap)
		if string(out) != want {
			t.Errorf("cut differs from gawk's selection: %d vs %d lines", bytes.Count(out, []byte("\n")), strings.Count(want, "\n"))
		}
	}
	r, f, err := usbmon.NewReader(bytes.NewReader(out))
	if err != nil || f != usbmon.Format1u {
		t.Fatalf("%v %v", f, err)
	}
	n := 0
	for {
		if _, err := r.Read(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if int64(n) != res.Events || n == 0 {
		t.Errorf("reader %d events, cut %d", n, res.Events)
	}
}

// Text stamps wrap at 4096 s: a window after a wrap is found.
func TestCutUSBTextWrap(t *testing.T) {
	lines := []string{
		"ffff0001 4095000000 S Ci:1:002:0 s 80 06 0100 0000 0012 18 <",
		"ffff0001 4095500000 C Ci:1:002:0 0 18 = 12010002 00000040",
		"ffff0002 0000100 S Ci:1:002:0 s 80 06 0200 0000 0009 9 <", // 4096.0001 s
		"ffff0002 2000000 C Ci:1:002:0 0 9 = 09022000 010100a0 32", // 4098 s
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	in := Input{Name: "wrap", ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
	out, _ := doCut(t, in, "@4096", "@4097")
	if string(out) != lines[2]+"\n" {
		t.Errorf("got %q", out)
	}
	out, _ = doCut(t, in, "1", "")
	if string(out) != lines[2]+"\n"+lines[3]+"\n" {
		t.Errorf("relative: got %q", out)
	}
}

// user_events NDJSON: by marker and relative times.
func TestCutEvents(t *testing.T) {
	in := fileInput(t, eventsCap)
	data, _ := os.ReadFile(eventsCap)
	lines := strings.SplitAfter(string(data), "\n")
	out, res := doCut(t, in, "mark:iotap capture start", "mark:iotap capture end")
	if string(out) != lines[0]+lines[1]+lines[2] || res.Events != 3 {
		t.Errorf("marker window: %q", out)
	}
	out, _ = doCut(t, in, "1.6", "2.2") // lab_step 1 is at 1.608558548 s
	if string(out) != lines[1]+lines[2] {
		t.Errorf("relative window: %q", out)
	}
	spec, _ := timerange.ParseSpec("mark:nope", "")
	if _, err := Cut(context.Background(), in, io.Discard, Options{Window: spec}); err == nil || !strings.Contains(err.Error(), "no marker") {
		t.Errorf("missing marker: %v", err)
	}
	spec, _ = timerange.ParseSpec("2026-01-01T00:00:00Z", "")
	if _, err := Cut(context.Background(), in, io.Discard, Options{Window: spec}); err == nil || !strings.Contains(err.Error(), "no wall-clock") {
		t.Errorf("wall clock on events: %v", err)
	}
}

// The R/W fast path gives the stamp the mmiotrace parser gives.
func TestRWStamp(t *testing.T) {
	data, err := os.ReadFile(mmioLog)
	if err != nil {
		t.Fatal(err)
	}
	var rec mmiotrace.Record
	n := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(l) < 2 || (l[0] != 'R' && l[0] != 'W') {
			continue
		}
		ts, ok := rwStamp(l)
		if err := mmiotrace.ParseLine(l, &rec); err != nil || !ok || ts != int64(rec.Time.NS) {
			t.Fatalf("%q: fast %d %v, parser %d %v", l, ts, ok, rec.Time.NS, err)
		}
		n++
	}
	for _, bad := range []string{"R 4 12 0x1", "R x 1.5 ", "W 4 1.5", "R 4 1.1234567890 1"} {
		if _, ok := rwStamp([]byte(bad)); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if n < 1000 {
		t.Fatalf("%d lines", n)
	}
}
