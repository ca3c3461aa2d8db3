package timeline

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabCaptureOrder captures USB, MMIO and user events together with
// 'iotap capture' in the lab while the e1000 is bound and a USB disk is
// read, with a marker written between two actions:
//
//	A: the e1000 probe (MMIO), a read of sectors 800.. of the xHCI disk
//	   (USB), the user event lab_step n=1
//	marker "lab: between" (trace_marker)
//	B: eth0 up (MMIO), a read of sectors 20000.. (USB), lab_step n=2
//
// The merged timeline, aligned with the capture's clocks.json, must put the
// marker after A's events and before B's on every source.
func TestLabCaptureOrder(t *testing.T) {
	res := vmlab.Run(t, vmlab.Machine{USB: true, NIC: true, Script: captureOrderScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d:\n%s", res.ExitCode, res.Console)
	}
	rc := strings.TrimSpace(string(res.ReadOut(t, "capture.rc")))
	if rc != "0" {
		t.Fatalf("iotap capture exited %s:\n%s\n%s", rc, res.ReadOut(t, "capture.err"), res.Console)
	}
	dir := filepath.Join(res.Out, "cap")
	for _, f := range []string{"usb.pcapng", "mmio.log", "events.ndjson", "clocks.json"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("capture did not write %s: %v\n%s", f, err, res.ReadOut(t, "capture.err"))
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	clocks, err := LoadClocks(filepath.Join(dir, "clocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"usb", "mmio", "events"} {
		if _, ok := clocks.Sources[s]; !ok {
			t.Errorf("clocks.json has no offset for %s: %+v\n%s", s, clocks, res.ReadOut(t, "capture.err"))
		}
	}
	// capture wrote each trace's index, the one 'iotap index' makes of the
	// finished file, and cut uses it.
	for _, f := range []string{"usb.pcapng", "mmio.log", "events.ndjson"} {
		p := filepath.Join(dir, f)
		if st, err := os.Stat(p + cut.IndexSuffix); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s%s: %v (want mode 0600)", f, cut.IndexSuffix, err)
			continue
		}
		got, err := os.ReadFile(p + cut.IndexSuffix)
		if err != nil {
			t.Fatal(err)
		}
		in, closer, err := cut.OpenFile(p, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := cut.BuildIndex(context.Background(), in, cut.DefaultInterval)
		closer.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ix.MarshalBinary()
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the index capture wrote (%d bytes) is not the one 'iotap index' makes (%d bytes)", f, len(got), len(want))
		}
		var warns []string
		in, closer, err = cut.OpenFile(p, true, func(m string) { warns = append(warns, m) })
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := timerange.ParseSpec("0.2", "+0.5s")
		res, err := cut.Cut(context.Background(), in, io.Discard, cut.Options{Window: spec, Warn: func(m string) { warns = append(warns, m) }})
		closer.Close()
		if err != nil || !res.Indexed || len(warns) > 0 {
			t.Errorf("%s: cut with the capture's index: indexed %v, %v, warnings %q", f, res != nil && res.Indexed, err, warns)
		}
	}

	tr := checkCaptureOrder(t, []string{
		filepath.Join(dir, "usb.pcapng"), filepath.Join(dir, "mmio.log"), filepath.Join(dir, "events.ndjson"),
	}, clocks)

	// iotap report on the capture directory finds clocks.json and writes
	// the same timeline.
	rep := string(res.ReadOut(t, "report.txt"))
	if rc := strings.TrimSpace(string(res.ReadOut(t, "report.rc"))); rc != "0" {
		t.Errorf("iotap report exited %s:\n%s\n%s", rc, rep, res.ReadOut(t, "report.err"))
	}
	if !strings.Contains(rep, "clocks: /out/cap/clocks.json") || strings.Contains(rep, "not aligned") {
		t.Errorf("report did not align with the capture's clocks:\n%s", rep)
	}
	rtr := decodeTrace(t, res.ReadOut(t, "report.pftrace"))
	if rtr.count(typeSliceBegin) != tr.count(typeSliceBegin) || rtr.count(typeInstant) != tr.count(typeInstant) {
		t.Errorf("report's trace: %d slices, %d instants; timeline's: %d, %d",
			rtr.count(typeSliceBegin), rtr.count(typeInstant), tr.count(typeSliceBegin), tr.count(typeInstant))
	}
	if t.Failed() {
		t.Logf("capture stderr:\n%s", res.ReadOut(t, "capture.err"))
	}
}

// captureOrderScript is the guest side of TestLabCaptureOrder and of
// TestLabRecordCaptureSample: 'iotap capture' of USB, MMIO and a user
// event into /out/cap around two actions with a marker between them, then
// 'iotap report' on the capture in the guest.
const captureOrderScript = `
disk=
for d in /sys/block/sd*; do
	case "$(readlink -f $d)" in *0000:00:04.0*) disk=$(basename $d);; esac
done
[ -n "$disk" ] || { echo "no xHCI disk"; ls -l /sys/block; exit 1; }
echo 3 > /proc/sys/vm/drop_caches
cat > /tmp/actions.sh <<EOS
set -e
dd if=/dev/$disk of=/dev/null bs=512 skip=800 count=8 2>/dev/null
iotap events write lab_step n=1
sleep 0.2
echo 'lab: between' > /sys/kernel/tracing/trace_marker
sleep 0.2
ip link set eth0 up 2>/dev/null || ifconfig eth0 up
dd if=/dev/$disk of=/dev/null bs=512 skip=20000 count=8 2>/dev/null
iotap events write lab_step n=2
sleep 0.2
EOS
iotap capture --usb --mmio --bind 0000:00:03.0 --events 'lab_step u32 n' -o /out/cap -- sh /tmp/actions.sh >/out/capture.out 2>/out/capture.err
echo $? > /out/capture.rc
ls -l /out/cap
iotap report /out/cap -o /out/report.pftrace >/out/report.txt 2>/out/report.err
echo $? > /out/report.rc
`

// checkCaptureOrder exports files (usb, mmio and events of one capture)
// aligned by clocks and checks that the marker "lab: between" lies after
// action A's events and before action B's on every source. It returns the
// decoded trace.
func checkCaptureOrder(t *testing.T, files []string, clocks *Clocks) *dTrace {
	t.Helper()
	var buf bytes.Buffer
	st, err := Export(context.Background(), &buf, files, Options{Clocks: clocks})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Aligned || len(st.Warnings) > 0 {
		t.Errorf("aligned %v, warnings %v", st.Aligned, st.Warnings)
	}
	tr := decodeTrace(t, buf.Bytes())
	checkSlicesNest(t, tr)

	source := func(track uint64) string {
		for id := track; id != 0; id = tr.tracks[id].parent {
			if tr.tracks[id].parent == 0 {
				return strings.Fields(tr.tracks[id].name)[0]
			}
		}
		return ""
	}
	var marker uint64
	markerOn := map[string]bool{}
	for _, e := range tr.events {
		if e.name == "marker" && e.args["text"] == "lab: between" {
			marker = e.ts
			markerOn[source(e.track)] = true
		}
	}
	if marker == 0 || !markerOn["USB"] || !markerOn["MMIO"] || !markerOn["user_events"] {
		t.Fatalf("marker at %d on %v", marker, markerOn)
	}
	var usbA, usbB, evA, evB, mapA, mmioB []uint64
	for _, e := range tr.events {
		req, _ := e.args["request"].(string)
		switch {
		case e.typ == typeSliceBegin && strings.Contains(req, "lba=800 "):
			usbA = append(usbA, e.ts)
		case e.typ == typeSliceBegin && strings.Contains(req, "lba=20000 "):
			usbB = append(usbB, e.ts)
		case e.name == "lab_step" && e.args["n"] == int64(1):
			evA = append(evA, e.ts)
		case e.name == "lab_step" && e.args["n"] == int64(2):
			evB = append(evB, e.ts)
		case e.name == "map" && source(e.track) == "MMIO" && e.ts < marker:
			mapA = append(mapA, e.ts)
		case e.cat == "mmio" && strings.HasPrefix(e.name, "W") && e.ts > marker:
			mmioB = append(mmioB, e.ts)
		}
	}
	t.Logf("marker %d; USB A %v B %v; events A %v B %v; MMIO maps before %d, writes after %d",
		marker, usbA, usbB, evA, evB, len(mapA), len(mmioB))
	check := func(what string, before, after []uint64) {
		if len(before) == 0 || len(after) == 0 {
			t.Errorf("%s: %d events of action A, %d of action B: want both", what, len(before), len(after))
			return
		}
		for _, ts := range before {
			if ts >= marker {
				t.Errorf("%s: an action A event at %d is after the marker at %d", what, ts, marker)
			}
		}
		for _, ts := range after {
			if ts <= marker {
				t.Errorf("%s: an action B event at %d is before the marker at %d", what, ts, marker)
			}
		}
	}
	check("USB", usbA, usbB)
	check("user_events", evA, evB)
	if len(mapA) == 0 || len(mmioB) == 0 {
		t.Errorf("MMIO: %d mappings by the probe before the marker, %d writes by eth0 up after", len(mapA), len(mmioB))
	}

	return tr
}
