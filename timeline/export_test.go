package timeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

func repoTestdata(name string) string { return filepath.Join("..", "testdata", name) }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func export(t *testing.T, paths []string, opt Options) (*Stats, []byte) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Export(context.Background(), &buf, paths, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st, buf.Bytes()
}

// countLines counts the lines of a text file starting with one of prefixes.
func countLines(t *testing.T, path string, prefixes ...string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, p := range prefixes {
			if strings.HasPrefix(sc.Text(), p) {
				n++
			}
		}
	}
	return n
}

// usbExpect reads a usbmon capture and counts what its timeline must show.
func usbExpect(t *testing.T, path string) (submissions, orphans int, endpoints map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, _, err := usbmon.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	// URB ids are reused kernel pointers: a completion closes the pending
	// submission of its key, if any (usb.Pairer's model).
	pending := map[usb.Key]bool{}
	endpoints = map[string]bool{}
	for {
		ev, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch k := usb.KeyOf(ev); ev.Type {
		case usbmon.Submission:
			submissions++
			pending[k] = true
		case usbmon.Callback:
			if !pending[k] {
				orphans++
			}
			delete(pending, k)
		}
		ep := ev.EndpointAddress()
		if ev.Transfer == usbmon.Control {
			ep &= 0x7f
		}
		endpoints[string(rune(ev.Bus))+string(rune(ev.Device))+string(rune(ep))+ev.Transfer.String()] = true
	}
	return submissions, orphans, endpoints
}

const eventsNDJSON = `{"name":"app_req","ts":100,"cpu":0,"pid":42,"fields":{"id":7,"path":"/dev/sda","ok":true}}
{"name":"iotap_marker","ts":150,"cpu":1,"pid":42,"fields":{"text":"between"}}
{"name":"app_req","ts":200,"cpu":0,"pid":42,"fields":{"id":8,"path":"/dev/sdb","big":18446744073709551615}}
{"name":"app_done","system":"other","ts":300,"cpu":0,"pid":42,"fields":{}}
`

// eventsNDJSONSchema1 is eventsNDJSON in NDJSON schema 1 (docs/ndjson.md):
// an input record, then user_event records with ts_ns, and tid for the
// task id the older shape called pid.
const eventsNDJSONSchema1 = `{"kind":"input","schema":1,"source":"events","file":null,"format":"tracefs","clock":"trace"}
{"kind":"user_event","ts_ns":100,"wall_ns":null,"cpu":0,"tid":42,"pid":null,"system":"user_events","name":"app_req","fields":{"id":7,"path":"/dev/sda","ok":true}}
{"kind":"user_event","ts_ns":150,"wall_ns":null,"cpu":1,"tid":42,"pid":null,"system":"user_events","name":"iotap_marker","fields":{"text":"between"}}
{"kind":"user_event","ts_ns":200,"wall_ns":null,"cpu":0,"tid":42,"pid":null,"system":"user_events","name":"app_req","fields":{"id":8,"path":"/dev/sdb","big":18446744073709551615}}
{"kind":"user_event","ts_ns":300,"wall_ns":null,"cpu":0,"tid":42,"pid":null,"system":"other","name":"app_done","fields":{}}
`

// TestExportCounts checks the tracks, slices and instants of a timeline
// of the lab samples against counts taken from the inputs themselves,
// with the user events in NDJSON schema 1 and in the shape before it.
func TestExportCounts(t *testing.T) {
	t.Run("schema1", func(t *testing.T) { exportCounts(t, eventsNDJSONSchema1) })
	t.Run("before-schema1", func(t *testing.T) { exportCounts(t, eventsNDJSON) })
}

