package perfdata

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
)

// perfNames are perf's names of the record types perf script -D prints.
var perfNames = map[uint32]string{
	1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 5: "THROTTLE", 6: "UNTHROTTLE", 7: "FORK", 8: "READ", 9: "SAMPLE",
	10: "MMAP2", 11: "AUX", 12: "ITRACE_START", 13: "LOST_SAMPLES", 14: "SWITCH", 15: "SWITCH_CPU_WIDE",
	16: "NAMESPACES", 17: "KSYMBOL", 18: "BPF_EVENT", 19: "CGROUP", 20: "TEXT_POKE", 21: "AUX_OUTPUT_HW_ID",
	64: "ATTR", 66: "TRACING_DATA", 67: "BUILD_ID", 68: "FINISHED_ROUND", 69: "ID_INDEX",
	70: "AUXTRACE_INFO", 71: "AUXTRACE", 72: "AUXTRACE_ERROR", 73: "THREAD_MAP", 74: "CPU_MAP", 75: "STAT_CONFIG",
	76: "STAT", 77: "STAT_ROUND", 78: "EVENT_UPDATE", 79: "TIME_CONV", 80: "FEATURE", 82: "FINISHED_INIT",
}

var perfDRecord = regexp.MustCompile(`\[0x([0-9a-f]+)\]: PERF_RECORD_([A-Z0-9_]+)`)

// records returns the records of f as "NAME size" strings, sorted.
func records(t *testing.T, f *File) (recs []string, compressed uint64) {
	t.Helper()
	rd := f.Records()
	defer rd.Close()
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n, ok := perfNames[r.Type]
		if !ok {
			n = fmt.Sprintf("type_%d", r.Type)
		}
		recs = append(recs, fmt.Sprintf("%s %d", n, len(r.Data)))
	}
	sort.Strings(recs)
	return recs, rd.Compressed()
}

// TestRecordsAgainstPerf records with perf record, plain and -z (one zstd
// stream across compressed records), file and pipe mode, and checks that
// the records read (inflated for -z) are those perf script -D prints:
// the same types and sizes, as multisets (perf prints them in time
// order). Pipe mode is read both as a file and as a stream.
func TestRecordsAgainstPerf(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed (apt-get install linux-perf)")
	}
	for _, c := range []struct {
		name string
		pipe bool
		z    bool
	}{{"file", false, false}, {"file-z", false, true}, {"pipe-z", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "perf.data")
			args := []string{"record", "-q", "-e", "cpu-clock", "--switch-events", "-o", out}
			if c.pipe {
				args[len(args)-1] = "-"
			}
			if c.z {
				args = append(args, "-z")
			}
			cmd := exec.Command(perf, append(args, "--", "/bin/sh", "-c", "/bin/true; ls / >/dev/null")...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if c.pipe {
				fh, err := os.Create(out)
				if err != nil {
					t.Fatal(err)
				}
				defer fh.Close()
				cmd.Stdout = fh
			}
			if err := cmd.Run(); err != nil {
				t.Skipf("perf record cannot record here: %v: %s", err, stderr.Bytes())
			}
			script, err := exec.Command(perf, "script", "-D", "-i", out).Output()
			if err != nil {
				t.Fatalf("perf script -D: %v", err)
			}
			var want []string
			for _, m := range perfDRecord.FindAllStringSubmatch(string(script), -1) {
				size, _ := strconv.ParseUint(m[1], 16, 64)
				want = append(want, fmt.Sprintf("%s %d", m[2], size))
			}
			sort.Strings(want)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			f, err := OpenBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			if f.Pipe != c.pipe || f.Truncated != "" {
				t.Fatalf("pipe %v, truncated %q", f.Pipe, f.Truncated)
			}
			got, compressed := records(t, f)
			if c.z != (compressed > 0) {
				t.Errorf("-z %v: %d compressed records", c.z, compressed)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("records differ from perf script -D's:\n ours %v\n perf %v", got, want)
			}
			if c.pipe {
				s, err := OpenStream(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if sg, _ := records(t, s); fmt.Sprint(sg) != fmt.Sprint(got) {
					t.Errorf("read as a stream: %v, as a file %v", sg, got)
				}
			}
			t.Logf("%d records, %d compressed", len(got), compressed)
		})
	}
}

// FuzzReader reads any bytes as a perf.data in memory, through an
// io.ReaderAt and as a stream: no panic; the same records each way;
// every error an *Error at an offset inside the input; records and their
// payloads inside the input. Seed: testdata/cpu-clock-z.data (perf record
// -z of a software event).
func FuzzReader(f *testing.F) {
	if b, err := os.ReadFile("testdata/cpu-clock-z.data"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(err error) {
			var pe *Error
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) || pe.Offset < 0 || pe.Offset > int64(len(b)) {
				t.Fatalf("error %v (%T)", err, err)
			}
		}
		read := func(f *File, payloads bool) ([]string, error) {
			var recs []string
			rd := f.Records()
			defer rd.Close()
			for i := 0; i < 1<<14; i++ {
				r, err := rd.Next()
				if err == io.EOF {
					return recs, nil
				}
				if err != nil {
					check(err)
					return recs, err
				}
				if !r.Inflated && (r.Offset < 0 || r.Offset+int64(len(r.Data)) > int64(len(b))) {
					t.Fatalf("record at %d+%d outside %d bytes", r.Offset, len(r.Data), len(b))
				}
				recs = append(recs, fmt.Sprintf("%d %d %x", r.Type, r.Offset, r.Data))
				if payloads && r.PayloadSize > 0 {
					p, err := rd.Payload()
					if err != nil {
						check(err)
						return recs, err
					}
					if int64(len(p)) != r.PayloadSize {
						t.Fatalf("payload of %d bytes, record says %d", len(p), r.PayloadSize)
					}
				}
			}
			return recs, nil
		}
		mem, err := OpenBytes(b)
		if err != nil {
			check(err)
			return
		}
		for _, s := range mem.Sections {
			if s.Offset < 0 || s.Size < 0 || s.Offset+s.Size > int64(len(b)) {
				t.Fatalf("section %+v outside %d bytes", s, len(b))
			}
		}
		a, aerr := read(mem, false)
		ra, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("Open: %v; OpenBytes opened it", err)
		}
		c, cerr := read(ra, true)
		if fmt.Sprint(a) != fmt.Sprint(c) && aerr == nil && cerr == nil {
			t.Fatalf("OpenBytes and Open read different records")
		}
		if mem.Pipe {
			s, err := OpenStream(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("OpenStream: %v", err)
			}
			d, derr := read(s, false)
			if fmt.Sprint(a) != fmt.Sprint(d) && aerr == nil && derr == nil {
				t.Fatalf("OpenBytes and OpenStream read different records")
			}
		}
	})
}
