package regdb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// awkBARs is the gawk oracle's own reading of the PCIDEV lines (devfn,
// vendor/device, irq, 7 bases, 7 sizes, driver: the kernel's
// mmio_trace_record format) into BAR ranges, and of each access into its
// PCI address, BAR index, offset and driver; register names come from the
// e1000 datasheet (CTRL 0x0, STATUS 0x8, ICR 0xc0, IMS 0xd0, RCTL 0x100,
// TCTL 0x400).
const awkBARs = `
$1 == "PCIDEV" {
	devfn = strtonum("0x" $2)
	for (i = 0; i < 6; i++) {
		base = strtonum("0x" $(5+i)); size = strtonum("0x" $(12+i))
		if (size == 0 || and(base, 1)) continue
		n++; lo[n] = base - and(base, 15); hi[n] = lo[n] + size; idx[n] = i; drv[n] = $19
		pci[n] = sprintf("0000:%02x:%02x.%x", rshift(devfn, 8), and(rshift(devfn, 3), 31), and(devfn, 7))
	}
}
{ bar = -1; off = -1; dev = ""; driver = "" }
$1 == "R" || $1 == "W" || $1 == "UNKNOWN" {
	a = strtonum($5)
	for (j = 1; j <= n; j++) if (a >= lo[j] && a < hi[j]) { bar = idx[j]; off = a - lo[j]; dev = pci[j]; driver = drv[j] }
}
`

// TestFilterAgreesWithGawk: on the bundled e1000 probe log, every
// expression selects the lines gawk's condition selects.
func TestFilterAgreesWithGawk(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk not installed")
	}
	const log = "../testdata/mmiotrace/e1000-probe.log"
	cases := []struct{ ours, awk string }{
		{`mmio.kind == "W" && mmio.width == 4`, `$1 == "W" && $2 == 4`},
		{`mmio.type == "R" && mmio.addr >= 0xfebc0100 && mmio.phys < 0xfebc0200`, `$1 == "R" && strtonum($5) >= 0xfebc0100 && strtonum($5) < 0xfebc0200`},
		{`mmio.value == 0x40140240`, `($1 == "R" || $1 == "W") && strtonum($6) == 0x40140240`},
		{`mmio.value > 0x80000000 && mmio.kind == "W"`, `$1 == "W" && strtonum($6) > 0x80000000`},
		{`mmio.bar == 0 && mmio.offset == 0x8`, `bar == 0 && off == 8`},
		{`mmio.reg == "CTRL"`, `driver == "e1000" && bar == 0 && off == 0`},
		{`mmio.reg == "STATUS" || mmio.register == "ICR" || mmio.reg == "IMS"`, `driver == "e1000" && bar == 0 && (off == 8 || off == 0xc0 || off == 0xd0)`},
		{`(mmio.reg == "RCTL" || mmio.reg == "TCTL") && mmio.kind == "W"`, `$1 == "W" && driver == "e1000" && bar == 0 && (off == 0x100 || off == 0x400)`},
		{`mmio.domain == "E1000" && mmio.kind == "W" && !(mmio.offset < 0x100)`, `$1 == "W" && driver == "e1000" && bar == 0 && off >= 0x100`},
		{`mmio.driver == "e1000" && mmio.pci == "0000:00:03.0" && mmio.kind == "R"`, `$1 == "R" && driver == "e1000" && dev == "0000:00:03.0"`},
		{`mmio.kind == "MARK" && mmio.text contains "bound"`, `$1 == "MARK" && index($0, "bound") > 0`},
		{`mmio.kind == "R" && mmio.time_ns >= 12500000000 && mmio.time_ns < 12600000000`, `$1 == "R" && $3 >= 12.5 && $3 < 12.6`},
		{`mmio.map_id == 1 && mmio.kind != "R"`, `($1 == "W" && $4 == 1) || ($1 == "MAP" && $3 == 1)`},
		{`mmio.kind == "MAP" && mmio.len == 0x20000`, `$1 == "MAP" && strtonum($6) == 0x20000`},
		{`!mmio.pc && mmio.kind == "W"`, `$1 == "W" && strtonum($7) == 0`},
		{`!(mmio.kind == "R" || mmio.kind == "W")`, `$1 != "R" && $1 != "W"`},
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		cmd := exec.Command(gawk, awkBARs+c.awk+" { print }", log)
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("gawk %s: %v", c.awk, err)
		}
		keep, err := ParseFilter(c.ours, &Binder{})
		if err != nil {
			t.Fatalf("%s: %v", c.ours, err)
		}
		rd := mmiotrace.NewReader(bytes.NewReader(data))
		var got bytes.Buffer
		var rec mmiotrace.Record
		total := 0
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			total++
			if keep(&rec) {
				got.Write(rec.Line)
				got.WriteByte('\n')
			}
		}
		n := bytes.Count(want, []byte("\n"))
		if got.String() != string(want) {
			t.Errorf("%s: %d lines, gawk's %s: %d\n%s", c.ours, bytes.Count(got.Bytes(), []byte("\n")), c.awk, n, firstDiff(got.String(), string(want)))
		} else if n == 0 || n == total {
			t.Errorf("%s selects %d of %d records: the case tests nothing", c.ours, n, total)
		}
	}
}

func firstDiff(a, b string) string {
	sa, sb := bufio.NewScanner(strings.NewReader(a)), bufio.NewScanner(strings.NewReader(b))
	for i := 1; ; i++ {
		oa, ob := sa.Scan(), sb.Scan()
		if !oa && !ob {
			return ""
		}
		if sa.Text() != sb.Text() || oa != ob {
			return fmt.Sprintf("first difference at selected line %d:", i) + "\nours: " + sa.Text() + "\ngawk: " + sb.Text()
		}
	}
}

// docs/filters.md lists every MMIO field.
func TestFilterFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/filters.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range FilterFields(&Binder{}, nil).Fields() {
		if !bytes.Contains(doc, []byte("| `"+f.Name+"` |")) {
			t.Errorf("docs/filters.md has no row for %s", f.Name)
		}
	}
}
