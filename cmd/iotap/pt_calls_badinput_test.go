//go:build linux

package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// appendPerfRecords returns perf.data b with records appended to its data
// section (before the feature sections, whose offsets move by as much).
func appendPerfRecords(t *testing.T, b []byte, recs ...[]byte) []byte {
	t.Helper()
	le := binary.LittleEndian
	if string(b[:8]) != "PERFILE2" {
		t.Fatal("not a perf.data")
	}
	dataOff, dataSize := le.Uint64(b[40:]), le.Uint64(b[48:])
	end := dataOff + dataSize
	var add []byte
	for _, r := range recs {
		add = append(add, r...)
	}
	out := append(append(append([]byte(nil), b[:end]...), add...), b[end:]...)
	le.PutUint64(out[48:], dataSize+uint64(len(add)))
	// the feature section table: one {offset, size} per feature bit set
	n := 0
	for i := 72; i < 104; i += 8 {
		for v := le.Uint64(b[i:]); v != 0; v &= v - 1 {
			n++
		}
	}
	tab := end + uint64(len(add))
	for i := 0; i < n; i++ {
		p := tab + uint64(16*i)
		le.PutUint64(out[p:], le.Uint64(out[p:])+uint64(len(add)))
	}
	return out
}

// perfRecord lays out a perf record: header (type, misc, size) and body.
func perfRecord(typ uint32, misc uint16, body []byte) []byte {
	r := binary.LittleEndian.AppendUint32(nil, typ)
	r = binary.LittleEndian.AppendUint16(r, misc)
	r = binary.LittleEndian.AppendUint16(r, uint16(8+len(body)))
	return append(r, body...)
}

// mmap2Record is a user-mode PERF_RECORD_MMAP2 of an executable private
// mapping with the sample_id (TID, TIME, CPU) that ptsynth's attr asks for.
func mmap2Record(pid, tid int32, addr, length uint64, file string, time uint64) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(pid))
	b = le.AppendUint32(b, uint32(tid))
	b = le.AppendUint64(b, addr)
	b = le.AppendUint64(b, length)
	b = le.AppendUint64(b, 0)    // pgoff
	b = le.AppendUint64(b, 0)    // maj, min
	b = le.AppendUint64(b, 1234) // ino
	b = le.AppendUint64(b, 0)    // ino_generation
	b = le.AppendUint32(b, 5)    // PROT_READ|PROT_EXEC
	b = le.AppendUint32(b, 2)    // MAP_PRIVATE
	name := append([]byte(file), 0)
	for len(name)%8 != 0 {
		name = append(name, 0)
	}
	b = append(b, name...)
	b = le.AppendUint32(b, uint32(pid)) // sample_id: pid, tid, time, cpu
	b = le.AppendUint32(b, uint32(tid))
	b = le.AppendUint64(b, time)
	b = le.AppendUint64(b, 0)
	return perfRecord(intelpt.PerfRecordMmap2, 2, b) // PERF_RECORD_MISC_USER
}

