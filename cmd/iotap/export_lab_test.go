package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabCaptureParquet: 'iotap capture --usb --mmio --events ... --parquet
// DIR' in the lab (the e1000 probe, reads of the xHCI disk, two user
// events) writes Parquet that DuckDB reads with the numbers of the
// capture's own files, counted by other tools: USB events by tshark, MMIO
// reads and writes by awk over the log, user events by lines of
// events.ndjson; the identity columns are the guest's (hostname, boot id,
// uname -r).
func TestLabCaptureParquet(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	needDuckDB(t)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed (.ci/run installs it)")
	}
	res := vmlab.Run(t, vmlab.Machine{USB: true, NIC: true, Script: captureParquetScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d:\n%s", res.ExitCode, res.Console)
	}
	if rc := strings.TrimSpace(string(res.ReadOut(t, "capture.rc"))); rc != "0" {
		t.Fatalf("iotap capture --parquet exited %s:\n%s\n%s", rc, res.ReadOut(t, "capture.err"), res.Console)
	}
	cap, pq := filepath.Join(res.Out, "cap"), filepath.Join(res.Out, "pq")

	// The oracles, on the capture's files.
	tshark, err := exec.Command("tshark", "-r", filepath.Join(cap, "usb.pcapng"), "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	usbEvents := bytes.Count(tshark, []byte("\n"))
	log, err := os.ReadFile(filepath.Join(cap, "mmio.log"))
	if err != nil {
		t.Fatal(err)
	}
	awk := exec.Command("awk", `$1 == "R" || $1 == "W" { n++ } END { print n + 0 }`)
	awk.Stdin = bytes.NewReader(log)
	awkOut, err := awk.Output()
	if err != nil {
		t.Fatalf("awk: %v", err)
	}
	var accesses int
	fmt.Sscan(string(awkOut), &accesses)
	ev, err := os.Open(filepath.Join(cap, "events.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	events, labSteps := 0, 0
	for sc := bufio.NewScanner(ev); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), `{"kind":"input",`) {
			continue // NDJSON schema 1's first record names the stream, it is no event
		}
		events++
		if strings.Contains(sc.Text(), `"lab_step"`) {
			labSteps++
		}
	}
	ev.Close()
	if usbEvents < 6 || accesses < 1000 || labSteps != 2 {
		t.Fatalf("the capture is not what the test expects: %d USB events, %d MMIO accesses, %d lab_step events", usbEvents, accesses, labSteps)
	}

	r := duck(t, fmt.Sprintf(`SELECT
  (SELECT count(*) FROM '%[1]s/usb_events/*.parquet') AS usb,
  (SELECT count(*) FROM '%[1]s/mmio_accesses/*.parquet' WHERE access IN ('R', 'W')) AS mmio,
  (SELECT count(*) FROM '%[1]s/user_events/*.parquet') AS events,
  (SELECT count(*) FROM '%[1]s/user_events/*.parquet' WHERE name = 'lab_step') AS lab_steps,
  (SELECT string_agg(DISTINCT host || ' ' || boot_id || ' ' || kernel_release, ',') FROM '%[1]s/captures/*.parquet') AS id,
  (SELECT count(DISTINCT capture_id) FROM '%[1]s/captures/*.parquet') AS captures,
  (SELECT string_agg(source || ':' || (common_offset_ns IS NOT NULL) || ':' || (loss = ''), ',' ORDER BY source) FROM '%[1]s/captures/*.parquet') AS sources`, pq))
	row := r.Rows[0]
	got := fmt.Sprintf("usb %d mmio %d events %d lab_step %d", num(t, row["usb"]), num(t, row["mmio"]), num(t, row["events"]), num(t, row["lab_steps"]))
	want := fmt.Sprintf("usb %d mmio %d events %d lab_step %d", usbEvents, accesses, events, labSteps)
	if got != want {
		t.Errorf("DuckDB over the capture's Parquet: %s; the capture's files: %s", got, want)
	}
	guest := strings.TrimSpace(string(res.ReadOut(t, "identity")))
	if row["id"] != guest || !strings.Contains(guest, "6.") {
		t.Errorf("identity columns %q, the guest says %q", row["id"], guest)
	}
	if num(t, row["captures"]) != 1 || row["sources"] != "events:true:true,mmio:true:true,usb:true:true" {
		t.Errorf("captures table: %d capture ids, sources %v (source:aligned by clocks.json:no loss)", num(t, row["captures"]), row["sources"])
	}
}

const captureParquetScript = `
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
ip link set eth0 up 2>/dev/null || ifconfig eth0 up
iotap events write lab_step n=2
sleep 0.2
EOS
echo "$(hostname) $(cat /proc/sys/kernel/random/boot_id) $(uname -r)" > /out/identity
iotap capture --usb --mmio --bind 0000:00:03.0 --events 'lab_step u32 n' -o /out/cap --parquet /out/pq -- sh /tmp/actions.sh >/out/capture.out 2>/out/capture.err
echo $? > /out/capture.rc
`
