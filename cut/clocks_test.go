package cut

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// TestOpenWindowCommonMarks: a window of the lab's capture directory
// from an mmiotrace marker ("lab: between", MARK 7.015921 in mmio.log)
// is placed on the capture's common clock through clocks.json: the USB
// cut holds the frames tshark reads whose frame.time_epoch, plus the usb
// offset, is in the window; the events cut the events whose ts plus the
// events offset is; the mmio cut the accesses stamped in the window on
// the log's clock. Without clocks.json the USB and events traces, which
// hold no such marker, are left out.
func TestOpenWindowCommonMarks(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	const src = "../testdata/capture"
	const markUS, spanNS = 7015921, 500_000_000 // MARK 7.015921 lab: between
	offsets := map[string]int64{"usb": -1795291775000000050, "mmio": -20485622, "events": -21234264}
	// the clocks file says the same (a check of the constants above)
	var cf struct {
		Sources map[string]struct {
			OffsetNS int64 `json:"offset_ns"`
		} `json:"sources"`
	}
	b, err := os.ReadFile(filepath.Join(src, ClocksFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	for k, v := range offsets {
		if cf.Sources[k].OffsetNS != v {
			t.Fatalf("clocks.json: %s offset %d, the test says %d", k, cf.Sources[k].OffsetNS, v)
		}
	}
	common := int64(markUS)*1000 + offsets["mmio"]
	in := func(own int64, src string) bool {
		c := own + offsets[src]
		return c >= common && c < common+spanNS
	}
	spec, err := timerange.ParseSpec("mark:lab: between", "+0.5s")
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWindow(context.Background(), src, spec, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	epochs := func(file string) []int64 { return tsharkEpochs(t, file) }
	var want []int64
	for _, e := range epochs(filepath.Join(src, "usb.pcapng")) {
		if in(e, "usb") {
			want = append(want, e)
		}
	}
	got := epochs(filepath.Join(w.Path, "usb.pcapng"))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("usb: the cut has %d frames %v, tshark's times put %d in the window %v", len(got), got, len(want), want)
	}
	// events: ts + offset in the window
	evs := func(file string, keep bool) (ts []int64) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e struct {
				TS int64 `json:"ts"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatal(err)
			}
			if !keep || in(e.TS, "events") {
				ts = append(ts, e.TS)
			}
		}
		return ts
	}
	if got, want := evs(filepath.Join(w.Path, "events.ndjson"), false), evs(filepath.Join(src, "events.ndjson"), true); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("events: the cut has %v, the window %v", got, want)
	}
	// mmio: accesses stamped in [MARK, +0.5 s) on the log's clock
	plain, err := exec.Command("zstd", "-dc", filepath.Join(src, "mmio.log.zst")).Output()
	if err != nil {
		t.Skipf("zstd: %v", err)
	}
	access := func(log []byte, keep bool) (n int) {
		for _, l := range strings.Split(string(log), "\n") {
			f := strings.Fields(l)
			if len(f) < 3 || (f[0] != "R" && f[0] != "W") {
				continue
			}
			us, _ := strconv.ParseInt(strings.Replace(f[2], ".", "", 1), 10, 64)
			if !keep || (us >= markUS && us < markUS+spanNS/1000) {
				n++
			}
		}
		return n
	}
	cutLog, err := os.ReadFile(filepath.Join(w.Path, "mmio.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := access(cutLog, false), access(plain, true); got != want || want == 0 {
		t.Errorf("mmio: the cut has %d accesses, %d are stamped in the window", got, want)
	}
	// without clocks.json each trace is on its own clock: only mmio has the marker
	dir := filepath.Join(t.TempDir(), "cap")
	os.Mkdir(dir, 0o700)
	for _, f := range []string{"usb.pcapng", "mmio.log.zst", "events.ndjson"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		os.WriteFile(filepath.Join(dir, f), b, 0o600)
	}
	var warned []string
	w2, err := OpenWindow(context.Background(), dir, spec, func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if len(w2.Results) != 1 || filepath.Base(w2.Results[0].Input) != "mmio.log.zst" || len(warned) != 2 {
		t.Errorf("without clocks.json: %d traces cut, warnings %q", len(w2.Results), warned)
	}
	// a name no trace and no clocks.json marker has is a WindowError
	bad, _ := timerange.ParseSpec("mark:nowhere", "")
	if _, err := OpenWindow(context.Background(), src, bad, nil); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("mark:nowhere: %v", err)
	}
}

// TestOpenWindowCommonRelative: seconds from the start on the lab's
// capture directory count from the capture's first timed record on the
// common clock (the earliest of its traces' first records, each plus its
// offset in clocks.json), which the test finds on its own: tshark's first
// frame.time_epoch, the first event's ts, the log's first stamped line.
// Each trace's cut holds exactly its records in [start+1.5s, start+2.5s)
// on the common clock; a per-trace start would cut USB 1.53 s later.
func TestOpenWindowCommonRelative(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	const src = "../testdata/capture"
	offsets := map[string]int64{"usb": -1795291775000000050, "mmio": -20485622, "events": -21234264}
	epochs := func(file string) []int64 { return tsharkEpochs(t, file) }
	evs := func(file string) (ts []int64) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l == "" {
				continue
			}
			var e struct {
				TS int64 `json:"ts"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatal(err)
			}
			ts = append(ts, e.TS)
		}
		return ts
	}
	// the log's stamped lines (R, W, MAP, UNMAP, MARK): stamp in ns
	stamps := func(log []byte, accessOnly bool) (ns []int64) {
		for _, l := range strings.Split(string(log), "\n") {
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			i := 2
			switch f[0] {
			case "R", "W":
			case "MAP", "UNMAP", "MARK":
				if accessOnly {
					continue
				}
				i = 1
			default:
				continue
			}
			us, err := strconv.ParseInt(strings.Replace(f[i], ".", "", 1), 10, 64)
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			ns = append(ns, us*1000)
		}
		return ns
	}
	plain, err := exec.Command("zstd", "-dc", filepath.Join(src, "mmio.log.zst")).Output()
	if err != nil {
		t.Skipf("zstd: %v", err)
	}
	usb, ev, mm := epochs(filepath.Join(src, "usb.pcapng")), evs(filepath.Join(src, "events.ndjson")), stamps(plain, false)
	start := min(usb[0]+offsets["usb"], ev[0]+offsets["events"], mm[0]+offsets["mmio"])
	const fromNS, spanNS = 1_500_000_000, 1_000_000_000
	in := func(own int64, src string) bool {
		c := own + offsets[src]
		return c >= start+fromNS && c < start+fromNS+spanNS
	}
	keep := func(ts []int64, src string) (k []int64) {
		for _, x := range ts {
			if in(x, src) {
				k = append(k, x)
			}
		}
		return k
	}
	if usb[0]+offsets["usb"]-start < fromNS {
		t.Fatalf("the lab capture no longer tells the two rules apart: USB starts %d ns after the capture", usb[0]+offsets["usb"]-start)
	}
	spec, err := timerange.ParseSpec("1.5s", "+1s")
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWindow(context.Background(), src, spec, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, want := epochs(filepath.Join(w.Path, "usb.pcapng")), keep(usb, "usb"); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("usb: the cut has %d frames, %d are in the window on the common clock", len(got), len(want))
	}
	if got, want := evs(filepath.Join(w.Path, "events.ndjson")), keep(ev, "events"); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("events: the cut has %v, the window %v", got, want)
	}
	cutLog, err := os.ReadFile(filepath.Join(w.Path, "mmio.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stamps(cutLog, true), keep(stamps(plain, true), "mmio"); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("mmio: the cut has %d accesses, %d are stamped in the window on the common clock", len(got), len(want))
	}
}

// tsharkEpochs is tshark's frame.time_epoch of every frame of file, in ns
// (exact: tshark prints nine decimals).
func tsharkEpochs(t *testing.T, file string) []int64 {
	t.Helper()
	out, err := exec.Command("tshark", "-r", file, "-T", "fields", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", file, err)
	}
	var ns []int64
	for _, l := range strings.Fields(string(out)) {
		n, err := strconv.ParseInt(strings.Replace(l, ".", "", 1), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, n)
	}
	return ns
}