// TestPTCallsBadInputStderr: iotap pt calls on perf.data files that are
// cut, hold records of an unknown type, or mappings that overlap the
// program or name files that do not exist. Each problem is one clear line
// on stderr naming what was skipped or lost; the exit status is 3 exactly
// when trace could not be decoded or data was lost (--allow-loss: 0), and
// the summary line still counts what was decoded.
func TestPTCallsBadInputStderr(t *testing.T) {
	perf := synthPerfData(t)
	good, err := os.ReadFile(perf)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := intelpt.PerfSideband(good)
	if err != nil {
		t.Fatal(err)
	}
	// The program's executable mapping (the oracle: the sideband as
	// ptsynth wrote it from /proc/PID/maps).
	var prog *intelpt.SidebandRecord
	for i := range sb.Records {
		r := &sb.Records[i]
		if r.Type == intelpt.PerfRecordMmap2 && r.Executable() && filepath.Base(r.Filename) == "prog" {
			prog = r
		}
	}
	if prog == nil {
		t.Fatal("no executable mapping of prog in the sideband")
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const missing = "/nonexistent/iotap-missing.so"
	progMap := fmt.Sprintf("%x-%x", prog.Addr, prog.Addr+prog.Len)
	summary := regexp.MustCompile(`(?m)^iotap: pt calls: 1 threads, (\d+) instructions, .* (\d+) gaps$`)
	for _, c := range []struct {
		name string
		data []byte
		code int
		// lines that must be on stderr (regular expressions, each a
		// whole line)
		lines []string
		// the summary's instructions: all of them, or fewer
		allInsns bool
	}{
		{"good", good, 0, nil, true},
		{"unknown record types", appendPerfRecords(t, good,
			perfRecord(0x7001, 0, make([]byte, 8)), perfRecord(0x7001, 0, make([]byte, 16)), perfRecord(0x7002, 0, nil)), 0,
			[]string{`iotap: pt calls: sideband: 2 record\(s\) of unknown type 28673 skipped`,
				`iotap: pt calls: sideband: 1 record\(s\) of unknown type 28674 skipped`}, true},
		{"mapping of a missing file", appendPerfRecords(t, good,
			mmap2Record(prog.PID, prog.TID, 0x100000000, 0x2000, missing, prog.Time)), 0,
			[]string{`iotap: pt calls: mapping 100000000-100002000 00000000 ` + missing + ` not decoded: symtab: ` + missing + `: file not found \(tried ` + missing + `\)`}, true},
		{"overlapping mapping of a missing file", appendPerfRecords(t, good,
			mmap2Record(prog.PID, prog.TID, prog.Addr, prog.Len, missing, prog.Time)), 3,
			[]string{`iotap: pt calls: overlapping mapping: pid \d+: ` + progMap + ` 00000000 ` + missing + ` replaces part of ` + progMap + ` [0-9a-f]{8} .*/prog \(the later one is used\)`,
				`iotap: pt calls: mapping ` + progMap + ` 00000000 ` + missing + ` not decoded: .*`,
				`iotap: pt calls: gap: thread \d+ at instruction \d+: .*`,
				`iotap: pt calls: \d+ gaps in the trace \(--allow-loss to accept\)`}, false},
		{"truncated", good[:len(good)*2/3], 3,
			// the build-id table (a feature section after the data) is
			// cut off too: the vDSO cannot be matched by its build-id
			[]string{`iotap: pt calls: mapping [0-9a-f]+-[0-9a-f]+ 00000000 \[vdso\] not decoded: symtab: \[vdso\]: file not found \(not a file, and no build-id is known for it: .*\)`,
				`iotap: pt calls: data lost: the data section \(0x100\+0x[0-9a-f]+\) runs past the end of the file \(\d+ bytes\): file truncated; then offset 0x[0-9a-f]+: AUXTRACE data of \d+ bytes runs past the end of the data: file truncated \(--allow-loss to accept\)`}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(c.name, " ", "-")+".data", c.data)
			_, stderr, code := runUSB(t, "pt", "calls", p)
			t.Logf("stderr:\n%s", stderr)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			for _, l := range c.lines {
				if !regexp.MustCompile(`(?m)^` + l + `$`).MatchString(stderr) {
					t.Errorf("no line %q on stderr", l)
				}
			}
			m := summary.FindStringSubmatch(stderr)
			if m == nil {
				t.Fatalf("no summary line")
			}
			if all := m[1] == fmt.Sprint(countTruth(t, perf)); all != c.allInsns {
				t.Errorf("summary: %s instructions (all of the run's: %v)", m[1], c.allInsns)
			}
			// nothing else: every stderr line is one of the expected ones
			// or the summary
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				ok := l == "" || summary.MatchString(l)
				for _, w := range c.lines {
					ok = ok || regexp.MustCompile(`^`+w+`$`).MatchString(l)
				}
				if !ok {
					t.Errorf("unexpected stderr line %q", l)
				}
			}
			if c.code == 3 {
				if _, stderr, code := runUSB(t, "pt", "calls", "--allow-loss", p); code != 0 {
					t.Errorf("--allow-loss: exit %d: %s", code, stderr)
				}
			}
		})
	}
}

// countTruth is the number of instructions the single-stepped run
// executed (ptsynth's truth.txt beside the perf.data).
func countTruth(t *testing.T, perf string) int {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(perf), "truth.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return len(strings.Fields(string(b)))
}
