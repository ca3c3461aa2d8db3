package mmiotrace_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// TestCountKindsAwk compares CountKinds and WriteCounts with gawk's count
// of the first word of every line of the lab logs.
func TestCountKindsAwk(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk not installed")
	}
	for _, path := range []string{"../testdata/mmiotrace/e1000-probe.log", "testdata/e1000-bind.log"} {
		out, err := exec.Command(gawk, `{ n[$1]++ } END { for (k in n) print k, n[k]; print "lines", NR }`, path).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			want[f[0]] = f[1]
		}
		r, err := mmiotrace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		counts, err := mmiotrace.CountKinds(r)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		mmiotrace.WriteCounts(&b, r, counts)
		r.Close()
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			f := strings.Fields(l)
			key := strings.TrimSuffix(f[0], ":")
			if key == "lost" || key == "skipped" {
				if f[len(f)-1] != "0" {
					t.Errorf("%s: %q, want 0", path, l)
				}
				continue
			}
			if want[key] != f[len(f)-1] {
				t.Errorf("%s: %q, gawk counts %s", path, l, want[key])
			}
			delete(want, key)
		}
		if len(want) != 0 {
			t.Errorf("%s: kinds gawk sees that WriteCounts leaves out: %v", path, want)
		}
	}
}

// TestFormatterText: the text format writes a kernel log back byte for
// byte; the JSON format writes one object per record.
func TestFormatterText(t *testing.T) {
	data, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		format := mmiotrace.Formatter(asJSON, nil)
		r := mmiotrace.NewReader(bytes.NewReader(data))
		var out []byte
		var rec mmiotrace.Record
		n := 0
		for r.ReadInto(&rec) == nil {
			if out, err = format(out, &rec); err != nil {
				t.Fatal(err)
			}
			n++
		}
		switch {
		case !asJSON && !bytes.Equal(out, data):
			t.Error("the text format does not give the kernel log back")
		case asJSON && bytes.Count(out, []byte("\n")) != n:
			t.Errorf("%d JSON lines for %d records", bytes.Count(out, []byte("\n")), n)
		}
	}
}

// TestReaderLoss cuts a log inside a line: Loss names that line (the
// line count of the cut file plus one, as wc -l counts).
func TestReaderLoss(t *testing.T) {
	data, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:20000]
	if cut[len(cut)-1] == '\n' {
		t.Fatal("the cut falls on a line end")
	}
	r := mmiotrace.NewReader(bytes.NewReader(cut))
	if _, err := mmiotrace.CountKinds(r); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the log is cut: it ends inside line %d, whose record is lost", bytes.Count(cut, []byte("\n"))+1)
	if l := r.Loss(); len(l) != 1 || l[0] != want {
		t.Fatalf("Loss = %q, want %q", l, want)
	}
	if m := mmiotrace.LossMessages(3, 2, fmt.Errorf("line 9: bad"), false, 10); len(m) != 2 ||
		!strings.Contains(m[0], "3 lost events") || m[1] != "2 bad lines skipped (first: line 9: bad)" {
		t.Fatalf("LossMessages = %q", m)
	}
}

func ExampleFormatter() {
	r := mmiotrace.NewReader(strings.NewReader(exampleLog))
	format := mmiotrace.Formatter(true, nil) // NDJSON; false: the kernel's text
	var rec mmiotrace.Record
	var out []byte
	for r.ReadInto(&rec) == nil {
		if rec.Kind == mmiotrace.KindRead {
			out, _ = format(out, &rec)
		}
	}
	fmt.Print(string(out))
	// Output:
	// {"kind":"mmio_access","access":"R","width":4,"ts_ns":8288891000,"map_id":1,"phys":"0xfebc0008","value":"0x80080783","pc":null}
}
