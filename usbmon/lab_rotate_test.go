package usbmon

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// labRotateScript records the lab's USB traffic three times at once while
// the guest reads both disks: into files of 16 KiB (all kept), into a ring
// of the 2 newest such files, and into one file with --interval lines.
const labRotateScript = `
lab_wait 60 sh -c 'ls /sys/block | grep -c ^sd | grep -qx 2'
sleep 1
status() { rc=0; wait $1 || rc=$?; echo $rc >/out/$2.rc; }
iotap usb capture --no-inject-descriptors --file-size 16K -o /tmp/rot.pcapng 2>/out/rot.err &
R=$!
iotap usb capture --no-inject-descriptors --file-size 16K --ring 2 -o /tmp/ring.pcapng 2>/out/ring.err &
G=$!
iotap usb capture --no-inject-descriptors --interval 300ms -o /tmp/all.pcapng 2>/out/all.err &
A=$!
# The traffic starts once all three capture: a capture that starts during
# it would miss events the others have (a TCG guest under load can take
# seconds to start one).
lab_wait 60 sh -c 'grep -q "SIGINT stops" /out/rot.err && grep -q "SIGINT stops" /out/ring.err && grep -q "SIGINT stops" /out/all.err'
sleep 1
for d in /sys/block/sd*; do dd if=/dev/${d##*/} of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null; done
sleep 2
kill -INT $R $G $A
status $R rot
status $G ring
status $A all
mkdir -p /out/rot /out/ring
cp /tmp/rot_*.pcapng /out/rot/
cp /tmp/ring_*.pcapng /out/ring/
cp /tmp/all.pcapng /out/
`

// TestLabRotate: on the real kernel, the files of --file-size each read
// on their own in tshark, hold at least 16 KiB and less than one event
// more (but the last), and together hold the events of the one-file
// capture taken at the same time, each once; --ring 2 keeps the 2 newest;
// the --interval lines add up to the events of the one file.
func TestLabRotate(t *testing.T) {
	if testing.Short() {
		t.Skip("boots the lab VM")
	}
	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: labRotateScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, tailLines(res.Console, 40))
	}
	for _, m := range []string{"rot", "ring", "all"} {
		if rc := strings.TrimSpace(string(res.ReadOut(t, m+".rc"))); rc != "0" {
			t.Fatalf("%s capture exited %s: %s", m, rc, res.ReadOut(t, m+".err"))
		}
	}
	// Each reader stamps its own copy of an event (mon_bin_event): events
	// are compared without their time, in order.
	key := func(r []string) string { return strings.Join(r[:9], " ") } // urb id, type, transfer, ep, dev, bus, status, lengths
	all := tshark(t, filepath.Join(res.Out, "all.pcapng"))
	names, _ := filepath.Glob(filepath.Join(res.Out, "rot", "rot_*.pcapng"))
	sort.Strings(names)
	if len(names) < 3 {
		t.Fatalf("%d files of 16K: the traffic did not fill three", len(names))
	}
	rows, perFile := tsharkFiles(t, names)
	var rot []string
	for i, n := range names {
		fi, _ := os.Stat(n)
		if perFile[i] == 0 {
			t.Errorf("%s: tshark reads no event", n)
		}
		// The largest event: 4 KiB of data, its 64-byte header and the
		// pcapng block around it.
		if i < len(names)-1 && (fi.Size() < 16<<10 || fi.Size() >= 16<<10+4096+64+64) {
			t.Errorf("%s: %d bytes for --file-size 16K", filepath.Base(n), fi.Size())
		}
	}
	if sum := sumInts(perFile); sum != len(rows) {
		t.Fatalf("capinfos counts %d events in the files, tshark reads %d of them concatenated", sum, len(rows))
	}
	for _, r := range rows {
		rot = append(rot, key(r))
	}
	// All three captures started before the traffic: the one file's events are
	// a run of the rotated files' sequence, none missing, none twice, for
	// as long as both ran.
	var want []string
	for _, r := range all {
		want = append(want, key(r))
	}
	best, at := 0, -1
	for o := range rot {
		n := 0
		for n < len(want) && o+n < len(rot) && rot[o+n] == want[n] {
			n++
		}
		if n > best {
			best, at = n, o
		}
	}
	overlap := min(len(want), len(rot)-at)
	if at < 0 || best != overlap || best < 100 {
		t.Errorf("the rotated files (%d events) and the one file (%d) agree on %d events from %d, want %d", len(rot), len(want), best, at, overlap)
		if at >= 0 && best < len(want) && at+best < len(rot) {
			// Where they part: the file of the rotated event, and both sides.
			file, n := "", at+best
			for i, c := range perFile {
				if n < c {
					file = fmt.Sprintf("%s (its event %d of %d)", filepath.Base(names[i]), n, c)
					break
				}
				n -= c
			}
			t.Logf("first difference in %s:\n rotated: %v\n one file: %v", file, rot[at+best-1:min(at+best+3, len(rot))], want[best-1:min(best+3, len(want))])
		}
	}
	ring, _ := filepath.Glob(filepath.Join(res.Out, "ring", "ring_*.pcapng"))
	sort.Strings(ring)
	if len(ring) != 2 {
		t.Fatalf("--ring 2 kept %d files: %v", len(ring), ring)
	}
	num := func(p string) int { v, _ := strconv.Atoi(strings.Split(filepath.Base(p), "_")[1]); return v }
	if a, b := num(ring[0]), num(ring[1]); b != a+1 || b < 3 {
		t.Errorf("--ring 2 kept files %d and %d", a, b)
	}
	// The interval lines: TIME EVENTS events BYTES bytes RATE events/s.
	errs := string(res.ReadOut(t, "all.err"))
	var sum, lines int
	for _, m := range regexp.MustCompile(`(?m)^\s*[0-9.]+\s+(\d+) events\s+\d+ bytes`).FindAllStringSubmatch(errs, -1) {
		v, _ := strconv.Atoi(m[1])
		sum += v
		lines++
	}
	total := regexp.MustCompile(`(\d+) events in `).FindStringSubmatch(errs)
	if lines < 5 || total == nil || strconv.Itoa(sum) != total[1] || sum != len(all) {
		t.Errorf("%d interval lines sum to %d events; the capture reports %v, tshark reads %d\n%s", lines, sum, total, len(all), errs)
	}
}

func sumInts(v []int) (s int) {
	for _, x := range v {
		s += x
	}
	return s
}