func exportCounts(t *testing.T, events string) {
	dir := t.TempDir()
	usbPath := repoTestdata("usbmon/lab-capture.pcapng")
	mmioPath := repoTestdata("mmiotrace/e1000-probe.log")
	evPath := writeFile(t, dir, "events.ndjson", events)
	var warned []string
	st, out := export(t, []string{usbPath, mmioPath, evPath}, Options{Warn: func(s string) { warned = append(warned, s) }})
	tr := decodeTrace(t, out)
	checkSlicesNest(t, tr)

	subs, orphans, endpoints := usbExpect(t, usbPath)
	accesses := countLines(t, mmioPath, "R ", "W ")
	marks := countLines(t, mmioPath, "MARK ")
	eventMarkers := 1

	if got := tr.count(typeSliceBegin); got != subs {
		t.Errorf("%d slices, want one per USB submission: %d", got, subs)
	}
	if got := tr.count(typeSliceEnd); got != subs {
		t.Errorf("%d slice ends, want %d", got, subs)
	}
	byName := map[string]int{}
	byCat := map[string]int{}
	for _, e := range tr.events {
		if e.typ == typeInstant {
			byName[e.name]++
			byCat[e.cat]++
		}
	}
	if byName["orphan completion"] != orphans {
		t.Errorf("%d orphan completions drawn, the capture has %d", byName["orphan completion"], orphans)
	}
	rw := 0
	for name, n := range byName {
		if name == "R" || name == "W" || strings.HasPrefix(name, "R ") || strings.HasPrefix(name, "W ") {
			rw += n
		}
	}
	if rw != accesses {
		t.Errorf("%d MMIO access instants, the log has %d R/W lines", rw, accesses)
	}
	if byName["R STATUS"] == 0 || byName["W IMC"] == 0 {
		t.Errorf("e1000 registers not named by the shipped database: %v", byName)
	}
	// every marker is shown on the 3 inputs' tracks and the markers track
	if got, want := byName["marker"], (marks+eventMarkers)*4; got != want {
		t.Errorf("%d marker instants, want %d", got, want)
	}
	if byName["app_req"] != 2 || byName["app_done"] != 1 {
		t.Errorf("user events: %v", byName)
	}

	// Tracks: markers + 3 inputs + per USB endpoint one lane at least,
	// per event name one track.
	lanes := 0
	eventTracks := map[string]bool{}
	for _, id := range tr.order {
		p := tr.path(id)
		if strings.HasPrefix(p, "USB ") && strings.Contains(p, "/ep ") && !strings.Contains(p, " #") {
			lanes++
		}
		if strings.HasPrefix(p, "user_events ") && strings.Count(p, "/") == 1 {
			eventTracks[p[strings.LastIndex(p, "/")+1:]] = true
		}
	}
	if lanes != len(endpoints) {
		t.Errorf("%d endpoint tracks, the capture has %d endpoints", lanes, len(endpoints))
	}
	if len(eventTracks) != 2 || !eventTracks["app_req"] || !eventTracks["other:app_done"] {
		t.Errorf("event tracks %v", eventTracks)
	}
	if st.Inputs[1].Named != int64(accesses) || st.Inputs[1].Accesses != int64(accesses) {
		t.Errorf("mmio stats %+v", *st.Inputs[1])
	}
	if st.Aligned || len(warned) == 0 || !strings.Contains(warned[0], "no clocks file") {
		t.Errorf("no warning about unaligned sources: %v", warned)
	}
	// arguments of a user event
	for _, e := range tr.events {
		if e.name == "app_req" {
			if e.args["id"] != int64(7) || e.args["path"] != "/dev/sda" || e.args["ok"] != true || e.args["tid"] != int64(42) || e.args["pid"] != nil {
				t.Errorf("event args %v", e.args)
			}
			break
		}
	}
	// a control transfer carries its decoded request
	found := false
	for _, e := range tr.events {
		if e.typ == typeSliceBegin && e.name == "GET_DESCRIPTOR" {
			found = e.args["setup"] != nil && e.args["request"] != nil
			break
		}
	}
	if !found {
		t.Error("no GET_DESCRIPTOR slice with its decoded request")
	}

	text := protocDecode(t, out)
	if got := strings.Count(text, "type: TYPE_SLICE_BEGIN"); got != subs {
		t.Errorf("protoc: %d slice begins, want %d", got, subs)
	}
	if got := strings.Count(text, "track_descriptor {"); got != len(tr.tracks) {
		t.Errorf("protoc: %d track descriptors, Go decoder %d", got, len(tr.tracks))
	}
	if got := strings.Count(text, "type: TYPE_INSTANT"); got != tr.count(typeInstant) {
		t.Errorf("protoc: %d instants, Go decoder %d", got, tr.count(typeInstant))
	}
}

