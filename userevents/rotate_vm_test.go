package userevents

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/vmlab"
)

// rotateVMEvents is how many events the guest's shell writes: the ground
// truth of what the rotated files must hold.
const rotateVMEvents = 120

// rotateVMScript records iotap_rot twice at once while the shell writes
// n=1..rotateVMEvents: into files of 2 KiB with --interval lines, and into a
// ring of the 2 newest such files.
var rotateVMScript = fmt.Sprintf(`set +e
iotap events record 'iotap_rot u32 n' --json --file-size 2K --interval 200ms -o /tmp/rot.ndjson 2>/out/rot.err &
R=$!
iotap events record 'iotap_rot u32 n' --json --file-size 2K --ring 2 -o /tmp/ring.ndjson 2>/out/ring.err &
G=$!
i=0
until grep -q recording /out/rot.err && grep -q recording /out/ring.err; do
	i=$((i+1)); [ $i -lt 300 ] || { echo never started; exit 1; }; sleep 0.1
done
i=1
while [ $i -le %d ]; do iotap events write --require-enabled iotap_rot n=$i || echo $i >> /out/wfail; i=$((i+1)); done
sleep 1
kill -INT $R $G
wait $R; echo $? > /out/rot.rc
wait $G; echo $? > /out/ring.rc
mkdir -p /out/rot /out/ring
cp /tmp/rot_*.ndjson /out/rot/
cp /tmp/ring_*.ndjson /out/ring/
`, rotateVMEvents)

// gawkEvents is the oracle's reading of the rotated files, in name order:
// the user_event records, the n of each iotap_rot event, in order, and the
// files that do not start with the stream's "input" record.
const gawkEvents = `
FNR == 1 && !/^\{"kind":"input"/ { bad++ }
/^\{"kind":"user_event"/ { lines++ }
match($0, /"name":"iotap_rot".*"n":([0-9]+)/, m) { ns = ns " " m[1] }
END { printf "lines %d\nns%s\nheaderless %d\n", lines, ns, bad }`

// TestRotateVM: on the real kernel, 'events record --file-size 2K' splits
// the recording into files that hold 2 KiB and less than one line more
// (but the last), and together hold every event the shell wrote, each once
// and in order (gawk reads the files); the --interval lines add up to the
// lines gawk counts; --ring 2 keeps the newest 2 files, whose events run
// without a gap to the last.
func TestRotateVM(t *testing.T) {
	if testing.Short() || vmlab.InVM() {
		t.Skip("boots the lab VM")
	}
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk (the oracle) not installed")
	}
	// One 'iotap events write' process per event: slow under TCG.
	res := vmlab.Run(t, vmlab.Machine{Script: rotateVMScript, Timeout: 12 * time.Minute})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	for _, m := range []string{"rot", "ring"} {
		if rc := strings.TrimSpace(string(res.ReadOut(t, m+".rc"))); rc != "0" {
			t.Fatalf("%s recording exited %s: %s", m, rc, res.ReadOut(t, m+".err"))
		}
	}
	if b, err := os.ReadFile(filepath.Join(res.Out, "wfail")); err == nil {
		t.Fatalf("writes of n = %s failed (not enabled)", strings.Fields(string(b)))
	}
	oracle := func(names []string) (lines int, ns []int) {
		t.Helper()
		out, err := exec.Command(gawk, append([]string{gawkEvents}, names...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("gawk: %v\n%s", err, out)
		}
		l := strings.Split(strings.TrimSpace(string(out)), "\n")
		lines, _ = strconv.Atoi(strings.TrimPrefix(l[0], "lines "))
		if len(l) != 3 || l[2] != "headerless 0" {
			t.Errorf("gawk: %q: a file does not start with the input record", l)
		}
		for _, f := range strings.Fields(strings.TrimPrefix(l[1], "ns")) {
			n, _ := strconv.Atoi(f)
			ns = append(ns, n)
		}
		return lines, ns
	}
	names, _ := filepath.Glob(filepath.Join(res.Out, "rot", "rot_*.ndjson"))
	sort.Strings(names)
	if len(names) < 3 {
		t.Fatalf("%d files of 2K", len(names))
	}
	for i, n := range names[:len(names)-1] {
		b := res.ReadOut(t, filepath.Join("rot", filepath.Base(n)))
		longest := 0
		for _, l := range strings.SplitAfter(string(b), "\n") {
			longest = max(longest, len(l))
		}
		if len(b) < 2048 || len(b) >= 2048+longest {
			t.Errorf("file %d: %d bytes for --file-size 2K", i+1, len(b))
		}
	}
	lines, ns := oracle(names)
	if len(ns) != rotateVMEvents || lines != rotateVMEvents {
		t.Errorf("gawk reads %d user_event records, %d iotap_rot events in the files; the shell wrote %d", lines, len(ns), rotateVMEvents)
	}
	for i, n := range ns {
		if n != i+1 {
			t.Fatalf("event %d of the files has n=%d, want %d (lost or written twice)", i+1, n, i+1)
		}
	}
	errText := string(res.ReadOut(t, "rot.err"))
	sum, count := 0, 0
	for _, m := range regexp.MustCompile(`(?m)^\s*[0-9.]+\s+([0-9]+) events\s+[0-9]+ bytes`).FindAllStringSubmatch(errText, -1) {
		v, _ := strconv.Atoi(m[1])
		sum += v
		count++
	}
	if count < 2 || sum != lines {
		t.Errorf("%d --interval lines sum to %d events; gawk counts %d records\n%s", count, sum, lines, errText)
	}
	ring, _ := filepath.Glob(filepath.Join(res.Out, "ring", "ring_*.ndjson"))
	sort.Strings(ring)
	if len(ring) != 2 || strings.Contains(filepath.Base(ring[0]), "_00001_") {
		t.Fatalf("--ring 2 kept %v\n%s", ring, res.ReadOut(t, "ring.err"))
	}
	_, ns = oracle(ring)
	if len(ns) == 0 || ns[len(ns)-1] != rotateVMEvents {
		t.Fatalf("the ring's events %v do not end with n=%d", ns, rotateVMEvents)
	}
	for i := 1; i < len(ns); i++ {
		if ns[i] != ns[i-1]+1 {
			t.Fatalf("the ring's events jump from n=%d to n=%d", ns[i-1], ns[i])
		}
	}
}
