package mmiotrace_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/mmiotrace"
)

// checkReads reads a log file on its own with mmiotrace's reader: every
// line parses.
func checkReads(t *testing.T, path string) {
	t.Helper()
	r, err := mmiotrace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	counts, err := mmiotrace.CountKinds(r)
	if err != nil || r.Skipped() > 0 || len(counts) == 0 {
		t.Errorf("%s: %v, %d lines skipped, kinds %v", filepath.Base(path), err, r.Skipped(), counts)
	}
}

// labMarks is how many numbered markers the guest writes during each
// rotated capture: the ground truth of what the files must hold.
const labMarks = 1500

// labMMIORotateScript captures the e1000's probe and labMarks markers
// (written by a shell loop into the marker fifo) twice: into files of
// 16 KiB with --interval lines, and into a ring of the 2 newest such files.
var labMMIORotateScript = fmt.Sprintf(`
cat > /tmp/marks.sh <<'EOS'
i=1; while [ $i -le %[2]d ]; do echo "lab step $i"; i=$((i+1)); done > $1
EOS
rc=0; iotap mmio capture --bind %[1]s --buffer-kb 2048 --marker-fifo /tmp/m1 --file-size 16K --interval 100ms -o /tmp/rot.log -- sh /tmp/marks.sh /tmp/m1 2>/out/rot.err || rc=$?
echo $rc > /out/rot.rc
rc=0; iotap mmio capture --bind %[1]s --buffer-kb 2048 --marker-fifo /tmp/m2 --file-size 16K --ring 2 -o /tmp/ring.log.zst -- sh /tmp/marks.sh /tmp/m2 2>/out/ring.err || rc=$?
echo $rc > /out/ring.rc
mkdir -p /out/rot /out/ring
cp /tmp/rot_*.log /out/rot/
cp /tmp/ring_*.log.zst /out/ring/
`, vmlab.E1000PCI, labMarks)

// gawkOracle is what gawk reads in the files of a rotated log, in name
// order: per file its header lines (VERSION, PCIDEV) before the first
// record, its records, and the numbers of the "lab step N" markers, in
// order, over all files.
const gawkOracle = `
FNR == 1 { nfile++; inhead = 1 }
inhead && /^(VERSION|PCIDEV) / { head[nfile] = head[nfile] $0 "\n"; next }
{ inhead = 0; records++ }
/^MARK / && / lab step [0-9]+$/ { steps = steps " " $NF }
END {
	printf "records %d\n", records
	printf "steps%s\n", steps
	for (i = 2; i <= nfile; i++) if (head[i] != head[1]) printf "header %d differs\n", i
	if (head[1] !~ /^VERSION 20070824\nPCIDEV /) printf "header 1: %s\n", head[1]
}`

// TestLabMMIORotate: on the real kernel, 'mmio capture --file-size 16K'
// splits the log into files that each start with the log's header and
// read on their own (iotap mmio read --check), each holding 16 KiB and
// less than one line more (but the last); the markers the guest wrote are
// all in the files, each once, in order; the --interval lines add up to
// the records gawk counts in the files; --ring 2 keeps the newest 2
// (compressed) files, whose markers run without a gap to the last.
func TestLabMMIORotate(t *testing.T) {
	if testing.Short() {
		t.Skip("boots the lab VM")
	}
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk (the oracle) not installed")
	}
	res := vmlab.Run(t, vmlab.Machine{NIC: true, Script: labMMIORotateScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	for _, m := range []string{"rot", "ring"} {
		if rc := strings.TrimSpace(string(res.ReadOut(t, m+".rc"))); rc != "0" {
			t.Fatalf("%s capture exited %s: %s", m, rc, res.ReadOut(t, m+".err"))
		}
	}
	oracle := func(names []string) (records int, steps []int) {
		t.Helper()
		out, err := exec.Command(gawk, append([]string{gawkOracle}, names...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("gawk: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 {
			t.Errorf("gawk: %s", out)
		}
		records, _ = strconv.Atoi(strings.TrimPrefix(lines[0], "records "))
		for _, f := range strings.Fields(strings.TrimPrefix(lines[1], "steps")) {
			n, _ := strconv.Atoi(f)
			steps = append(steps, n)
		}
		return records, steps
	}

	names, _ := filepath.Glob(filepath.Join(res.Out, "rot", "rot_*.log"))
	sort.Strings(names)
	if len(names) < 3 {
		t.Fatalf("%d files of 16K: the log did not fill three", len(names))
	}
	maxLine := 0
	for i, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.SplitAfter(string(b), "\n") {
			maxLine = max(maxLine, len(l))
		}
		if i < len(names)-1 && (len(b) < 16<<10 || len(b) >= 16<<10+maxLine) {
			t.Errorf("%s: %d bytes for --file-size 16K", filepath.Base(n), len(b))
		}
		checkReads(t, n)
	}
	records, steps := oracle(names)
	if len(steps) != labMarks {
		t.Errorf("%d lab step markers in the files, want %d", len(steps), labMarks)
	}
	for i, s := range steps {
		if s != i+1 {
			t.Fatalf("marker %d of the files is lab step %d, want %d (lost or written twice)", i+1, s, i+1)
		}
	}
	// The --interval lines: "   0.100       123 events     4567 bytes ...".
	ivLine := regexp.MustCompile(`(?m)^\s*[0-9.]+\s+([0-9]+) events\s+([0-9]+) bytes`)
	errText := string(res.ReadOut(t, "rot.err"))
	ivs := ivLine.FindAllStringSubmatch(errText, -1)
	sum := 0
	for _, m := range ivs {
		n, _ := strconv.Atoi(m[1])
		sum += n
	}
	if len(ivs) < 2 || sum != records {
		t.Errorf("%d --interval lines sum to %d records; gawk counts %d in the files\n%s", len(ivs), sum, records, errText)
	}
	if !strings.Contains(errText, "rot_00001_") {
		t.Errorf("stderr names no file:\n%s", errText)
	}

	// The ring: 2 files kept, compressed; gawk reads them decompressed.
	zs, _ := filepath.Glob(filepath.Join(res.Out, "ring", "ring_*.log.zst"))
	sort.Strings(zs)
	if len(zs) != 2 {
		t.Fatalf("--ring 2 kept %d files: %v\n%s", len(zs), zs, res.ReadOut(t, "ring.err"))
	}
	if strings.Contains(filepath.Base(zs[0]), "_00001_") {
		t.Errorf("--ring 2 kept the first file %s", zs[0])
	}
	var plain []string
	for _, z := range zs {
		checkReads(t, z)
		p := strings.TrimSuffix(z, ".zst")
		f, err := os.Open(z)
		if err != nil {
			t.Fatal(err)
		}
		r, c, done, err := mmiotrace.Decompress(f)
		if err != nil || c != mmiotrace.Zstd {
			t.Fatalf("%s: %v, compression %v", z, err, c)
		}
		b, err := io.ReadAll(r)
		done()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p, b, 0o600)
		plain = append(plain, p)
	}
	_, steps = oracle(plain)
	if len(steps) == 0 || steps[len(steps)-1] != labMarks {
		t.Fatalf("the ring's markers %v do not end with lab step %d", steps, labMarks)
	}
	for i := 1; i < len(steps); i++ {
		if steps[i] != steps[i-1]+1 {
			t.Fatalf("the ring's markers jump from %d to %d", steps[i-1], steps[i])
		}
	}
}