// order returns the names of the instants of the trace in time order,
// keeping only those in keep.
func order(tr *dTrace, keep func(e dEvent) bool) []string {
	var s []string
	for _, e := range tr.events {
		if keep(e) {
			s = append(s, e.name)
		}
	}
	return s
}

// TestExportClocks merges three sources with a clocks file and checks
// that a marker written between two actions lands between their events on
// every source, and that without the file each source starts at 0.
func TestExportClocks(t *testing.T) {
	dir := t.TempDir()
	// ftrace clock: seconds since boot
	mmio := writeFile(t, dir, "mmio.log", `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 10.000000 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
R 4 10.100000 1 0xfebc0008 0x80080783 0x0 0
MARK 10.200000 iotap: step
W 4 10.300000 1 0xfebc00d8 0xffffffff 0x0 0
`)
	// user_events: same ftrace clock, nanoseconds
	ev := writeFile(t, dir, "ev.ndjson", `{"name":"before","ts":10150000000,"cpu":0,"pid":1,"fields":{}}
{"name":"after","ts":10250000000,"cpu":0,"pid":1,"fields":{}}
`)
	// usbmon text: monotonic µs modulo 4096 s; the stamps wrap between
	// the two transfers.
	usbText := writeFile(t, dir, "usb.0u", `ff1fd9fc028359c0 4095900000 S Bo:1:002:2 -115 31 = 55534243 0d000000 00400000 80000a28 00000000 00000020 00000000 000000
ff1fd9fc028359c0 4095950000 C Bo:1:002:2 0 31 >
ff1fd9fc028359c0 50000 S Bo:1:002:2 -115 31 = 55534243 0e000000 00400000 80000a28 00000000 00000020 00000000 000000
ff1fd9fc028359c0 60000 C Bo:1:002:2 0 31 >
`)
	// USB's monotonic clock is 5 s behind the ftrace clock; its stamps
	// are taken modulo 4096 s.
	clocks := &Clocks{Common: "ftrace local", Sources: map[string]SourceClock{
		"mmio":   {Clock: "local"},
		"events": {Clock: "local"},
		"usb.0u": {Clock: "usbmon-text", OffsetNS: 10_150_000_000 - 4_095_950_000_000},
	}, Markers: []Marker{{Name: "clock marker", NS: 10_275_000_000}}}
	var cb bytes.Buffer
	if err := WriteClocks(&cb, clocks); err != nil {
		t.Fatal(err)
	}
	cpath := writeFile(t, dir, "clocks.json", cb.String())
	c, err := LoadClocks(cpath)
	if err != nil {
		t.Fatal(err)
	}
	st, out := export(t, []string{mmio, ev, usbText}, Options{Clocks: c})
	if !st.Aligned || len(st.Warnings) != 0 {
		t.Errorf("aligned %v, warnings %v", st.Aligned, st.Warnings)
	}
	tr := decodeTrace(t, out)
	checkSlicesNest(t, tr)
	top := map[uint64]string{}
	for id, trk := range tr.tracks {
		if trk.parent == 0 {
			top[id] = trk.name
		}
	}
	got := order(tr, func(e dEvent) bool {
		return e.name != "map" && (e.typ == typeInstant || e.typ == typeSliceBegin) && (e.name != "marker" || top[e.track] == "markers")
	})
	// USB at 10.10 s (submission) and, after the stamps wrapped, 10.25 s;
	// at equal times the inputs keep their command-line order.
	want := []string{"R STATUS", "bulk OUT", "before", "marker", "after", "bulk OUT", "marker", "W IMC"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("order %v, want %v", got, want)
	}
	// the second USB transfer, after the wrap
	var usbTS []uint64
	for _, e := range tr.events {
		if e.typ == typeSliceBegin {
			usbTS = append(usbTS, e.ts)
		}
	}
	if len(usbTS) != 2 || usbTS[1]-usbTS[0] != 150_000_000 {
		t.Errorf("USB slices at %v: the text stamp wrap is not undone", usbTS)
	}
	// a marker is on every source's track
	markerTracks := map[string]bool{}
	for _, e := range tr.events {
		if e.name == "marker" && e.args["text"] == "iotap: step" {
			markerTracks[tr.path(e.track)] = true
		}
	}
	if len(markerTracks) != 4 {
		t.Errorf("marker on tracks %v, want the 3 inputs and markers", markerTracks)
	}

	// Without the clocks file: each input starts at 0, with a warning.
	st, out = export(t, []string{mmio, ev}, Options{})
	if st.Aligned || len(st.Warnings) == 0 {
		t.Errorf("aligned %v, warnings %v", st.Aligned, st.Warnings)
	}
	tr = decodeTrace(t, out)
	first := map[string]uint64{}
	for _, e := range tr.events {
		for id := e.track; id != 0; id = tr.tracks[id].parent {
			if tr.tracks[id].parent == 0 {
				if _, ok := first[tr.tracks[id].name]; !ok {
					first[tr.tracks[id].name] = e.ts
				}
			}
		}
	}
	if first["MMIO mmio.log"] != 0 || first["user_events ev.ndjson"] != 0 {
		t.Errorf("first events %v, want 0 for each source", first)
	}
}

