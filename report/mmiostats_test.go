package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/iotap/iotap/ksym"
	"github.com/iotap/iotap/mmiotrace"
)

// The e1000's registers are named as Intel's 8254x manual (table 13-2)
// places them: CTRL at 0x0, STATUS at 0x8, EECD at 0x10, MDIC at 0x20;
// --no-names leaves every register unnamed. Reads and writes of each
// register add up to the log's R and W lines.
func TestWriteMMIOStats(t *testing.T) {
	raw, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	st, err := mmiotrace.Analyze(bytes.NewReader(raw), mmiotrace.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	datasheet := map[string]string{"0x0": "CTRL", "0x8": "STATUS", "0x10": "EECD", "0x20": "MDIC"}
	for _, noNames := range []bool{false, true} {
		var out bytes.Buffer
		if err := WriteMMIOStats(&out, st, MMIOStatsOptions{JSON: true, File: "p.log", Top: -1, NoNames: noNames}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !strings.HasPrefix(lines[0], `{"kind":"input","schema":1,"source":"mmio","file":"p.log"`) {
			t.Errorf("first line %s", lines[0])
		}
		var reads, writes int
		seen := 0
		for _, l := range lines {
			var r struct {
				Kind, Offset, Register string
				Reads, Writes          int
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if r.Kind != "mmio_register" {
				continue
			}
			reads, writes = reads+r.Reads, writes+r.Writes
			want := datasheet[r.Offset]
			if noNames {
				want = ""
			}
			if want != "" || noNames {
				if r.Register != want {
					t.Errorf("no names %v: offset %s named %q, want %q", noNames, r.Offset, r.Register, want)
				}
				seen++
			}
		}
		if !noNames && seen != len(datasheet) {
			t.Errorf("%d of the datasheet's %d registers listed", seen, len(datasheet))
		}
		if r, w := strings.Count(string(raw), "\nR "), strings.Count(string(raw), "\nW "); reads != r || writes != w {
			t.Errorf("reads %d writes %d, the log has %d R and %d W lines", reads, writes, r, w)
		}
	}
	var text bytes.Buffer
	if err := WriteMMIOStats(&text, st, MMIOStatsOptions{Top: 3}); err != nil || !strings.Contains(text.String(), "0000:00:03.0/0+0x8       STATUS") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
}

// With symbols, accesses recorded without a PC are a warning whose count
// is gawk's count of R and W lines whose PC field is 0x0; without symbols
// there is none.
func TestWriteMMIOStatsZeroPCWarning(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk (the oracle) not installed")
	}
	const log = "../testdata/mmiotrace/e1000-probe.log"
	out, err := exec.Command(gawk, `($1 == "R" || $1 == "W") && $7 == "0x0" { n++ } END { print n }`, log).Output()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	st, err := mmiotrace.Analyze(bytes.NewReader(raw), mmiotrace.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ksym.Load(strings.NewReader("ffffffffc0000000 t e1000_probe\t[e1000]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*ksym.Table{syms, nil} {
		var warned []string
		opt := MMIOStatsOptions{Symbols: tab, Warn: func(s string) { warned = append(warned, s) }}
		if err := WriteMMIOStats(io.Discard, st, opt); err != nil {
			t.Fatal(err)
		}
		want := []string{"mmio stats: " + strings.TrimSpace(string(out)) + " accesses have no PC (the kernel records PCs only when booted with mmiotrace.trace_pc=1)"}
		if tab == nil {
			want = nil
		}
		if strings.Join(warned, "|") != strings.Join(want, "|") {
			t.Errorf("symbols %v: warnings %q, want %q", tab != nil, warned, want)
		}
	}
}