// TestExportLanes: URBs in flight together on one endpoint go on lanes so
// that slices nest; a resubmitted id ends the lost one; pending ones end
// at the end of the capture.
func TestExportLanes(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "lanes.0u", `a0 1000 S Bi:1:002:1 -115 512 <
a1 2000 S Bi:1:002:1 -115 512 <
a0 3000 C Bi:1:002:1 0 512 = 00000000
a2 3500 S Bi:1:002:1 -115 512 <
a2 3600 S Bi:1:002:1 -115 512 <
a1 4000 C Bi:1:002:1 0 512 = 00000000
a3 5000 C Bi:1:002:1 0 512 = 00000000
`)
	st, out := export(t, []string{p}, Options{})
	tr := decodeTrace(t, out)
	checkSlicesNest(t, tr)
	in := st.Inputs[0]
	if in.Slices != 4 || in.Unmatched != 2 || in.Orphans != 1 {
		t.Errorf("stats %+v", *in)
	}
	lanes := map[string]bool{}
	for _, e := range tr.events {
		if e.typ == typeSliceBegin {
			lanes[tr.tracks[e.track].name] = true
		}
	}
	if !lanes["ep 1 IN bulk"] || !lanes["ep 1 IN bulk #2"] || len(lanes) != 2 {
		t.Errorf("lanes %v", lanes)
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "x.txt", "hello world\n")
	var buf bytes.Buffer
	if _, err := Export(context.Background(), &buf, []string{bad}, Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown format: %v", err)
	}
	ev := writeFile(t, dir, "ev.ndjson", `{"name":"a","ts":1,"cpu":0,"pid":1,"fields":{}}
{"name":"b","cpu":0}
`)
	if _, err := Export(context.Background(), &buf, []string{ev}, Options{}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad record: %v", err)
	}
	if _, err := Export(context.Background(), &buf, []string{filepath.Join(dir, "missing")}, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadClocks(strings.NewReader(`{"sources":{"usb":{"offset":1}}}`)); !errors.Is(err, ErrClocks) {
		t.Errorf("unknown clocks field: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := writeFile(t, dir, "big.ndjson", strings.Repeat(`{"name":"a","ts":1,"cpu":0,"pid":1,"fields":{}}`+"\n", 10000))
	if _, err := Export(ctx, &buf, []string{big}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestExportClocksMissingSource(t *testing.T) {
	dir := t.TempDir()
	ev := writeFile(t, dir, "ev.ndjson", `{"name":"a","ts":5,"cpu":0,"pid":1,"fields":{}}`+"\n")
	mmio := writeFile(t, dir, "m.log", "VERSION 20070824\nR 4 1.000000 1 0xfebc0008 0x1 0x0 0\n")
	var warned []string
	st, _ := export(t, []string{ev, mmio}, Options{
		Clocks: &Clocks{Sources: map[string]SourceClock{"events": {OffsetNS: 7}}},
		Warn:   func(s string) { warned = append(warned, s) },
	})
	if st.Aligned || len(warned) != 1 || !strings.Contains(warned[0], "m.log: no clock for this input") {
		t.Errorf("aligned %v, warnings %q", st.Aligned, warned)
	}
	if st.Inputs[0].OffsetNS != 7 || st.Inputs[1].OffsetNS != -1e9 {
		t.Errorf("offsets %d %d", st.Inputs[0].OffsetNS, st.Inputs[1].OffsetNS)
	}
}
